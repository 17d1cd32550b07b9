// exp(r) = 2^n exp(f) with n = round(r / ln 2) and |f| <= ln 2 / 2, where exp(f) = 1 + f Q(f) is the
// polynomial of the compiled loops (core/exp_polynomial.h), within 1.7e-7. ln 2 is split in two so that n ln 2
// is subtracted exactly.
#include "kernels/vector_math.h"

#include "core/exp_polynomial.h"
#include "core/half.h"

// GCC 12's AVX-512 intrinsics start from a self-initialised "undefined" vector, which its uninitialised-use
// warnings report (GCC bug 105593); the warnings are silenced for this header only, where they are false.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace xlite::kernels {
namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f;  // exact in 9 bits, so n * kLn2High is exact for |n| <= 2^15
constexpr float kLn2Low = -2.12194440e-4f;
// Below kExpLowest exp underflows to 0 in f32. Clamping maps -inf to 0 and +inf to inf, not NaN.
constexpr float kExpLowest = -104.0f;
constexpr float kExpHighest = 89.0f;  // above exp overflows to inf, which scalef gives

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

// The lanes of a last, partial vector of `remaining` (< 16) elements.
__mmask16 tail_mask(int64_t remaining) { return static_cast<__mmask16>((1u << remaining) - 1); }

__attribute__((target("avx512f"))) __m512 exp_512(__m512 x) {
  // Both clamps keep a NaN: AVX-512 min and max return their second operand when either is NaN.
  x = _mm512_min_ps(_mm512_set1_ps(kExpHighest), _mm512_max_ps(_mm512_set1_ps(kExpLowest), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT);
  __m512 f = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  f = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), f);
  const auto& c = exp_polynomial::kPrecise;
  __m512 q = _mm512_set1_ps(static_cast<float>(c[0]));
  for (size_t i = 1; i < std::size(c); ++i) q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(static_cast<float>(c[i])));
  return _mm512_scalef_ps(_mm512_fmadd_ps(q, f, _mm512_set1_ps(1.0f)), n);
}

__attribute__((target("avx512f"))) float scale_and_max_512(float* x, int64_t n, float scale) {
  const __m512 s = _mm512_set1_ps(scale);
  __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), s);
    _mm512_storeu_ps(x + i, v);
    best = _mm512_max_ps(best, v);
  }
  if (i < n) {
    const __mmask16 tail = tail_mask(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i), s);
    _mm512_mask_storeu_ps(x + i, tail, v);
    best = _mm512_mask_max_ps(best, tail, best, v);
  }
  return _mm512_reduce_max_ps(best);
}

__attribute__((target("avx512f"))) float exp_shifted_sum_512(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = exp_512(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    _mm512_storeu_ps(x + i, v);
    sum = _mm512_add_ps(sum, v);
  }
  if (i < n) {
    const __mmask16 tail = tail_mask(n - i);
    const __m512 v = exp_512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), s));
    _mm512_mask_storeu_ps(x + i, tail, v);
    sum = _mm512_mask_add_ps(sum, tail, sum, v);
  }
  return _mm512_reduce_add_ps(sum);
}

// Rows are taken in groups of up to kRowGroup, each with its accumulator in a register, so that each vector
// of x is loaded once per group.
constexpr int64_t kRowGroup = 8;

__attribute__((target("avx512f"))) void dot_rows_512(const float* rows, int64_t count, const float* x, int64_t n,
                                                     float* out, int64_t out_stride) {
  for (int64_t r0 = 0; r0 < count; r0 += kRowGroup) {
    const int64_t group = std::min(kRowGroup, count - r0);
    __m512 acc[kRowGroup];
    for (int64_t r = 0; r < group; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(n - i);
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
      for (int64_t r = 0; r < group; ++r)
        acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, rows + (r0 + r) * n + i), xv, acc[r]);
    }
    for (int64_t r = 0; r < group; ++r) out[(r0 + r) * out_stride] = _mm512_reduce_add_ps(acc[r]);
  }
}

__attribute__((target("avx512f"))) void add_scaled_rows_512(float* rows, int64_t count, const float* alpha,
                                                            int64_t alpha_stride, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tail_mask(n - i);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
    for (int64_t r = 0; r < count; ++r) {
      float* y = rows + r * n + i;
      _mm512_mask_storeu_ps(y, m,
                            _mm512_fmadd_ps(_mm512_set1_ps(alpha[r * alpha_stride]), xv, _mm512_maskz_loadu_ps(m, y)));
    }
  }
}

// float_to_bf16 on 16 lanes: the same bits.
__attribute__((target("avx512f"))) __m256i bf16_512(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_or_si512(bits, _mm512_set1_epi32(0x400000)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
}

__attribute__((target("avx512f"))) void round_to_bf16_512(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), bf16_512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = tail_mask(n - i);
    _mm512_mask_cvtepi32_storeu_epi16(out + i, tail,
                                      _mm512_cvtepu16_epi32(bf16_512(_mm512_maskz_loadu_ps(tail, x + i))));
  }
}

}  // namespace

void round_to_bf16_generic(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16(x[i]);
}

void round_to_bf16(const float* x, int64_t n, uint16_t* out) {
  cpu_has_avx512() ? round_to_bf16_512(x, n, out) : round_to_bf16_generic(x, n, out);
}

void dot_rows_generic(const float* rows, int64_t count, const float* x, int64_t n, float* out, int64_t out_stride) {
  for (int64_t r = 0; r < count; ++r) {
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += rows[r * n + i] * x[i];
    out[r * out_stride] = sum;
  }
}

void add_scaled_rows_generic(float* rows, int64_t count, const float* alpha, int64_t alpha_stride, const float* x,
                             int64_t n) {
  for (int64_t r = 0; r < count; ++r)
    for (int64_t i = 0; i < n; ++i) rows[r * n + i] += alpha[r * alpha_stride] * x[i];
}

void dot_rows(const float* rows, int64_t count, const float* x, int64_t n, float* out, int64_t out_stride) {
  cpu_has_avx512() ? dot_rows_512(rows, count, x, n, out, out_stride)
                   : dot_rows_generic(rows, count, x, n, out, out_stride);
}

void add_scaled_rows(float* rows, int64_t count, const float* alpha, int64_t alpha_stride, const float* x, int64_t n) {
  cpu_has_avx512() ? add_scaled_rows_512(rows, count, alpha, alpha_stride, x, n)
                   : add_scaled_rows_generic(rows, count, alpha, alpha_stride, x, n);
}

float scale_and_max(float* x, int64_t n, float scale) {
  return cpu_has_avx512() ? scale_and_max_512(x, n, scale) : scale_and_max_generic(x, n, scale);
}

float exp_shifted_sum(float* x, int64_t n, float shift) {
  return cpu_has_avx512() ? exp_shifted_sum_512(x, n, shift) : exp_shifted_sum_generic(x, n, shift);
}

}  // namespace xlite::kernels
