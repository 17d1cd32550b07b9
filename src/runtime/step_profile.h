#pragma once
// XLITE_PROFILE=1: where the time of compiled programs goes. Every step of every compiled program (a fused
// kernel, a GEMM, a convolution, a reference fallback) is timed, and at exit a table sums the time by
// step label (kind, root op, shapes), largest first, on stderr. Off by default: then a step costs one
// branch on a cached flag.
#include <cstdint>
#include <string>

#include "core/clock.h"

namespace xlite::runtime {

bool profiling();
// XLITE_DEBUG_LEVEL=3: every executed step prints a line (label, time, GFLOP/s, GB/s), tinygrad-style.
bool debug_kernels();
void report_kernel(const std::string& label, int64_t nanoseconds, double flops, double bytes_moved);

// A step's accumulated time; registered once per label, so equal steps of different programs add up.
class StepProfile {
 public:
  explicit StepProfile(const std::string& label);
  void add(int64_t nanoseconds);

  struct Entry;

 private:
  Entry* entry_ = nullptr;
};

}  // namespace xlite::runtime
