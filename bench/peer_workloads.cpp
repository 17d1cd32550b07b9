// xlite's side of the peer comparison (bench/peers.sh, issue "performance against every peer"): the
// memory-bound workloads where frameworks differ most, each at four sizes, timed against a memcpy of the
// same traffic in the same process. bench/peers.py runs the same workloads, on the same inputs, in PyTorch
// 2.x eager, torch.compile (inductor) and JAX jit; bench/peers_table.py joins the two.
//
//   chain_tanh_sigmoid_gelu  12 elementwise ops with tanh, sigmoid and gelu (erf)    n = 1M .. 64M f32
//   chain_exp_log_tanh       11 elementwise ops with exp, log and tanh               n = 1M .. 64M f32
//   softmax / layernorm / rmsnorm over rows of 1024                                  rows = 1K .. 64K
//   cross_entropy            mean loss of [rows, 1024] logits against int64 targets  rows = 1K .. 64K
//   cross_entropy_grad       that loss and its gradient, as a training step's head computes them
//   alone.<fn>               one transcendental alone at 16M, to compare with the chains
//
// Output (bench/timing.h): `<workload>.<size>.xlite_ms`, `.memcpy_ms` (a copy moving as many bytes as the
// workload must: input read once, output written once; timed after the workload), and `.check`, a weighted
// sum of sampled outputs that peers.py computes the same way, so the table can show that every framework
// computed the same thing.
//
// Usage: peer_workloads [all|chains|rows|alone] [runs]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "timing.h"

namespace xl = xlite;
using namespace bench_timing;

namespace {

// The input both sides build: a fixed hash of the index mapped to [-3, 3), exact in double before the
// rounding to f32, so NumPy makes the same floats.
std::vector<float> input_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t h = (static_cast<uint64_t>(i) * 2654435761ull) & 0xffffffffull;
    v[static_cast<size_t>(i)] = static_cast<float>(static_cast<double>(h) / 4294967296.0 * 6.0 - 3.0);
  }
  return v;
}

xl::Tensor input_tensor(const xl::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v = input_values(n);
  xl::Tensor t = xl::from_bytes(v.data(), shape, xl::DType::f32);
  xl::sync({t});
  return t;
}

// Sum over every 997th element of out[k] * (k % 13 - 6): the same in peers.py.
double checksum(const xl::Tensor& out) {
  std::vector<float> v = out.to_vector<float>();
  double sum = 0;
  for (size_t k = 0; k < v.size(); k += 997) sum += v[k] * static_cast<double>(static_cast<int64_t>(k % 13) - 6);
  return sum;
}

xl::Tensor chain_tanh_sigmoid_gelu(const xl::Tensor& x) {
  xl::Tensor y = x * 0.5f + 0.1f;
  y = xl::tanh(y);
  y = y * 1.7f - 0.2f;
  y = xl::sigmoid(y);
  y = y * 3.0f - 1.0f;
  y = xl::gelu(y);
  y = y + 0.05f;
  y = y * y;
  return y * 0.9f;
}

xl::Tensor chain_exp_log_tanh(const xl::Tensor& x) {
  xl::Tensor y = x * 0.5f;
  y = xl::exp(y);
  y = y + 1.0f;
  y = xl::log(y);
  y = y * 2.0f - 0.3f;
  y = xl::tanh(y);
  y = y * 0.8f + 0.1f;
  y = xl::abs(y);
  return y * 1.25f;
}

xl::Tensor targets_for(int64_t rows, int64_t classes) {
  std::vector<int64_t> t(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) t[static_cast<size_t>(i)] = (i * 7919) % classes;
  xl::Tensor target = xl::from_bytes(t.data(), {rows}, xl::DType::i64);
  xl::sync({target});
  return target;
}

