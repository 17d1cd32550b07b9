// xlite's side of the peer comparison (bench/peers.sh, issue "performance against every peer"): the
// memory-bound workloads where frameworks differ most, each at four sizes, timed against a memcpy of the
// same traffic in the same process. bench/peers.py runs the same workloads, on the same inputs, in PyTorch
// 2.x eager, torch.compile (inductor) and JAX jit, bench/torch_workloads_peer.cpp in libtorch 1.13;
// bench/peers_table.py joins them.
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

#include "peer_cases.h"
#include "peer_inputs.h"
#include "timing.h"

namespace xl = xlite;
using namespace bench_timing;

namespace {

// xlite's side of peer_cases.h: each case traced, compiled on its first call and replayed from the cache after.
struct Xlite {
  using Tensor = xl::Tensor;

  xl::nn::LayerNorm layer_norm{peer_inputs::kColumns};
  xl::nn::RMSNorm rms_norm{peer_inputs::kColumns, 1e-6};

  static Tensor tanh(const Tensor& x) { return xl::tanh(x); }
  static Tensor sigmoid(const Tensor& x) { return xl::sigmoid(x); }
  static Tensor gelu(const Tensor& x) { return xl::gelu(x); }
  static Tensor exp(const Tensor& x) { return xl::exp(x); }
  static Tensor log(const Tensor& x) { return xl::log(x); }
  static Tensor abs(const Tensor& x) { return xl::abs(x); }

  Tensor input(const xl::Shape& shape) {
    std::vector<float> v = peer_inputs::input_values(peer_inputs::element_count(shape));
    Tensor t = xl::from_bytes(v.data(), shape, xl::DType::f32);
    xl::sync({t});
    return t;
  }

  Tensor targets(int64_t rows) {
    std::vector<int64_t> t = peer_inputs::target_values(rows, peer_inputs::kColumns);
    Tensor target = xl::from_bytes(t.data(), {rows}, xl::DType::i64);
    xl::sync({target});
    return target;
  }

  Tensor softmax(const Tensor& x) { return xl::softmax(x, -1); }
  Tensor layernorm(const Tensor& x) { return layer_norm(x); }
  Tensor rmsnorm(const Tensor& x) { return rms_norm(x); }
  Tensor cross_entropy(const Tensor& x, const Tensor& target) { return xl::nn::cross_entropy(x, target); }

  // The gradient of the mean cross-entropy of `logits`, and the loss, which a training step reports, traced
  // with gradients on as a step traces them.
  std::vector<Tensor> cross_entropy_grad(const Tensor& logits, const Tensor& target) {
    const bool was_enabled = xl::is_grad_enabled();
    xl::set_grad_enabled(true);
    Tensor x = logits.detach();
    x.requires_grad_();
    Tensor loss = xl::nn::cross_entropy(x, target);
    loss.backward();
    xl::set_grad_enabled(was_enabled);
    return {x.grad(), loss};
  }

  // Times fn (all its results in one sync), then a memcpy of `copy_bytes`, and prints the three lines of one
  // case; the check reads the first result.
  void run_case(const std::string& name, const std::function<std::vector<Tensor>()>& fn, size_t copy_bytes) {
    xl::debug::MemoryStats stats = xl::debug::memory_stats(fn());
    note(name + ": " + std::to_string(stats.kernels) + " kernels, temp " + std::to_string(stats.temp_bytes) +
         " bytes\n" + stats.fusion);
    Memcpy copy(copy_bytes);
    auto timed = [&] { xl::sync(fn()); };
    // Back to back, as bench/peers.py times the peers, so that every framework runs on the caches its own
    // previous call left (interleaving the copy, as time_pair does, evicts the last level cache between
    // calls: at 4M floats the input fits in it).
    const double t_xlite = time_one(timed);
    const double t_memcpy = time_one(copy);
    emit(name + ".xlite_ms", t_xlite * 1e3, "ms");
    emit(name + ".memcpy_ms", t_memcpy * 1e3, "ms");
    std::vector<float> first = fn()[0].to_vector<float>();
    emit_check(name + ".check", peer_inputs::checksum(first.data(), first.size()));
    std::fflush(stdout);
  }

  void run_case(const std::string& name, const std::function<Tensor()>& fn, size_t copy_bytes) {
    run_case(name, [&] { return std::vector<Tensor>{fn()}; }, copy_bytes);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  note("settings: peer_workloads" + env_settings({"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "XLITE_FAST_MATH"}) +
       " runs=" + std::to_string(g_runs));
  xl::NoGradGuard no_grad;
  return peer_cases::run_or_report<Xlite>(what, "peer_workloads");
}
