// xlite benchmarks, each against a peer or a physical limit measured in the same process and interleaved
// with it run by run (the machine is shared and noisy: both sides see the same disturbances).
//
// Output: one measurement per line, `name value unit`; lines starting with '#' are notes (settings, fusion
// decisions, checks). Every value is the median of >= 5 timed runs taken after warm-up runs; every timed
// xlite run starts after xlite::sync() and ends after its own sync (so it includes tracing, the
// compilation-cache lookup, running, and the result binding: what a user waits for).
//
// Usage: xlite_bench [all|elementwise|norm|sums|matmul|gmm|attention|attention_bf16|paged|eager|compile] [runs]
// Only the public API (<xlite/xlite.h>) is used, plus <dnnl.h> for the direct oneDNN sgemm peer.
#include <dnnl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "fma_peak.h"
#include "timing.h"

namespace xl = xlite;

namespace {

using namespace bench_timing;  // g_runs, now_s, median, emit, time_pair, Memcpy

// A 64-byte aligned float array holding a copy of the data.
struct Aligned {
  float* p;
  explicit Aligned(const std::vector<float>& v)
      : p(static_cast<float*>(std::aligned_alloc(64, (v.size() * sizeof(float) + 63) / 64 * 64))) {
    std::memcpy(p, v.data(), v.size() * sizeof(float));
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  float* data() { return p; }
};

xl::Tensor ready(xl::Tensor t) {
  xl::sync({t});
  return t;
}

// ---------------------------------------------------------------------------------------------------------
// 1. A chain of 10 elementwise ops on 16M floats: compiled (one fused loop) vs memcpy and vs eager mode.
xl::Tensor chain10(const xl::Tensor& x) {
  xl::Tensor y = x * 1.5f;   // 1
  y = y + 0.25f;             // 2
  y = xl::abs(y);            // 3
  y = xl::sqrt(y);           // 4
  y = y - 0.5f;              // 5
  y = xl::relu(y);           // 6
  y = xl::square(y);         // 7
  y = xl::minimum(y, 4.0f);  // 8
  y = xl::tanh(y);           // 9
  y = y * 0.5f;              // 10
  return y;
}

// A diagnostic variant with only cheap arithmetic (no sqrt, tanh or NaN-propagating minimum): it shows
// whether the fused loop of chain10 is limited by memory or by the math it computes per element.
xl::Tensor chain10_arith(const xl::Tensor& x) {
  xl::Tensor y = x * 1.5f;
  y = y + 0.25f;
  y = xl::abs(y);
  y = y * 0.75f;
  y = y - 0.5f;
  y = xl::relu(y);
  y = xl::square(y);
  y = y + 1.0f;
  y = y * y;
  y = y * 0.5f;
  return y;
}

void bench_elementwise() {
  const int64_t n = int64_t{1} << 24;  // 16M floats, 64 MiB
  xl::manual_seed(1);
  xl::Tensor x = ready(xl::randn({n}));
  {
    xl::Tensor pending = chain10(x);
    xl::debug::MemoryStats stats = xl::debug::memory_stats({pending});
    note("chain10 fusion (" + std::to_string(stats.kernels) + " kernels, temp " + std::to_string(stats.temp_bytes) +
         " bytes):\n" + stats.fusion);
  }
  // The fused kernel reads x and writes y: 2 x 64 MiB. memcpy of 64 MiB reads 64 MiB and writes 64 MiB.
  const double bytes = 2.0 * n * sizeof(float);
  Memcpy copy(static_cast<size_t>(n) * sizeof(float));
  auto compiled = [&] {
    xl::Tensor y = chain10(x);
    xl::sync({y});
  };
  auto eager = [&] {
    xl::EagerModeGuard guard(true);
    xl::Tensor y = chain10(x);
    xl::sync({y});
  };
  auto [t_compiled, t_memcpy] = time_pair(compiled, copy);
  auto [t_eager, t_compiled2] = time_pair(eager, compiled);
  emit("chain10_16M.compiled_ms", t_compiled * 1e3, "ms");
  emit("chain10_16M.memcpy_ms", t_memcpy * 1e3, "ms");
  emit("chain10_16M.compiled_GBps", bytes / t_compiled * 1e-9, "GB/s");
  emit("chain10_16M.memcpy_GBps", bytes / t_memcpy * 1e-9, "GB/s");
  emit("chain10_16M.eager_ms", t_eager * 1e3, "ms");
  emit("chain10_16M.compiled_vs_eager_pass_ms", t_compiled2 * 1e3, "ms");
  auto arith = [&] {
    xl::Tensor y = chain10_arith(x);
    xl::sync({y});
  };
  auto [t_arith, t_memcpy3] = time_pair(arith, copy);
  emit("chain10arith_16M.compiled_ms", t_arith * 1e3, "ms");
  emit("chain10arith_16M.memcpy_ms", t_memcpy3 * 1e3, "ms");

  // Correctness check of what was timed: compiled vs eager vs host, on a few elements.
  std::vector<float> hx = x.to_vector<float>();
  std::vector<float> hc = chain10(x).to_vector<float>();
  std::vector<float> he;
  {
    xl::EagerModeGuard guard(true);
    he = chain10(x).to_vector<float>();
  }
  double err = 0;
  for (int64_t i = 0; i < n; i += 4099) {
    float v = hx[i] * 1.5f + 0.25f;
    v = std::sqrt(std::fabs(v)) - 0.5f;
    v = std::max(v, 0.0f);
    v = std::min(v * v, 4.0f);
    v = std::tanh(v) * 0.5f;
    err = std::max({err, (double)std::fabs(hc[i] - v), (double)std::fabs(he[i] - v)});
  }
  note("chain10 check: max |xlite - host| over sampled elements = " + std::to_string(err));
}

// ---------------------------------------------------------------------------------------------------------
// 2. Row softmax and layernorm on [8192, 1024] f32 vs memcpy of input + output bytes.
xl::Tensor layernorm(const xl::Tensor& x, const xl::Tensor& w, const xl::Tensor& b) {
  xl::Tensor mu = xl::mean(x, {-1}, true);
  xl::Tensor c = x - mu;
  xl::Tensor var = xl::mean(c * c, {-1}, true);
  return c * xl::rsqrt(var + 1e-5f) * w + b;
}

void bench_norm() {
  const int64_t rows = 8192, cols = 1024;
  xl::manual_seed(2);
  xl::Tensor x = ready(xl::randn({rows, cols}));
  xl::Tensor w = ready(xl::rand({cols}) + 0.5f);
  xl::Tensor b = ready(xl::randn({cols}));
  const size_t tensor_bytes = static_cast<size_t>(rows * cols) * sizeof(float);
  // Each reads x once and writes y once at the minimum (w and b are 8 KiB): 2 x 32 MiB.
  const double bytes = 2.0 * tensor_bytes;
  Memcpy copy(tensor_bytes);
  {
    xl::Tensor s = xl::softmax(x, -1);
    xl::debug::MemoryStats st = xl::debug::memory_stats({s});
    note("softmax fusion (" + std::to_string(st.kernels) + " kernels, temp " + std::to_string(st.temp_bytes) +
         " bytes):\n" + st.fusion);
    xl::Tensor l = layernorm(x, w, b);
    xl::debug::MemoryStats sl = xl::debug::memory_stats({l});
    note("layernorm fusion (" + std::to_string(sl.kernels) + " kernels, temp " + std::to_string(sl.temp_bytes) +
         " bytes):\n" + sl.fusion);
  }
  auto softmax = [&] {
    xl::Tensor y = xl::softmax(x, -1);
    xl::sync({y});
  };
  auto ln = [&] {
    xl::Tensor y = layernorm(x, w, b);
    xl::sync({y});
  };
  auto [t_softmax, t_memcpy] = time_pair(softmax, copy);
  auto [t_ln, t_memcpy2] = time_pair(ln, copy);
  emit("softmax_8192x1024.xlite_ms", t_softmax * 1e3, "ms");
  emit("softmax_8192x1024.memcpy_ms", t_memcpy * 1e3, "ms");
  emit("softmax_8192x1024.xlite_GBps", bytes / t_softmax * 1e-9, "GB/s");
  emit("softmax_8192x1024.memcpy_GBps", bytes / t_memcpy * 1e-9, "GB/s");
  emit("layernorm_8192x1024.xlite_ms", t_ln * 1e3, "ms");
  emit("layernorm_8192x1024.memcpy_ms", t_memcpy2 * 1e3, "ms");
  emit("layernorm_8192x1024.xlite_GBps", bytes / t_ln * 1e-9, "GB/s");
  emit("layernorm_8192x1024.memcpy_GBps", bytes / t_memcpy2 * 1e-9, "GB/s");

  // Check: softmax rows sum to 1; layernorm rows of (y - b) / w have mean 0 and variance 1.
  std::vector<float> s = xl::softmax(x, -1).to_vector<float>();
  double worst = 0;
  for (int64_t r = 0; r < rows; r += 511) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += s[r * cols + c];
    worst = std::max(worst, std::fabs(sum - 1));
  }
  note("softmax check: max |row sum - 1| = " + std::to_string(worst));
  std::vector<float> y = layernorm(x, w, b).to_vector<float>(), hw = w.to_vector<float>(), hb = b.to_vector<float>();
  double worst_mean = 0, worst_var = 0;
  for (int64_t r = 0; r < rows; r += 511) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += (y[r * cols + c] - hb[c]) / hw[c];
    m /= cols;
    for (int64_t c = 0; c < cols; ++c) v += std::pow((y[r * cols + c] - hb[c]) / hw[c] - m, 2);
    v /= cols;
    worst_mean = std::max(worst_mean, std::fabs(m));
    worst_var = std::max(worst_var, std::fabs(v - 1));
  }
  note("layernorm check: max |row mean| = " + std::to_string(worst_mean) +
       ", max |row var - 1| = " + std::to_string(worst_var));
}

