#include "core/random_state.h"

#include <mutex>
#include <string>

#include "core/runtime_context.h"

namespace xlite::random_state {
namespace {
struct Generator final : RuntimeState {
  mutable std::mutex mutex;
  Position position{67280421310721ull, 0};
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return "seed " + std::to_string(position.seed) + ", offset " + std::to_string(position.offset);
  }
};
Generator& generator() { return runtime_context::state<Generator>("random"); }
}  // namespace

Position current() {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  return g.position;
}

Position take(uint64_t blocks) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  Position taken = g.position;
  g.position.offset += blocks;
  return taken;
}

void advance(uint64_t blocks) { take(blocks); }

void seek(Position position) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.position = position;
}

void reseed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.position = {seed, 0};
}

}  // namespace xlite::random_state
