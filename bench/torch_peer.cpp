// The libtorch (PyTorch 1.13 C++, Debian libtorch-dev) peer of bench/xlite_bench.cpp: the same workloads,
// timed the same way (warm-up, then the median of >= 5 runs), printed as `name value unit`.
// Kept in its own program because a file including torch/torch.h takes ~25 s and ~1 GB to compile.
//
// Run it with the fair settings (bench/run.sh does): OPENBLAS_CORETYPE unset, OMP_WAIT_POLICY=PASSIVE,
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184, 2 threads.
//
// Usage: torch_peer [all|elementwise|norm|matmul|eager] [runs]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "timing.h"

namespace {

using namespace bench_timing;  // g_runs, now_s, median, emit, time_one, time_pair, Memcpy

torch::Tensor chain10(const torch::Tensor& x) {
  torch::Tensor y = x * 1.5;
  y = y + 0.25;
  y = torch::abs(y);
  y = torch::sqrt(y);
  y = y - 0.5;
  y = torch::relu(y);
  y = torch::square(y);
  y = torch::clamp_max(y, 4.0);
  y = torch::tanh(y);
  y = y * 0.5;
  return y;
}

void bench_elementwise() {
  const int64_t n = int64_t{1} << 24;
  torch::manual_seed(1);
  torch::Tensor x = torch::randn({n});
  Memcpy copy(static_cast<size_t>(n) * sizeof(float));
  auto run = [&] {
    torch::Tensor y = chain10(x);
    asm volatile("" ::"r"(y.data_ptr()) : "memory");
  };
  auto [t, t_memcpy] = time_pair(run, copy);
  emit("chain10_16M.torch_ms", t * 1e3, "ms");
  emit("chain10_16M.torch_memcpy_ms", t_memcpy * 1e3, "ms");
}

void bench_norm() {
  const int64_t rows = 8192, cols = 1024;
  torch::manual_seed(2);
  torch::Tensor x = torch::randn({rows, cols});
  torch::Tensor w = torch::rand({cols}) + 0.5;
  torch::Tensor b = torch::randn({cols});
  Memcpy copy(static_cast<size_t>(rows * cols) * sizeof(float));
  auto softmax = [&] {
    torch::Tensor y = torch::softmax(x, -1);
    asm volatile("" ::"r"(y.data_ptr()) : "memory");
  };
  auto ln = [&] {
    torch::Tensor y = torch::layer_norm(x, {cols}, w, b, 1e-5);
    asm volatile("" ::"r"(y.data_ptr()) : "memory");
  };
  auto [t_s, t_m1] = time_pair(softmax, copy);
  auto [t_l, t_m2] = time_pair(ln, copy);
  emit("softmax_8192x1024.torch_ms", t_s * 1e3, "ms");
  emit("softmax_8192x1024.torch_memcpy_ms", t_m1 * 1e3, "ms");
  emit("layernorm_8192x1024.torch_ms", t_l * 1e3, "ms");
  emit("layernorm_8192x1024.torch_memcpy_ms", t_m2 * 1e3, "ms");
}

void bench_matmul_shape(int64_t m, int64_t k, int64_t n) {
  std::string tag = "matmul_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  torch::manual_seed(3);
  torch::Tensor a = torch::randn({m, k}), b = torch::randn({k, n});
  auto run = [&] {
    torch::Tensor c = torch::matmul(a, b);
    asm volatile("" ::"r"(c.data_ptr()) : "memory");
  };
  emit(tag + ".torch_ms", time_one(run) * 1e3, "ms");
}

// The same 10-op sequence as eager_step in bench/xlite_bench.cpp.
constexpr int kEagerOpsPerStep = 10;
torch::Tensor eager_step(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor t = a + b;
  t = t * a;
  t = torch::relu(t);
  t = t - b;
  t = torch::tanh(t);
  t = torch::maximum(t, a);
  t = torch::exp(t);
  t = t * 0.5;
  t = torch::neg(t);
  return torch::sum(t, {0});
}

double eager_per_op() {
  torch::manual_seed(4);
  torch::Tensor a = torch::randn({16}), b = torch::randn({16});
  const int steps = 2000;
  auto run = [&] {
    for (int s = 0; s < steps; ++s) {
      torch::Tensor r = eager_step(a, b);
      asm volatile("" ::"r"(&r) : "memory");
    }
  };
  return time_one(run, 1) / (steps * kEagerOpsPerStep);
}

void bench_eager() {
  // Default mode (grad mode on, tensors that do not require grad): plain libtorch eager.
  emit("eager_16elem.torch_per_op_us", eager_per_op() * 1e6, "us");
  // InferenceMode skips autograd and version-counter bookkeeping: libtorch's fastest eager path.
  c10::InferenceMode guard;
  emit("eager_16elem.torch_inference_mode_per_op_us", eager_per_op() * 1e6, "us");
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  torch::set_num_threads(2);
  std::printf("# settings: torch " TORCH_VERSION " threads=%d%s runs=%d\n", torch::get_num_threads(),
              env_settings({"OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GLIBC_TUNABLES"}).c_str(),
              g_runs);
  if (what == "all" || what == "elementwise") bench_elementwise();
  if (what == "all" || what == "norm") bench_norm();
  if (what == "all" || what == "matmul") {
    bench_matmul_shape(1024, 1024, 1024);
    bench_matmul_shape(512, 768, 3072);
  }
  if (what == "all" || what == "eager") bench_eager();
  return 0;
}