// ---------------------------------------------------------------------------------------------------------
// 2b. Long sums of 64 MiB of f32 vs memcpy of the same bytes moved (a sum reads 64 MiB; memcpy of 32 MiB
// reads 32 and writes 32): everything into one value (one thread: one output), the rows of [4096, 4096],
// its columns (a bias gradient's shape), and the columns of [8M, 2]. Plus a sum of 64K floats repeated
// from L2, where the loop's arithmetic rather than memory sets the time.
void bench_sums() {
  const int64_t n = int64_t{1} << 24;
  xl::manual_seed(4);
  xl::Tensor x = ready(xl::rand({n}) + 1.0f);
  xl::Tensor square = ready(xl::reshape(x, {4096, 4096}));
  xl::Tensor narrow = ready(xl::reshape(x, {n / 2, 2}));
  Memcpy copy(static_cast<size_t>(n) * sizeof(float) / 2);
  const double bytes = static_cast<double>(n) * sizeof(float);
  struct Case {
    const char* name;
    std::function<xl::Tensor()> sum;
  };
  const std::vector<Case> cases = {{"sum_all_16M", [&] { return xl::sum(x); }},
                                   {"sum_rows_4096x4096", [&] { return xl::sum(square, {1}); }},
                                   {"sum_columns_4096x4096", [&] { return xl::sum(square, {0}); }},
                                   {"sum_columns_8Mx2", [&] { return xl::sum(narrow, {0}); }}};
  for (const Case& c : cases) {
    auto run = [&] { xl::sync({c.sum()}); };
    auto [t_sum, t_memcpy] = time_pair(run, copy);
    emit(std::string(c.name) + ".xlite_ms", t_sum * 1e3, "ms");
    emit(std::string(c.name) + ".memcpy_ms", t_memcpy * 1e3, "ms");
    emit(std::string(c.name) + ".xlite_GBps", bytes / t_sum * 1e-9, "GB/s");
  }
  // Check: the sum of everything against the host's in double.
  std::vector<float> hx = x.to_vector<float>();
  double want = 0;
  for (float v : hx) want += v;
  note("sum_all_16M check: |xlite - host| / host = " +
       std::to_string(std::fabs(xl::sum(x).item<float>() - want) / want));

  xl::Tensor small = ready(xl::rand({int64_t{1} << 16}) + 1.0f);
  const int repeats = 256;
  auto in_cache = [&] {
    for (int r = 0; r < repeats; ++r) xl::sync({xl::sum(small)});
  };
  auto [t_small, t_small2] = time_pair(in_cache, in_cache);
  emit("sum_all_64K_x256.xlite_ms", 0.5 * (t_small + t_small2) * 1e3, "ms");
  emit("sum_all_64K_x256.xlite_GBps", repeats * 65536.0 * sizeof(float) / (0.5 * (t_small + t_small2)) * 1e-9, "GB/s");
}

