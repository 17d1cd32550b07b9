// libtorch 1.13 (Debian's libtorch-dev, the C++ API with oneDNN) as a peer of bench/peer_training.cpp: the
// training cases of bench/training_cases.h from the same weights and data (bench/train_common.h), measured the
// same way (training_cases::measure), so that bench/train_peers.sh runs libtorch beside PyTorch 2.x, JAX and
// PyTorch/XLA. The models are bench/torch_models.h's (libtorch 1.13 has no scaled_dot_product_attention: the
// attention is written from its ops); the MLP uses torch::linear and torch::optim::SGD, chargpt
// torch::optim::AdamW, and the bf16 block libtorch's CPU autocast (products in bf16, as torch.autocast).
// Gradients are reset to undefined before each step (PyTorch 2's zero_grad(set_to_none=True)).
//
// Output: `<case>.libtorch_ms`, `_peak_MiB`, `_steady_MiB` and `_check`, as bench/train_peers.py prints them.
//
// Usage: torch_training_peer CASE [runs]
#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "timing.h"
#include "torch_models.h"
#include "train_common.h"
#include "training_cases.h"

namespace {

using namespace bench_timing;
using namespace bench_train;
using namespace torch_models;
using training_cases::Steps;

// A step that returns its loss: the check is the loss after one update from the shared initial weights.
Steps loss_steps(std::function<torch::Tensor()> step) {
  return {[step] {
            step();
            return static_cast<double>(step().item<float>());
          },
          [step] {
            torch::Tensor loss = step();
            asm volatile("" ::"r"(loss.data_ptr()) : "memory");
          }};
}

Steps mlp_case(int64_t batch) {
  std::vector<ParamSpec> specs;
  for (int i = 0; i < 3; ++i) {
    specs.push_back({"l" + std::to_string(i) + ".weight", {kMlpDims[i + 1], kMlpDims[i]}});
    specs.push_back({"l" + std::to_string(i) + ".bias", {kMlpDims[i + 1]}});
  }
  auto p = std::make_shared<Params>(specs);
  auto sgd = std::make_shared<torch::optim::SGD>(p->list, torch::optim::SGDOptions(kMlpLr));
  torch::Tensor x = from_host(uniform(batch * kMlpIn, seed_of("mlp.x"), 1.0f), {batch, kMlpIn});
  torch::Tensor y = from_host(labels(batch, kMlpClasses, seed_of("mlp.y")), {batch});
  return loss_steps([p, sgd, x, y] {
    p->clear_grads();
    torch::Tensor h = x;
    for (int i = 0; i < 3; ++i) {
      const std::string l = "l" + std::to_string(i);
      h = torch::linear(h, (*p)[l + ".weight"], (*p)[l + ".bias"]);
      if (i < 2) h = torch::relu(h);
    }
    torch::Tensor loss = torch::nn::functional::cross_entropy(h, y);
    loss.backward();
    sgd->step();
    return loss;
  });
}

Steps gpt_case(int64_t batch) {
  auto p = std::make_shared<Params>(gpt_params());
  auto adamw = std::make_shared<torch::optim::AdamW>(
      p->list,
      torch::optim::AdamWOptions(kGptLr).betas({kGptBeta1, kGptBeta2}).eps(kGptEps).weight_decay(kGptWeightDecay));
  torch::Tensor x = from_host(labels(batch * kGptContext, kGptVocab, seed_of("gpt.x")), {batch, kGptContext});
  torch::Tensor y = from_host(labels(batch * kGptContext, kGptVocab, seed_of("gpt.y")), {batch, kGptContext});
  return loss_steps([p, adamw, x, y] {
    p->clear_grads();
    torch::Tensor loss = gpt_loss(*p, x, y);
    loss.backward();
    adamw->step();
    return loss;
  });
}

// The block's forward under libtorch's CPU autocast to bf16 when `bf16`, as torch.autocast("cpu") opens it.
torch::Tensor block_loss(const Params& p, const torch::Tensor& x, bool bf16) {
  if (!bf16) return block_forward(p, "", kTfHeads, x).mean();
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::increment_nesting();
  torch::Tensor loss;
  try {
    loss = block_forward(p, "", kTfHeads, x).to(torch::kFloat32).mean();
  } catch (...) {
    at::autocast::decrement_nesting();
    at::autocast::set_cpu_enabled(false);
    throw;
  }
  // Leaving the outermost autocast region drops its cache of cast weights, as torch.autocast's exit does.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(false);
  return loss;
}

Steps block_case(int64_t seq, bool bf16) {
  auto p = std::make_shared<Params>(block_params());
  const int64_t batch = training_cases::kBlockTokens / seq;
  torch::Tensor x = from_host(uniform(batch * seq * kTfModel, seed_of("tf.x"), 1.0f), {batch, seq, kTfModel});
  auto step = [p, x, bf16] {
    p->clear_grads();
    torch::Tensor loss = block_loss(*p, x, bf16);
    loss.backward();
    return loss;
  };
  // Timed as the loss steps are; the check is the sum of squared gradients instead of the loss.
  Steps s = loss_steps(step);
  s.check = [p, step] {
    step();
    return p->grad_sq();
  };
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: torch_training_peer CASE [runs]\n");
    return 2;
  }
  const std::string name = argv[1];
  if (argc > 2) g_runs = std::max(5, std::atoi(argv[2]));
  set_threads_from_env();
  std::printf(
      "# settings: torch_training_peer libtorch " TORCH_VERSION " threads=%d%s runs=%d\n", torch::get_num_threads(),
      env_settings({"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GLIBC_TUNABLES", "THP_MEM_ALLOC_ENABLE"}).c_str(), g_runs);
  try {
    const training_cases::Case c = training_cases::parse(name);
    Steps s = c.workload == "mlp"       ? mlp_case(c.size)
              : c.workload == "chargpt" ? gpt_case(c.size)
                                        : block_case(c.size, c.workload == "transformer_bf16");
    const double check = training_cases::measure(name, "libtorch", c, s);
    emit_check(name + ".libtorch_check", check);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_training_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
