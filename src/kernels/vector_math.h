// The vector loops of the attention kernels, vectorised where the CPU allows. flash_attention's tile
// products are GEMMs, and what is left is an exponential per score, which scalar std::exp made its largest
// cost; paged_attention's decode products are dot products and scaled adds of single rows, too small for a
// GEMM call. The AVX-512 path is chosen once, at run time, so the library still runs on CPUs without it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace xlite::kernels {

// Multiplies x[0, n) by scale in place and returns the largest result (-inf when n is 0).
float scale_and_max(float* x, int64_t n, float scale);

// Replaces x[0, n) by exp(x - shift) and returns their sum. -inf gives 0; shift must be finite.
float exp_shifted_sum(float* x, int64_t n, float shift);

// out[r * out_stride] = the dot product of rows[r * n, (r + 1) * n) with x[0, n), for r < count: one pass
// over x for all the rows (a key against the query heads that share it).
void dot_rows(const float* rows, int64_t count, const float* x, int64_t n, float* out, int64_t out_stride);

// rows[r * n, (r + 1) * n) += alpha[r * alpha_stride] * x[0, n), for r < count: one pass over x.
void add_scaled_rows(float* rows, int64_t count, const float* alpha, int64_t alpha_stride, const float* x, int64_t n);

// out[0, n) = x[0, n) rounded to bf16 (to nearest even, NaN kept quiet): the operands of bf16 tile products.
void round_to_bf16(const float* x, int64_t n, uint16_t* out);

// The scalar loops: the f32 path of CPUs without AVX-512 (and what the vector path is tested against), and
// the f64 path, which is for checking gradients.
template <class T>
T scale_and_max_generic(T* x, int64_t n, T scale) {
  T best = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) best = std::max(best, x[i] *= scale);
  return best;
}
template <class T>
T exp_shifted_sum_generic(T* x, int64_t n, T shift) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}
inline double scale_and_max(double* x, int64_t n, double scale) { return scale_and_max_generic(x, n, scale); }
inline double exp_shifted_sum(double* x, int64_t n, double shift) { return exp_shifted_sum_generic(x, n, shift); }

// The same without AVX-512.
void dot_rows_generic(const float* rows, int64_t count, const float* x, int64_t n, float* out, int64_t out_stride);
void add_scaled_rows_generic(float* rows, int64_t count, const float* alpha, int64_t alpha_stride, const float* x,
                             int64_t n);
void round_to_bf16_generic(const float* x, int64_t n, uint16_t* out);

}  // namespace xlite::kernels
