// The machine's f32 arithmetic limit, measured in the run that it bounds: each thread runs chains of
// fused multiply-adds on 512-bit registers (256-bit where AVX-512 is missing), enough independent chains
// to hide the FMA latency on two FMA units, and nothing else. No f32 GEMM can run faster than this, so a
// training step's matmul FLOPs at this rate are the least time any implementation could take.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "timing.h"

namespace bench_peak {

constexpr int kChains = 12;  // 4-cycle latency x 2 units = 8 in flight, plus slack

__attribute__((target("avx512f"))) inline float fma_chains_512(long iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 12  // keeps every chain in a register
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

__attribute__((target("avx2,fma"))) inline float fma_chains_256(long iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  alignas(32) float lanes[8];
  float sum = 0;
  for (int c = 0; c < kChains; ++c) {
    _mm256_store_ps(lanes, acc[c]);
    for (float l : lanes) sum += l;
  }
  return sum;
}

// GFLOP/s of `threads` threads (OMP_NUM_THREADS when 0), the best of `trials` runs of ~20 ms each.
inline double fma_peak_gflops(int threads = 0, int trials = 5) {
  if (threads <= 0) {
    const char* env = std::getenv("OMP_NUM_THREADS");
    threads = env ? std::max(1, std::atoi(env)) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  const bool wide = __builtin_cpu_supports("avx512f");
  const int lanes = wide ? 16 : 8;
  const long iterations = 2'000'000;  // ~20 ms at 3-4 GHz with 12 chains on 2 units
  double best = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<float> sums(threads);
    std::vector<std::thread> workers;
    const double start = bench_timing::now_s();
    for (int w = 0; w < threads; ++w)
      workers.emplace_back([&, w] { sums[w] = wide ? fma_chains_512(iterations) : fma_chains_256(iterations); });
    for (auto& worker : workers) worker.join();
    const double seconds = bench_timing::now_s() - start;
    float total = 0;
    for (float s : sums) total += s;
    if (total != total) return 0;  // keeps the chains live; they never produce NaN
    best = std::max(best, threads * static_cast<double>(iterations) * kChains * lanes * 2 / seconds * 1e-9);
  }
  return best;
}

}  // namespace bench_peak
