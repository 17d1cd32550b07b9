// libtorch 1.13 (Debian's libtorch-dev, the C++ API with oneDNN) as a peer of bench/peer_workloads.cpp: the
// same memory-bound workloads (peer_cases.h) on the same inputs (peer_inputs.h), timed the same way (bench/timing.h's
// time_one: warm-up calls, then the median of back-to-back calls), so that bench/peers.sh can run libtorch
// beside PyTorch 2.x, JAX and PyTorch/XLA. libtorch 1.13 has no rms_norm: it is written from its ops, as
// JAX's is in bench/peers.py. It runs with the Python peers' settings (bench/peer_common.sh), but 1.13 does
// not read THP_MEM_ALLOC_ENABLE: its large buffers get transparent huge pages only where the kernel's THP
// mode gives them to every mapping.
//
// Output: `<workload>.<size>.libtorch_ms`, `.libtorch_memcpy_ms` (a copy of the same traffic in this
// process) and `.libtorch_check`, the weighted sum of sampled outputs that peer_workloads prints.
//
// Usage: torch_workloads_peer [all|chains|rows|alone] [runs]
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "peer_cases.h"
#include "peer_inputs.h"
#include "timing.h"
#include "torch_models.h"

namespace {

using namespace bench_timing;

// libtorch's side of peer_cases.h.
struct Libtorch {
  using Tensor = torch::Tensor;

  Tensor weight = torch::ones({peer_inputs::kColumns});
  Tensor bias = torch::zeros({peer_inputs::kColumns});

  static Tensor tanh(const Tensor& x) { return torch::tanh(x); }
  static Tensor sigmoid(const Tensor& x) { return torch::sigmoid(x); }
  static Tensor gelu(const Tensor& x) { return torch::gelu(x); }
  static Tensor exp(const Tensor& x) { return torch::exp(x); }
  static Tensor log(const Tensor& x) { return torch::log(x); }
  static Tensor abs(const Tensor& x) { return torch::abs(x); }

  Tensor input(const std::vector<int64_t>& shape) {
    return torch_models::from_host(peer_inputs::input_values(peer_inputs::element_count(shape)), shape);
  }

  Tensor targets(int64_t rows) {
    return torch_models::from_host(peer_inputs::target_values(rows, peer_inputs::kColumns), {rows});
  }

  Tensor softmax(const Tensor& x) { return torch::softmax(x, -1); }
  Tensor layernorm(const Tensor& x) { return torch::layer_norm(x, {peer_inputs::kColumns}, weight, bias, 1e-5); }
  Tensor rmsnorm(const Tensor& x) { return x * torch::rsqrt(x.square().mean(-1, true) + 1e-6) * weight; }
  Tensor cross_entropy(const Tensor& x, const Tensor& target) {
    return torch::nn::functional::cross_entropy(x, target);
  }
  Tensor cross_entropy_grad(const Tensor& x, const Tensor& target) {
    Tensor logits = x.detach().requires_grad_();
    torch::nn::functional::cross_entropy(logits, target).backward();
    return logits.grad();
  }

  // Times fn back to back, then a memcpy of `copy_bytes`, and prints the three lines of one case.
  void run_case(const std::string& name, const std::function<Tensor()>& fn, size_t copy_bytes) {
    Memcpy copy(copy_bytes);
    const double t = time_one([&] {
      Tensor y = fn();
      asm volatile("" ::"r"(y.data_ptr()) : "memory");
    });
    const double t_memcpy = time_one(copy);
    emit(name + ".libtorch_ms", t * 1e3, "ms");
    emit(name + ".libtorch_memcpy_ms", t_memcpy * 1e3, "ms");
    Tensor out = fn().detach().contiguous();
    emit_check(name + ".libtorch_check",
               peer_inputs::checksum(out.data_ptr<float>(), static_cast<size_t>(out.numel())));
    std::fflush(stdout);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  torch_models::set_threads_from_env();
  std::printf("# settings: torch " TORCH_VERSION " threads=%d%s runs=%d\n", torch::get_num_threads(),
              env_settings(
                  {"OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GLIBC_TUNABLES", "THP_MEM_ALLOC_ENABLE"})
                  .c_str(),
              g_runs);
  return peer_cases::run_or_report<Libtorch>(what, "torch_workloads_peer");
}
