#pragma once
// Monotonic time in nanoseconds, for the runtime's timers (tracing time, per-step profiles).
#include <chrono>
#include <cstdint>

namespace xlite {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace xlite
