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

}  // namespace xlite::backends::cpu::math
