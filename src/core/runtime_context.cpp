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

std::vector<std::pair<std::string, std::string>> describe_all() {
  Registered& r = registered();
  std::vector<std::pair<const char*, RuntimeState*>> states;
  {
    std::lock_guard lock(r.mutex);
    states = r.states;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, state] : states) out.emplace_back(name, state->describe());
  return out;
}

void clear_caches() {
  Registered& r = registered();
  std::vector<std::pair<const char*, RuntimeState*>> states;
  {
    std::lock_guard lock(r.mutex);
    states = r.states;
  }
  // In reverse order of making: the allocators, made before the caches of programs and kernels, empty
  // last, after those gave their buffers back.
  for (auto it = states.rbegin(); it != states.rend(); ++it) it->second->clear_cache();
}

}  // namespace xlite::runtime_context
