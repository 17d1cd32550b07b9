// The fast-math and excess-precision switches (xlite/math_mode.h). Kernels read them when they compile and
// keep the modes apart in the kernel cache; programs keep no mark of their mode, so a change empties the
// program cache.
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

std::atomic<bool>& excess_precision_flag() {
  static std::atomic<bool> flag{env::settings().excess_precision};
  return flag;
}

void set_flag(std::atomic<bool>& flag, bool enabled) {
  if (flag.exchange(enabled) != enabled) compiler::executable_cache().clear();
}
}  // namespace

void set_fast_math(bool enabled) { set_flag(fast_math_flag(), enabled); }

bool is_fast_math() { return fast_math_flag().load(std::memory_order_relaxed); }

void set_excess_precision(bool enabled) { set_flag(excess_precision_flag(), enabled); }

bool is_excess_precision() { return excess_precision_flag().load(std::memory_order_relaxed); }

}  // namespace xlite