// ---------------------------------------------------------------------------------------------------------
// 3. Matmul vs oneDNN's dnnl_sgemm called directly on the same shapes.
void bench_matmul_shape(int64_t m, int64_t k, int64_t n) {
  std::string tag = "matmul_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  xl::manual_seed(3);
  xl::Tensor a = ready(xl::randn({m, k}));
  xl::Tensor b = ready(xl::randn({k, n}));
  // The peer's operands and result are 64-byte aligned like xlite's buffers, and touched beforehand.
  Aligned ha(a.to_vector<float>()), hb(b.to_vector<float>()), hc(std::vector<float>(static_cast<size_t>(m * n), 0.0f));
  auto xlite_mm = [&] {
    xl::Tensor c = xl::matmul(a, b);
    xl::sync({c});
  };
  auto dnnl_mm = [&] {
    dnnl_status_t s = dnnl_sgemm('N', 'N', m, n, k, 1.0f, ha.data(), k, hb.data(), n, 0.0f, hc.data(), n);
    if (s != dnnl_success) std::abort();
  };
  auto [t_x, t_d] = time_pair(xlite_mm, dnnl_mm);
  const double flops = 2.0 * m * n * k;
  emit(tag + ".xlite_ms", t_x * 1e3, "ms");
  emit(tag + ".dnnl_ms", t_d * 1e3, "ms");
  emit(tag + ".xlite_GFLOPs", flops / t_x * 1e-9, "GFLOP/s");
  emit(tag + ".dnnl_GFLOPs", flops / t_d * 1e-9, "GFLOP/s");
  // The same product in bf16 (autocast's products): oneDNN's bf16 path against the f32 one, same run.
  xl::Tensor a16 = ready(a.to(xl::DType::bf16)), b16 = ready(b.to(xl::DType::bf16));
  auto bf16_mm = [&] { xl::sync({xl::matmul(a16, b16)}); };
  auto [t_h, t_f] = time_pair(bf16_mm, xlite_mm);
  emit(tag + ".xlite_bf16_GFLOPs", flops / t_h * 1e-9, "GFLOP/s");
  emit(tag + ".bf16_speedup_over_f32", t_f / t_h, "x");
  std::vector<float> c = xl::matmul(a, b).to_vector<float>();
  double err = 0;
  for (size_t i = 0; i < c.size(); i += 997) err = std::max(err, (double)std::fabs(c[i] - hc.data()[i]));
  note(tag + " check: max |xlite - dnnl| = " + std::to_string(err));
}