// Times fn (traced, compiled on the first call, replayed from the cache after; all its results in one
// sync), then a memcpy of `copy_bytes`, and prints the three lines of one case; the check reads the first
// result.
void run_case(const std::string& name, const std::function<std::vector<xl::Tensor>()>& fn, size_t copy_bytes) {
  xl::debug::MemoryStats stats = xl::debug::memory_stats(fn());
  note(name + ": " + std::to_string(stats.kernels) + " kernels, temp " + std::to_string(stats.temp_bytes) + " bytes\n" +
       stats.fusion);
  Memcpy copy(copy_bytes);
  auto timed = [&] { xl::sync(fn()); };
  // Back to back, as bench/peers.py times the peers, so that every framework runs on the caches its own
  // previous call left (interleaving the copy, as time_pair does, evicts the last level cache between
  // calls: at 4M floats the input fits in it).
  const double t_xlite = time_one(timed);
  const double t_memcpy = time_one(copy);
  emit(name + ".xlite_ms", t_xlite * 1e3, "ms");
  emit(name + ".memcpy_ms", t_memcpy * 1e3, "ms");
  emit_check(name + ".check", checksum(fn()[0]));
  std::fflush(stdout);
}

void run_case(const std::string& name, const std::function<xl::Tensor()>& fn, size_t copy_bytes) {
  run_case(name, [&] { return std::vector<xl::Tensor>{fn()}; }, copy_bytes);
}

// The gradient of the mean cross-entropy of `logits` (and the loss, which a training step reports), traced
// with gradients on as a step traces them.
std::vector<xl::Tensor> cross_entropy_and_gradient(const xl::Tensor& logits, const xl::Tensor& target) {
  const bool was_enabled = xl::is_grad_enabled();
  xl::set_grad_enabled(true);
  xl::Tensor x = logits.detach();
  x.requires_grad_();
  xl::Tensor loss = xl::nn::cross_entropy(x, target);
  loss.backward();
  xl::set_grad_enabled(was_enabled);
  return {x.grad(), loss};
}

std::string size_label(int64_t n) { return std::to_string(n >> 20) + "M"; }

void bench_chains() {
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24, int64_t{1} << 26}) {
    xl::Tensor x = input_tensor({n});
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    run_case("chain_tanh_sigmoid_gelu." + size_label(n), [&] { return chain_tanh_sigmoid_gelu(x); }, bytes);
    run_case("chain_exp_log_tanh." + size_label(n), [&] { return chain_exp_log_tanh(x); }, bytes);
  }
}

void bench_alone() {
  const int64_t n = int64_t{1} << 24;
  xl::Tensor x = input_tensor({n});
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  run_case("alone.tanh", [&] { return xl::tanh(x); }, bytes);
  run_case("alone.sigmoid", [&] { return xl::sigmoid(x); }, bytes);
  run_case("alone.gelu", [&] { return xl::gelu(x); }, bytes);
  run_case("alone.exp", [&] { return xl::exp(x); }, bytes);
  run_case("alone.log", [&] { return xl::log(xl::abs(x)); }, bytes);
}

void bench_rows() {
  const int64_t cols = 1024;
  for (int64_t rows : {int64_t{1} << 10, int64_t{1} << 12, int64_t{1} << 14, int64_t{1} << 16}) {
    xl::Tensor x = input_tensor({rows, cols});
    xl::nn::LayerNorm layernorm(cols);
    xl::nn::RMSNorm rmsnorm(cols, 1e-6);
    xl::Tensor target = targets_for(rows, cols);
    const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(float);
    const std::string size = size_label(rows * cols);
    run_case("softmax." + size, [&] { return xl::softmax(x, -1); }, bytes);
    run_case("layernorm." + size, [&] { return layernorm(x); }, bytes);
    run_case("rmsnorm." + size, [&] { return rmsnorm(x); }, bytes);
    // The loss reads the logits once and writes a scalar: half a copy's traffic.
    run_case("cross_entropy." + size, [&] { return xl::nn::cross_entropy(x, target); }, bytes / 2);
    // Reads the logits, writes their gradient: a copy's traffic.
    run_case("cross_entropy_grad." + size, [&] { return cross_entropy_and_gradient(x, target); }, bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  note("settings: peer_workloads" + env_settings({"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "XLITE_FAST_MATH"}) +
       " runs=" + std::to_string(g_runs));
  xl::NoGradGuard no_grad;
  try {
    if (what == "all" || what == "chains") bench_chains();
    if (what == "all" || what == "alone") bench_alone();
    if (what == "all" || what == "rows") bench_rows();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_workloads: %s\n", e.what());
    return 1;
  }
  return 0;
}
