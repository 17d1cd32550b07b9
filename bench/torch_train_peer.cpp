// The libtorch (PyTorch 1.13 C++, Debian libtorch-dev) peer of bench/train_bench.cpp: the same training
// workloads from the same weights and data (bench/train_common.h), timed the same way (warm-up, then the
// median of >= 5 runs), printed as `name value unit`, plus the same check values (`*.torch_check.*`) that
// bench/table.awk compares with xlite's.
//
//   mlp          nn::Linear/ReLU modules, cross_entropy, backward, torch::optim::SGD (lr 0.01)
//   transformer  the pre-LN block of bench/torch_models.h (libtorch's plain ops, the computation of xlite's
//                nn::LayerNorm / nn::CausalSelfAttention / nn::MLP op for op); loss = mean(output), backward
//
// Gradients are reset to undefined before each backward (PyTorch 2's zero_grad(set_to_none=True)).
// Run with the fair settings (bench/run.sh does): OPENBLAS_CORETYPE unset, OMP_WAIT_POLICY=PASSIVE,
// GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=17179869184, 2 threads.
//
// Usage: torch_train_peer [all|mlp|transformer] [runs]
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "timing.h"
#include "torch_models.h"
#include "train_common.h"

namespace {

using namespace bench_timing;
using namespace bench_train;
using namespace torch_models;

void assign(torch::Tensor p, const std::vector<float>& values) {
  torch::NoGradGuard no_grad;
  p.copy_(from_host(values, p.sizes()));
}

void emit_grad_checks(const std::string& tag, const std::vector<std::pair<std::string, torch::Tensor>>& params) {
  for (const auto& [name, p] : params) {
    GradStats s = grad_stats(name, to_host(p.grad()));
    emit_check(tag + ".torch_check.gradsq." + name, s.sq);
    emit_check(tag + ".torch_check.probe." + name, s.probe);
  }
}

// ---------------------------------------------------------------------------------------------------------
void bench_mlp() {
  torch::nn::Sequential net;
  std::vector<torch::nn::Linear> layers;
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (int i = 0; i < 3; ++i) {
    layers.emplace_back(kMlpDims[i], kMlpDims[i + 1]);
    net->push_back(layers.back());
    if (i < 2) net->push_back(torch::nn::ReLU());
    named.emplace_back("l" + std::to_string(i) + ".weight", layers.back()->weight);
    named.emplace_back("l" + std::to_string(i) + ".bias", layers.back()->bias);
  }
  auto reset = [&] {
    for (int i = 0; i < 3; ++i) {
      std::string l = "l" + std::to_string(i);
      assign(layers[i]->weight, linear_init(l + ".weight", kMlpDims[i + 1], kMlpDims[i], false));
      assign(layers[i]->bias, linear_init(l + ".bias", kMlpDims[i + 1], kMlpDims[i], true));
    }
  };
  reset();
  std::vector<torch::Tensor> params = net->parameters();
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(kMlpLr));
  torch::Tensor x = from_host(uniform(kMlpBatch * kMlpIn, seed_of("mlp.x"), 1.0f), {kMlpBatch, kMlpIn});
  std::vector<int64_t> hy = labels(kMlpBatch, kMlpClasses, seed_of("mlp.y"));
  torch::Tensor y = from_host(hy, {kMlpBatch});

  auto step = [&] {
    for (torch::Tensor& p : params) p.mutable_grad() = torch::Tensor();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    sgd.step();
    return loss;
  };
  float l0 = step().item<float>();
  emit_grad_checks("mlp_train", named);
  float l1 = step().item<float>();
  emit_check("mlp_train.torch_check.loss0", l0);
  emit_check("mlp_train.torch_check.loss1", l1);
  reset();
  double t = time_one([&] {
    torch::Tensor loss = step();
    asm volatile("" ::"r"(loss.data_ptr()) : "memory");
  });
  emit("mlp_train.torch_ms", t * 1e3, "ms");
}

// ---------------------------------------------------------------------------------------------------------
void bench_transformer() {
  std::vector<ParamSpec> specs = block_params();
  Params p(specs);
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (const ParamSpec& s : specs) named.emplace_back(s.name, p[s.name]);
  torch::Tensor x =
      from_host(uniform(kTfBatch * kTfSeq * kTfModel, seed_of("tf.x"), 1.0f), {kTfBatch, kTfSeq, kTfModel});
  auto step = [&] {
    p.clear_grads();
    torch::Tensor loss = block_forward(p, "", kTfHeads, x).mean();
    loss.backward();
    return loss;
  };
  float l0 = step().item<float>();
  emit_grad_checks("transformer_train", named);
  emit_check("transformer_train.torch_check.loss0", l0);
  double t = time_one(
      [&] {
        torch::Tensor loss = step();
        asm volatile("" ::"r"(loss.data_ptr()) : "memory");
      },
      2);
  emit("transformer_train.torch_ms", t * 1e3, "ms");
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  set_threads_from_env();
  std::printf("# settings: torch_train_peer torch " TORCH_VERSION " threads=%d%s runs=%d\n", torch::get_num_threads(),
              env_settings({"OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GLIBC_TUNABLES"}).c_str(),
              g_runs);
  if (what == "all" || what == "mlp") bench_mlp();
  if (what == "all" || what == "transformer") bench_transformer();
  return 0;
}