void bench_matmul() {
  bench_matmul_shape(1024, 1024, 1024);
  bench_matmul_shape(512, 768, 3072);
}

// gmm (the mixture-of-experts grouped matmul) against one dense matmul of the same total size, both through
// xlite in the same run: [m, k] x [k, n] dense, and the same m rows split into 8 groups, each times its own
// [k, n] matrix. Equal groups, then skewed ones (one group holds half the rows).
void bench_gmm_case(const std::string& name, const std::vector<int32_t>& sizes, int64_t m, int64_t k, int64_t n) {
  xl::manual_seed(5);
  const int64_t groups = static_cast<int64_t>(sizes.size());
  xl::Tensor lhs = ready(xl::randn({m, k}));
  xl::Tensor rhs = ready(xl::randn({groups, k, n}));
  xl::Tensor dense_rhs = ready(xl::randn({k, n}));
  xl::Tensor group_sizes = ready(xl::tensor(sizes));
  auto grouped = [&] {
    xl::Tensor c = xl::kernels::gmm(lhs, rhs, group_sizes);
    xl::sync({c});
  };
  auto dense = [&] {
    xl::Tensor c = xl::matmul(lhs, dense_rhs);
    xl::sync({c});
  };
  auto [t_g, t_d] = time_pair(grouped, dense);
  const double flops = 2.0 * m * n * k;
  const std::string tag = "gmm_" + name + "_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  emit(tag + ".gmm_GFLOPs", flops / t_g * 1e-9, "GFLOP/s");
  emit(tag + ".dense_GFLOPs", flops / t_d * 1e-9, "GFLOP/s");
  emit(tag + ".gmm_over_dense", t_d / t_g, "x");
  // tgmm, the weight gradient's grouped product: lhs^T [k, m] by the m rows of [m, n], per group, against
  // the one dense product [k, m] x [m, n] of the same FLOPs.
  xl::Tensor lhs_t = ready(xl::randn({k, m})), grad = ready(xl::randn({m, n}));
  auto transposed = [&] { xl::sync({xl::kernels::tgmm(lhs_t, grad, group_sizes)}); };
  auto transposed_dense = [&] { xl::sync({xl::matmul(lhs_t, grad)}); };
  auto [t_t, t_td] = time_pair(transposed, transposed_dense);
  emit(tag + ".tgmm_GFLOPs", flops / t_t * 1e-9, "GFLOP/s");
  emit(tag + ".tgmm_over_dense", t_td / t_t, "x");
}

void bench_gmm() {
  const int64_t m = 2048, k = 512, n = 1024;
  bench_gmm_case("equal8", std::vector<int32_t>(8, static_cast<int32_t>(m / 8)), m, k, n);
  std::vector<int32_t> skewed(8, static_cast<int32_t>(m / 2 / 7));
  skewed[0] = static_cast<int32_t>(m - 7 * skewed[1]);  // about half the rows
  bench_gmm_case("skewed8", skewed, m, k, n);
}

