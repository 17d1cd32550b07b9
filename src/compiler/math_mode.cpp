// The fast-math switch (xlite/math_mode.h). Kernels read it when they compile and keep the two modes apart
// in the kernel cache; programs keep no mark of their mode, so a change empties the program cache.
#include <atomic>

#include "compiler/cache.h"
#include "core/environment.h"
#include "xlite/math_mode.h"

namespace xlite {
namespace {
std::atomic<bool>& fast_math_flag() {
  static std::atomic<bool> flag{env::settings().fast_math};
  return flag;
}
}  // namespace

void set_fast_math(bool enabled) {
  if (fast_math_flag().exchange(enabled) != enabled) compiler::executable_cache().clear();
}

bool is_fast_math() { return fast_math_flag().load(std::memory_order_relaxed); }

}  // namespace xlite
