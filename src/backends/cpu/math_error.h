#pragma once
// The error measure the f32 transcendentals (math.h) are held to: at most 1e-6 of the result's magnitude,
// with subnormal results measured against the smallest normal (below it f32 itself has fewer than 24
// bits). NaN must give NaN and an infinite result must be met exactly.
#include <algorithm>
#include <cmath>
#include <limits>

namespace xlite::backends::cpu::math {

inline double relative_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isfinite(want) && std::fabs(want) > std::numeric_limits<float>::max())
    want = want > 0 ? INFINITY : -INFINITY;
  if (std::isinf(want)) return got == static_cast<float>(want) ? 0 : INFINITY;
  double scale = std::max(std::fabs(want), static_cast<double>(std::numeric_limits<float>::min()));
  return std::fabs(static_cast<double>(got) - want) / scale;
}

// Fast math's measure (xlite/math_mode.h): the same, except that values below the smallest normal float may
// be read as zero: a result below it matches any result below it, and a subnormal input x may give f(+-0)
// (`want_at_zero`).
inline double fast_math_error(float x, float got, double want, double want_at_zero) {
  const double smallest_normal = std::numeric_limits<float>::min();
  if (std::fabs(want) < smallest_normal && std::fabs(got) < smallest_normal) return 0;
  double error = relative_error(got, want);
  if (x != 0 && std::fabs(x) < smallest_normal) error = std::min(error, relative_error(got, want_at_zero));
  return error;
}

}  // namespace xlite::backends::cpu::math