// flash_attention against the same attention written in ops (scores, mask, softmax, weighted sum), both
// compiled by xlite in the same run: B=4, H=8, D=64, the forward alone and forward+backward (gradients of
// sum(out * w) for q, k and v). bench/attention_peer.py times PyTorch 2.x's SDPA on the same shapes.
void bench_attention_case(int64_t s, bool causal, double peak) {
  xl::manual_seed(6);
  const int64_t b = 4, h = 8, d = 64;
  xl::Tensor q = ready(xl::randn({b, h, s, d})), k = ready(xl::randn({b, h, s, d})), v = ready(xl::randn({b, h, s, d}));
  xl::Tensor w = ready(xl::randn({b, h, s, d}));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  xl::Tensor mask = ready(xl::tril(xl::ones({s, s})) > 0.5);
  auto flash = [&](const std::vector<xl::Tensor>& in) {
    return xl::kernels::flash_attention(in[0], in[1], in[2], causal, scale);
  };
  auto composite = [&](const std::vector<xl::Tensor>& in) {
    xl::Tensor scores = xl::matmul(in[0], xl::transpose(in[1], 2, 3)) * scale;
    if (causal) scores = xl::where(mask, scores, -1e30);
    return xl::matmul(xl::softmax(scores, -1), in[2]);
  };
  auto forward = [&](const auto& fn) { return [&] { xl::sync({fn({q, k, v})}); }; };
  auto training = [&](const auto& fn) {
    return
        [&] { xl::sync(xl::grad([&](const std::vector<xl::Tensor>& in) { return xl::sum(fn(in) * w); }, {q, k, v})); };
  };
  const double flops = 4.0 * b * h * s * s * d * (causal ? 0.5 : 1.0);
  const std::string tag = std::string("attention_") + (causal ? "causal_" : "") + "S" + std::to_string(s);
  auto [t_flash, t_composite] = time_pair(forward(flash), forward(composite), 1);
  emit(tag + ".flash_ms", t_flash * 1e3, "ms");
  emit(tag + ".composite_ms", t_composite * 1e3, "ms");
  emit(tag + ".flash_GFLOPs", flops / t_flash * 1e-9, "GFLOP/s");
  emit(tag + ".flash_fraction_of_fma_peak", flops / t_flash * 1e-9 / peak, "x");
  emit(tag + ".flash_over_composite", t_composite / t_flash, "x");
  // The backward recomputes the scores and does four more products: 2.5x the forward's FLOPs.
  auto [t_flash_train, t_composite_train] = time_pair(training(flash), training(composite), 1);
  emit(tag + ".flash_train_ms", t_flash_train * 1e3, "ms");
  emit(tag + ".composite_train_ms", t_composite_train * 1e3, "ms");
  emit(tag + ".flash_train_GFLOPs", 3.5 * flops / t_flash_train * 1e-9, "GFLOP/s");
  emit(tag + ".flash_train_over_composite", t_composite_train / t_flash_train, "x");
  // What each program holds besides its arguments and results (debug::memory_stats, the compile-time plan
  // with the kernel's declared scratch).
  const int64_t flash_bytes = xl::debug::memory_stats({flash({q, k, v})}).temp_bytes;
  const int64_t composite_bytes = xl::debug::memory_stats({composite({q, k, v})}).temp_bytes;
  emit(tag + ".flash_temp_MB", static_cast<double>(flash_bytes) / 1e6, "MB");
  emit(tag + ".composite_temp_MB", static_cast<double>(composite_bytes) / 1e6, "MB");
  emit(tag + ".flash_temp_over_composite", static_cast<double>(flash_bytes) / static_cast<double>(composite_bytes),
       "x");
}

void bench_attention() {
  const double peak = bench_peak::fma_peak_gflops();
  emit("attention.fma_peak_GFLOPs", peak, "GFLOP/s");
  for (int64_t s : {512, 1024, 2048, 4096})
    for (bool causal : {false, true}) bench_attention_case(s, causal, peak);
}

