#include "core/runtime_context.h"

#include <mutex>

namespace xlite::runtime_context {
namespace {
struct Registered {
  std::mutex mutex;
  std::vector<std::pair<const char*, RuntimeState*>> states;
};
Registered& registered() {
  static Registered* r = new Registered();  // never destroyed, like the states it lists
  return *r;
}
}  // namespace

void add(const char* name, RuntimeState* state) {
  Registered& r = registered();
  std::lock_guard lock(r.mutex);
  r.states.emplace_back(name, state);
}

namespace {
// A copy of the list, so that no state is called with the registry's lock held.
std::vector<std::pair<const char*, RuntimeState*>> snapshot() {
  Registered& r = registered();
  std::lock_guard lock(r.mutex);
  return r.states;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> describe_all() {
  const auto states = snapshot();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, state] : states) out.emplace_back(name, state->describe());
  return out;
}

void clear_caches() {
  const auto states = snapshot();
  // Caches first, so that the buffers they held are back with the allocators before those let go.
  for (const auto& [name, state] : states) state->clear_cache();
  for (const auto& [name, state] : states) state->release_memory();
}

}  // namespace xlite::runtime_context
