// xlite's side of the training comparison (bench/train_peers.sh, issue "performance against every peer"):
// one case per process, so that each process's peak memory belongs to that case alone. bench/train_peers.py
// runs the same cases from the same weights and data (bench/train_common.h) in PyTorch 2.x eager,
// torch.compile (inductor) and JAX jit; bench/peers_table.py joins them.
//
//   mlp.b<batch>            MLP 784-1024-1024-10 (ReLU), cross-entropy, SGD (lr 0.01): a full step
//   transformer.s<seq>      the pre-LN block of train_bench (d_model 512, 8 heads, causal, 4x tanh-GELU MLP),
//                           2048 tokens per step (batch = 2048 / seq): forward + backward of mean(output)
//   transformer_bf16.s<seq> the same under xlite::autocast(bf16) (products in bf16 through oneDNN)
//   chargpt.b<batch>        examples/chargpt.cpp's model (4 blocks, d_model 128, context 64, 96 tokens) and
//                           AdamW: a full step; tokens a second = batch * 64 / time
//
// Output (bench/timing.h): `<case>.<tag>_ms` (tag xlite, or xlite_eager with the mode argument `eager`),
// `<case>.limit_ms` (the step's matmul FLOPs at the FMA peak measured in this process; f32 cases only),
// `<case>.check` (MLP and chargpt: the loss after one update; block: the sum of squared gradient norms after
// one step)
// and two peaks of resident memory above the process's once the parameters and inputs exist:
// `<case>.<tag>_peak_MiB` over the whole case (the first calls, which compile, included) and
// `<case>.<tag>_steady_MiB` over the timed calls alone (what training holds once it runs).
//
// Usage: peer_training CASE [runs] [compiled|eager]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "fma_peak.h"
#include "process_memory.h"
#include "timing.h"
#include "train_models.h"

namespace xl = xlite;
namespace nn = xlite::nn;
using namespace bench_timing;
using namespace bench_train;

namespace {

constexpr int64_t kBlockTokens = kTfBatch * kTfSeq;  // tokens per block step at every sequence length

struct Case {
  std::string workload;  // mlp, transformer or transformer_bf16
  int64_t size = 0;      // the MLP's batch or the block's sequence length
};

Case parse_case(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 2 >= name.size()) throw std::runtime_error("bad case name: " + name);
  Case c{name.substr(0, dot), std::atoll(name.c_str() + dot + 2)};
  const bool mlp = c.workload == "mlp" && name[dot + 1] == 'b';
  const bool block = (c.workload == "transformer" || c.workload == "transformer_bf16") && name[dot + 1] == 's';
  const bool gpt = c.workload == "chargpt" && name[dot + 1] == 'b';
  if ((!mlp && !block && !gpt) || c.size <= 0 || (block && kBlockTokens % c.size != 0))
    throw std::runtime_error("unknown case " + name +
                             " (mlp.b<batch>, transformer[_bf16].s<seq> with seq | 2048, chargpt.b<batch>)");
  return c;
}

// A compiled (or, with eager, an eager) step: `check` runs first and returns the check value; `step` is timed.
struct Steps {
  std::function<double()> check;
  std::function<void()> step;
  double flops = 0;
};

// A training step (input, target) -> loss that also updates the weights, compiled or eager; the check is
// the loss after one update from the shared initial weights, which checks the gradients too.
template <typename Step>
Steps loss_steps(Step step, const xl::Tensor& x, const xl::Tensor& y, bool eager, double flops) {
  std::function<xl::Tensor()> run;
  if (eager)
    run = [=] { return step(x, y); };
  else
    run = [=, compiled = xl::compile(step)]() mutable { return compiled(x, y); };
  return {[run] {
            run();
            return static_cast<double>(run().item<float>());
          },
          [run] { xl::sync({run()}); }, flops};
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
  return loss_steps(step, x, y, eager, mlp_step_flops(batch));
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
  return loss_steps(step, x, y, eager, gpt_step_flops(batch));
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
          [run] { xl::sync({run()}); }, block_step_flops(batch, seq)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peer_training CASE [runs] [compiled|eager]\n");
    return 2;
  }
  const std::string name = argv[1];
  if (argc > 2) g_runs = std::max(5, std::atoi(argv[2]));
  const bool eager = argc > 3 && std::string(argv[3]) == "eager";
  const std::string tag = eager ? "xlite_eager" : "xlite";
  note("settings: peer_training " + tag +
       env_settings({"XLITE_BACKEND", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "XLITE_FAST_MATH"}) +
       " runs=" + std::to_string(g_runs));
  try {
    Case c = parse_case(name);
    // Measured first: later, the runtime's idle OpenMP workers may still spin on the cores for a while.
    const double peak_gflops = eager ? 0 : bench_peak::fma_peak_gflops();
    std::unique_ptr<xl::EagerModeGuard> eager_mode;
    if (eager) eager_mode = std::make_unique<xl::EagerModeGuard>(true);
    Steps s = c.workload == "mlp"       ? mlp_case(c.size, eager)
              : c.workload == "chargpt" ? gpt_case(c.size, eager)
                                        : block_case(c.size, c.workload != "transformer", eager);
    const double base = bench_memory::status_mib("VmRSS");
    bench_memory::reset_peak_rss();
    const double check = s.check();
    for (int i = 0, warmup = c.workload.rfind("transformer", 0) == 0 ? 2 : 3; i < warmup; ++i) s.step();
    const double first = bench_memory::status_mib("VmHWM") - base;
    bench_memory::reset_peak_rss();
    const double t = time_one(s.step, 0);
    const double steady = bench_memory::status_mib("VmHWM") - base;
    emit(name + "." + tag + "_ms", t * 1e3, "ms");
    emit(name + "." + tag + "_peak_MiB", std::max(first, steady), "MiB");
    emit(name + "." + tag + "_steady_MiB", steady, "MiB");
    if (!eager) {
      emit_check(name + ".check", check);
      if (c.workload != "transformer_bf16") emit(name + ".limit_ms", s.flops / (peak_gflops * 1e9) * 1e3, "ms");
    } else {
      emit_check(name + "." + tag + "_check", check);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_training: %s\n", e.what());
    return 1;
  }
  return 0;
}