// flash_attention on bf16 inputs (bf16 tile products accumulating in f32) against the same kernel on f32
// inputs, B=4, H=8, D=64, forward and forward+backward: what bf16 buys attention on AVX-512 BF16.
void bench_attention_bf16() {
  const int64_t b = 4, h = 8, d = 64;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t s : {512, 1024, 2048, 4096})
    for (bool causal : {false, true}) {
      xl::manual_seed(6);
      const std::vector<xl::Tensor> f32 = {ready(xl::randn({b, h, s, d})), ready(xl::randn({b, h, s, d})),
                                           ready(xl::randn({b, h, s, d}))};
      const std::vector<xl::Tensor> bf16 = {ready(f32[0].to(xl::DType::bf16)), ready(f32[1].to(xl::DType::bf16)),
                                            ready(f32[2].to(xl::DType::bf16))};
      const xl::Tensor w = ready(xl::randn({b, h, s, d}));
      auto attention = [&](const std::vector<xl::Tensor>& in) {
        return xl::kernels::flash_attention(in[0], in[1], in[2], causal, scale);
      };
      auto forward = [&](const std::vector<xl::Tensor>& in) { return [&] { xl::sync({attention(in)}); }; };
      auto training = [&](const std::vector<xl::Tensor>& in) {
        return [&] {
          xl::sync(xl::grad(
              [&](const std::vector<xl::Tensor>& x) { return xl::sum(attention(x).to(xl::DType::f32) * w); }, in));
        };
      };
      const std::string tag = std::string("attention_bf16_") + (causal ? "causal_" : "") + "S" + std::to_string(s);
      auto [t_bf16, t_f32] = time_pair(forward(bf16), forward(f32), 1);
      emit(tag + ".bf16_ms", t_bf16 * 1e3, "ms");
      emit(tag + ".f32_ms", t_f32 * 1e3, "ms");
      emit(tag + ".f32_over_bf16", t_f32 / t_bf16, "x");
      auto [t_bf16_train, t_f32_train] = time_pair(training(bf16), training(f32), 1);
      emit(tag + ".bf16_train_ms", t_bf16_train * 1e3, "ms");
      emit(tag + ".f32_train_ms", t_f32_train * 1e3, "ms");
      emit(tag + ".f32_over_bf16_train", t_f32_train / t_bf16_train, "x");
    }
}

// paged_attention decoding one token for B=8 sequences of 2048 tokens (H=32, Hkv=8, D=128, pages of 16),
// against attention over a contiguous cache written in ops and compiled by xlite. Decode reads each cached
// key and value once, so both are compared with memcpy of the cache's bytes.
void bench_paged_attention() {
  xl::manual_seed(7);
  const int64_t b = 8, h = 32, hkv = 8, d = 128, context = 2048, page = 16, pages_per_seq = context / page;
  const int64_t total_pages = b * pages_per_seq;
  xl::Tensor q = ready(xl::randn({b, h, d}));
  xl::Tensor k_pages = ready(xl::randn({hkv, total_pages, page, d})),
             v_pages = ready(xl::randn({hkv, total_pages, page, d}));
  std::vector<int32_t> table(static_cast<size_t>(total_pages));
  for (int64_t i = 0; i < total_pages; ++i)  // sequences' pages interleaved, as a serving cache leaves them
    table[i] = static_cast<int32_t>((i % pages_per_seq) * b + i / pages_per_seq);
  xl::Tensor page_indices = ready(xl::tensor(table, {b, pages_per_seq}));
  xl::Tensor lengths = ready(xl::full({b}, context, xl::DType::i32));
  xl::Tensor k = ready(xl::randn({b, hkv, context, d})), v = ready(xl::randn({b, hkv, context, d}));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  auto paged = [&] { xl::sync({xl::kernels::paged_attention(q, k_pages, v_pages, lengths, page_indices, 8, scale)}); };
  auto contiguous = [&] {
    // The query heads of a group share their kv head: [B, Hkv, G, D] x [B, Hkv, D, S].
    xl::Tensor qg = xl::reshape(q, {b, hkv, h / hkv, d});
    xl::Tensor scores = xl::matmul(qg, xl::transpose(k, 2, 3)) * scale;
    xl::sync({xl::matmul(xl::softmax(scores, -1), v)});
  };
  const double bytes = 2.0 * b * hkv * context * d * 4;
  Memcpy copy(static_cast<size_t>(bytes / 2));  // reads and writes as many bytes as decode reads
  auto [t_paged, t_contiguous] = time_pair(paged, contiguous);
  auto [t_paged2, t_memcpy] = time_pair(paged, copy);
  const std::string tag = "paged_decode_B8_H32_kv8_D128_S2048";
  emit(tag + ".paged_ms", t_paged * 1e3, "ms");
  emit(tag + ".contiguous_ms", t_contiguous * 1e3, "ms");
  emit(tag + ".paged_over_contiguous_time", t_paged / t_contiguous, "x");
  emit(tag + ".paged_GBps", bytes / t_paged2 * 1e-9, "GB/s");
  emit(tag + ".memcpy_GBps", bytes / t_memcpy * 1e-9, "GB/s");
}

