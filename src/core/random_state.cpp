#include "core/random_state.h"

#include <mutex>

namespace xlite::random_state {
namespace {
struct Generator {
  std::mutex mutex;
  Position position{67280421310721ull, 0};
};
Generator& generator() {
  static Generator g;
  return g;
}
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

void reseed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.position = {seed, 0};
}

}  // namespace xlite::random_state
