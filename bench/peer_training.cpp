// xlite's side of the training comparison (bench/train_peers.sh, issue "performance against every peer"):
// the cases of bench/training_cases.h, one per process, so that each process's peak memory belongs to that
// case alone. bench/train_peers.py runs the same cases from the same weights and data (bench/train_common.h) in
// PyTorch 2.x eager, torch.compile (inductor), JAX jit and PyTorch/XLA, bench/torch_training_peer.cpp in
// libtorch 1.13; bench/peers_table.py joins them. The bf16 block runs under xlite::autocast(bf16) (products in
// bf16 through oneDNN); chargpt's tokens a second are batch * 64 / time.
//
// Output (bench/timing.h): training_cases::measure's time and memory lines with the tag xlite, `<case>.limit_ms`
// (the step's matmul FLOPs at the FMA peak measured in this process; f32 cases only) and `<case>.check`
// (training_cases::Steps says what it is). With the mode argument `eager` (xlite's eager mode) or
// `excess_precision` (compiled under xlite::set_excess_precision, xlite/math_mode.h) the tag is xlite_<mode>,
// and the check is `<case>.<tag>_check`.
//
// Usage: peer_training CASE [runs] [compiled|eager|excess_precision]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "fma_peak.h"
#include "timing.h"
#include "train_models.h"
#include "training_cases.h"

namespace xl = xlite;
namespace nn = xlite::nn;
using namespace bench_timing;
using namespace bench_train;

namespace {

using training_cases::kBlockTokens;
using training_cases::Steps;

// A training step (input, target) -> loss that also updates the weights, compiled or eager; the check is
// the loss after one update from the shared initial weights, which checks the gradients too.
template <typename Step>
Steps loss_steps(Step step, const xl::Tensor& x, const xl::Tensor& y, bool eager) {
  std::function<xl::Tensor()> run;
  if (eager)
    run = [=] { return step(x, y); };
  else
    run = [=, compiled = xl::compile(step)]() mutable { return compiled(x, y); };
  return {[run] {
            run();
            return static_cast<double>(run().item<float>());
          },
          [run] { xl::sync({run()}); }};
}

Steps mlp_case(int64_t batch, bool eager) {
  auto mlp = std::make_shared<Mlp>();
  mlp->reset();
  auto sgd = std::make_shared<xl::optim::SGD>(mlp->net.parameters(), kMlpLr);
  xl::Tensor x = xl::tensor(uniform(batch * kMlpIn, seed_of("mlp.x"), 1.0f), {batch, kMlpIn});
  xl::Tensor y = xl::tensor(labels(batch, kMlpClasses, seed_of("mlp.y")), {batch});
  xl::sync({x, y});
  auto step = [mlp, sgd](const xl::Tensor& input, const xl::Tensor& target) {
    sgd->zero_grad();
    xl::Tensor loss = nn::cross_entropy(mlp->net.forward(input), target);
    loss.backward();
    sgd->step();
    return loss;
  };
  return loss_steps(step, x, y, eager);
}

Steps gpt_case(int64_t batch, bool eager) {
  auto model = std::make_shared<Gpt>();
  auto adamw = std::make_shared<xl::optim::AdamW>(
      model->parameters(), kGptLr, xl::optim::AdamOptions{kGptBeta1, kGptBeta2, kGptEps, kGptWeightDecay});
  xl::Tensor x = xl::tensor(labels(batch * kGptContext, kGptVocab, seed_of("gpt.x")), {batch, kGptContext});
  xl::Tensor y = xl::tensor(labels(batch * kGptContext, kGptVocab, seed_of("gpt.y")), {batch, kGptContext});
  xl::sync({x, y});
  auto step = [model, adamw](const xl::Tensor& input, const xl::Tensor& target) {
    adamw->zero_grad();
    xl::Tensor logits = model->forward(input);
    xl::Tensor loss = nn::cross_entropy(xl::reshape(logits, {-1, kGptVocab}), xl::reshape(target, {-1}));
    loss.backward();
    adamw->step();
    return loss;
  };
  return loss_steps(step, x, y, eager);
}

Steps block_case(int64_t seq, bool bf16, bool eager) {
  auto block = std::make_shared<Block>();
  block->reset();
  const int64_t batch = kBlockTokens / seq;
  xl::Tensor x = xl::tensor(uniform(batch * seq * kTfModel, seed_of("tf.x"), 1.0f), {batch, seq, kTfModel});
  xl::sync({x});
  std::vector<xl::Tensor> params = block->parameters();
  auto step = [block, params, bf16](const xl::Tensor& input) {
    for (xl::Tensor p : params) p.reset_grad();
    xl::Tensor loss;
    {
      xl::autocast scope(xl::DType::bf16, bf16);
      loss = xl::mean(block->forward(input));
    }
    loss.backward();
    return loss;
  };
  std::function<xl::Tensor()> run;
  if (eager)
    run = [=] { return step(x); };
  else
    run = [=, compiled = xl::compile(step)]() mutable { return compiled(x); };
  return {[run, params] {
            run();
            double sq = 0;
            for (const xl::Tensor& p : params)
              for (float g : p.grad().to_vector<float>()) sq += static_cast<double>(g) * g;
            return sq;
          },
          [run] { xl::sync({run()}); }};
}

// Matmul FLOPs of one step of case c (train_models.h), for the step's time at the FMA peak.
double step_flops(const training_cases::Case& c) {
  if (c.workload == "mlp") return mlp_step_flops(c.size);
  if (c.workload == "chargpt") return gpt_step_flops(c.size);
  return block_step_flops(kBlockTokens / c.size, c.size);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peer_training CASE [runs] [compiled|eager|excess_precision]\n");
    return 2;
  }
  const std::string name = argv[1];
  if (argc > 2) g_runs = std::max(5, std::atoi(argv[2]));
  const std::string mode = argc > 3 ? argv[3] : "compiled";
  const bool eager = mode == "eager";
  if (mode != "compiled" && !eager && mode != "excess_precision") {
    std::fprintf(stderr, "peer_training: unknown mode %s (compiled, eager or excess_precision)\n", mode.c_str());
    return 2;
  }
  if (mode == "excess_precision") xl::set_excess_precision(true);
  const std::string tag = mode == "compiled" ? "xlite" : "xlite_" + mode;
  note("settings: peer_training " + tag +
       env_settings(
           {"XLITE_BACKEND", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "XLITE_FAST_MATH", "XLITE_EXCESS_PRECISION"}) +
       " runs=" + std::to_string(g_runs));
  try {
    const training_cases::Case c = training_cases::parse(name);
    // Measured first: later, the runtime's idle OpenMP workers may still spin on the cores for a while.
    const double peak_gflops = mode == "compiled" ? bench_peak::fma_peak_gflops() : 0;
    std::unique_ptr<xl::EagerModeGuard> eager_mode;
    if (eager) eager_mode = std::make_unique<xl::EagerModeGuard>(true);
    Steps s = c.workload == "mlp"       ? mlp_case(c.size, eager)
              : c.workload == "chargpt" ? gpt_case(c.size, eager)
                                        : block_case(c.size, c.workload != "transformer", eager);
    const double check = training_cases::measure(name, tag, c, s);
    if (mode == "compiled") {
      emit_check(name + ".check", check);
      if (c.workload != "transformer_bf16") emit(name + ".limit_ms", step_flops(c) / (peak_gflops * 1e9) * 1e3, "ms");
    } else {
      emit_check(name + "." + tag + "_check", check);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_training: %s\n", e.what());
    return 1;
  }
  return 0;
}