// ---------------------------------------------------------------------------------------------------------
// 4. Eager mode on 16-element tensors, every op a compilation-cache hit: host overhead per op.
// The same 10-op sequence runs in bench/torch_peer.cpp.
constexpr int kEagerOpsPerStep = 10;
xl::Tensor eager_step(const xl::Tensor& a, const xl::Tensor& b) {
  xl::Tensor t = a + b;    // 1
  t = t * a;               // 2
  t = xl::relu(t);         // 3
  t = t - b;               // 4
  t = xl::tanh(t);         // 5
  t = xl::maximum(t, a);   // 6
  t = xl::exp(t);          // 7
  t = t * 0.5f;            // 8
  t = xl::neg(t);          // 9
  return xl::sum(t, {0});  // 10
}

void bench_eager() {
  xl::manual_seed(4);
  xl::Tensor a = ready(xl::randn({16}));
  xl::Tensor b = ready(xl::randn({16}));
  const int steps = 2000;
  auto run = [&] {
    xl::EagerModeGuard guard(true);
    for (int s = 0; s < steps; ++s) {
      xl::Tensor r = eager_step(a, b);
      asm volatile("" ::"r"(&r) : "memory");
    }
  };
  run();  // warm-up: compiles each one-op program once
  int64_t uncached_before = xl::metrics::counter_value("UncachedCompile");
  int64_t executes_before = xl::metrics::counter_value("EagerOpExecute");
  std::vector<double> t;
  for (int r = 0; r < g_runs; ++r) {
    double t0 = now_s();
    run();
    t.push_back(now_s() - t0);
  }
  int64_t uncached = xl::metrics::counter_value("UncachedCompile") - uncached_before;
  int64_t executes = xl::metrics::counter_value("EagerOpExecute") - executes_before;
  const double per_op = median(t) / (steps * kEagerOpsPerStep);
  emit("eager_16elem.per_op_us", per_op * 1e6, "us");
  note("eager: " + std::to_string(executes) + " eager op programs ran in the timed runs (" +
       std::to_string(g_runs * steps * kEagerOpsPerStep) + " ops called), " + std::to_string(uncached) +
       " uncached compiles (0 = every op was a cache hit)");
  xl::metrics::MetricData ex = xl::metrics::metric_data("EagerOpExecuteTime");
  if (!ex.recent.empty()) emit("eager_16elem.execute_part_us", median(ex.recent) * 1e-3, "us");
}

// ---------------------------------------------------------------------------------------------------------
// 5. Compile time of a ~100-node graph: cold, and again when every region is already compiled.
// Variant v changes the batch size, so every variant is a new graph with new regions (no cache hit).
struct Model {
  xl::Tensor x;
  std::vector<xl::Tensor> w, b, g;
};

constexpr int kBlocks = 3;  // with the head below: about 100 IR nodes (printed as a note)
// Host data (no xlite compile happens while a model is made, so the first compile in a fresh process is
// the model's graph itself).
xl::Tensor host_tensor(const xl::Shape& shape, float scale, float offset, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<float> data(static_cast<size_t>(count));
  for (float& v : data) {
    seed = seed * 1664525u + 1013904223u;
    v = offset + scale * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return xl::tensor(data, shape);
}

Model make_model(int variant) {
  Model m;
  m.x = host_tensor({32 + variant, 128}, 2.0f, 0.0f, 17u + variant);
  for (int i = 0; i <= kBlocks; ++i) {  // the last w and b are the head's
    m.w.push_back(host_tensor({128, 128}, 0.2f, 0.0f, 100u + i));
    m.b.push_back(host_tensor({128}, 0.2f, 0.0f, 200u + i));
    m.g.push_back(host_tensor({128}, 0.5f, 1.0f, 300u + i));
  }
  return m;
}

// Linear layer, GELU, residual and layer norm per block, then a linear + GELU head, softmax and a
// loss-like mean.
xl::Tensor forward(const Model& m) {
  xl::Tensor h = m.x;
  for (int i = 0; i < kBlocks; ++i) {
    xl::Tensor z = xl::gelu(xl::matmul(h, m.w[i]) + m.b[i]) + h;
    xl::Tensor mu = xl::mean(z, {-1}, true);
    xl::Tensor c = z - mu;
    xl::Tensor var = xl::mean(c * c, {-1}, true);
    h = c * xl::rsqrt(var + 1e-5f) * m.g[i];
  }
  h = xl::gelu(xl::matmul(h, m.w[kBlocks]) + m.b[kBlocks]);
  xl::Tensor p = xl::softmax(h, -1);
  return xl::mean(xl::log(p + 1e-6f));
}

double last_compile_ms() {
  xl::metrics::MetricData d = xl::metrics::metric_data("CompileTime");
  return d.recent.empty() ? -1 : d.recent.back() * 1e-6;
}

// Compiles and runs one model's graph; returns the compile time (ms) and checks it was a cache miss.
double compile_once(const Model& m, bool* uncached) {
  xl::Tensor out = forward(m);
  int64_t before = xl::metrics::counter_value("UncachedCompile");
  xl::sync({out});
  *uncached = xl::metrics::counter_value("UncachedCompile") == before + 1;
  return last_compile_ms();
}

// In a fresh child process: the very first graph compiled (includes bringing up LLVM's JIT).
double first_compile_in_fresh_process() {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Model m = make_model(0);
    bool uncached = false;
    double ms = compile_once(m, &uncached);
    if (!uncached) ms = -1;
    ssize_t w = write(fd[1], &ms, sizeof ms);
    (void)w;
    _exit(0);
  }
  close(fd[1]);
  double ms = -1;
  if (read(fd[0], &ms, sizeof ms) != sizeof ms) ms = -1;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return ms;
}

void bench_compile(bool fresh_processes) {
  // First compile in a fresh process, g_runs times (forked before this process touches xlite).
  if (fresh_processes) {
    std::vector<double> first;
    for (int r = 0; r < g_runs; ++r) first.push_back(first_compile_in_fresh_process());
    if (*std::min_element(first.begin(), first.end()) < 0) note("compile: a fresh-process run failed");
    emit("compile_100.first_in_process_ms", median(first), "ms");
  }

  xl::manual_seed(5);
  {
    Model m = make_model(0);
    xl::Tensor out = forward(m);
    std::string text = xl::debug::graph_text({out});
    note("compile graph: " + std::to_string(count_nodes(text)) + " IR nodes (" + std::to_string(kBlocks) + " blocks)");
    xl::debug::MemoryStats st = xl::debug::memory_stats({out});
    note("compile graph fusion (" + std::to_string(st.kernels) + " kernels):\n" + st.fusion);
  }
  // Cold (new graph, new regions) after the JIT is up: variants 1..runs.
  std::vector<Model> models;
  std::vector<double> cold;
  bool all_uncached = true;
  for (int r = 1; r <= g_runs; ++r) {
    models.push_back(make_model(r));
    bool uncached = false;
    cold.push_back(compile_once(models.back(), &uncached));
    all_uncached = all_uncached && uncached;
  }
  emit("compile_100.uncached_ms", median(cold), "ms");
  // The executable cache holds one program (XLITE_COMPILATION_CACHE_SIZE=1, set in main for this mode),
  // so compiling variant r again after the others is an executable-cache miss whose every region is
  // already in the kernel cache: what a recompile of known regions costs.
  std::vector<double> again;
  for (int r = 0; r < g_runs; ++r) {
    bool uncached = false;
    again.push_back(compile_once(models[r], &uncached));
    all_uncached = all_uncached && uncached;
  }
  emit("compile_100.regions_cached_ms", median(again), "ms");
  // A graph never seen before made of two seen ones (variants 1 and 2 together): also only cached regions.
  std::vector<double> joined;
  for (int r = 0; r < g_runs; ++r) {
    xl::Tensor o1 = forward(models[r]), o2 = forward(models[(r + 1) % g_runs]);
    int64_t before = xl::metrics::counter_value("UncachedCompile");
    xl::sync({o1, o2});
    all_uncached = all_uncached && xl::metrics::counter_value("UncachedCompile") == before + 1;
    joined.push_back(last_compile_ms());
  }
  emit("compile_200_joined.regions_cached_ms", median(joined), "ms");
  note(std::string("compile: every timed compile was an executable-cache miss: ") + (all_uncached ? "yes" : "NO"));
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  note("settings: xlite_bench" + env_settings({"XLITE_BACKEND", "OMP_NUM_THREADS", "OMP_WAIT_POLICY"}) +
       " runs=" + std::to_string(g_runs));
  try {
    if (what == "compile") {
      // See bench_compile: one executable kept, so a second compile of a graph is a real compile.
      setenv("XLITE_COMPILATION_CACHE_SIZE", "1", 1);
      bench_compile(true);
      return 0;
    }
    if (what == "all" || what == "elementwise") bench_elementwise();
    if (what == "all" || what == "norm") bench_norm();
    if (what == "all" || what == "sums") bench_sums();
    if (what == "all" || what == "matmul") bench_matmul();
    if (what == "all" || what == "gmm") bench_gmm();
    // bench/attention.sh runs these beside PyTorch's kernels; the largest cases take minutes.
    if (what == "attention") bench_attention();
    if (what == "attention_bf16") bench_attention_bf16();
    if (what == "paged") bench_paged_attention();
    if (what == "all" || what == "eager") bench_eager();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xlite_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
