// xlite training benchmarks; the libtorch side of each is bench/torch_train_peer.cpp, which starts from the
// same weights and data (bench/train_common.h), so the table can compare both times and numbers.
//
//   mlp          MLP 784-1024-1024-10 (ReLU), batch 256: forward, cross-entropy, backward, SGD (lr 0.01)
//   transformer  one pre-LN transformer block (d_model 512, 8 heads, seq 256, batch 8, causal, 4x GELU MLP):
//                forward + backward of loss = mean(output)
//   overhead     host time per call of a compiled step of ~1000 IR nodes on 4-element tensors
//
// Each of mlp and transformer runs through xlite::compile(step) (lazy tracing, one program per step) and,
// interleaved with it run by run, the same step function in eager mode (xlite::EagerModeGuard(true)).
// Output: `name value unit` lines (bench/table.awk) and '#' notes (settings, fusion, checks). A timed run
// is one call of the step, ending when its results are computed (compile() syncs before it returns).
//
// Usage: train_bench [all|mlp|transformer|overhead] [runs]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "fma_peak.h"
#include "timing.h"
#include "train_models.h"

namespace xl = xlite;
namespace nn = xlite::nn;
using namespace bench_timing;
using namespace bench_train;

namespace {

void zero_grads(const std::vector<xl::Tensor>& params) {
  for (const xl::Tensor& p : params) {
    xl::Tensor g = p.grad();
    if (g.defined()) g.zero_();
  }
}

// Emits the gradient summaries of named parameters as `<tag>.check.{gradsq,probe}.<name>` lines.
void emit_grad_checks(const std::string& tag, const std::vector<std::pair<std::string, xl::Tensor>>& params) {
  for (const auto& [name, p] : params) {
    GradStats s = grad_stats(name, p.grad().to_vector<float>());
    emit_check(tag + ".check.gradsq." + name, s.sq);
    emit_check(tag + ".check.probe." + name, s.probe);
  }
}

// Largest relative difference between two sets of gradient summaries (compiled vs eager in one process).
double grad_diff(const std::vector<GradStats>& a, const std::vector<GradStats>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::max(worst, std::fabs(a[i].sq - b[i].sq) / std::max(1e-30, std::fabs(b[i].sq)));
    worst = std::max(worst, std::fabs(a[i].probe - b[i].probe));
  }
  return worst;
}

std::vector<GradStats> all_grad_stats(const std::vector<std::pair<std::string, xl::Tensor>>& params) {
  std::vector<GradStats> out;
  for (const auto& [name, p] : params) out.push_back(grad_stats(name, p.grad().to_vector<float>()));
  return out;
}

std::string fmt(double v, const char* f = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Compiles (through the cache) the pending graph and notes its plan in one line: kernels, temporaries.
void note_plan(const std::string& what, const std::vector<xl::Tensor>& outputs) {
  xl::debug::MemoryStats st = xl::debug::memory_stats(outputs);
  std::string text = xl::debug::graph_text(outputs);
  note(what + ": " + std::to_string(count_nodes(text)) + " IR nodes, " + std::to_string(st.kernels) +
       " kernels, temp " + fmt(st.temp_bytes / 1048576.0, "%.1f") + " MiB, arguments " +
       fmt(st.argument_bytes / 1048576.0, "%.1f") + " MiB (XLITE_DEBUG=1 prints every fusion decision)");
}

// ---------------------------------------------------------------------------------------------------------
// 1. MLP training step.
void bench_mlp() {
  Mlp mlp;
  mlp.reset();
  xl::optim::SGD sgd(mlp.net.parameters(), kMlpLr);
  xl::Tensor x = xl::tensor(uniform(kMlpBatch * kMlpIn, seed_of("mlp.x"), 1.0f), {kMlpBatch, kMlpIn});
  xl::Tensor y = xl::tensor(labels(kMlpBatch, kMlpClasses, seed_of("mlp.y")), {kMlpBatch});
  xl::sync({x, y});

  auto step = [&](const xl::Tensor& input, const xl::Tensor& target) {
    sgd.zero_grad();
    xl::Tensor loss = nn::cross_entropy(mlp.net.forward(input), target);
    loss.backward();
    sgd.step();
    return loss;
  };
  auto compiled_step = xl::compile(step);

  // Check: from the shared initial weights, the loss of step 1, its gradients, and the loss of step 2
  // (after one SGD update); compiled and eager must agree here, and the table compares with libtorch.
  float c0 = compiled_step(x, y).item<float>();
  std::vector<GradStats> cg = all_grad_stats(mlp.named);
  emit_grad_checks("mlp_train", mlp.named);
  float c1 = compiled_step(x, y).item<float>();
  emit_check("mlp_train.check.loss0", c0);
  emit_check("mlp_train.check.loss1", c1);
  mlp.reset();
  float e0, e1;
  std::vector<GradStats> eg;
  {
    xl::EagerModeGuard eager(true);
    e0 = step(x, y).item<float>();
    eg = all_grad_stats(mlp.named);
    e1 = step(x, y).item<float>();
  }
  note("mlp check: compiled loss " + fmt(c0, "%.7f") + " then " + fmt(c1, "%.7f") + " after one SGD step; eager " +
       fmt(e0, "%.7f") + " then " + fmt(e1, "%.7f") + "; max gradient-summary difference compiled vs eager " +
       fmt(grad_diff(cg, eg), "%.2e") +
       (std::fabs(c0 - e0) <= 1e-4 * std::fabs(e0) && std::fabs(c1 - e1) <= 1e-4 * std::fabs(e1) ? " (ok)"
                                                                                                 : " (MISMATCH)"));
  mlp.reset();

  auto compiled = [&] {
    xl::Tensor loss = compiled_step(x, y);
    xl::sync({loss});
  };
  auto eager = [&] {
    xl::EagerModeGuard guard(true);
    xl::Tensor loss = step(x, y);
    xl::sync({loss});
  };
  int64_t uncached_before = xl::metrics::counter_value("UncachedCompile");
  compiled();
  int64_t uncached_warm = xl::metrics::counter_value("UncachedCompile");
  auto [t_compiled, t_eager] = time_pair(compiled, eager);
  int64_t uncached_compiled = xl::metrics::counter_value("UncachedCompile") - uncached_warm;
  (void)uncached_before;
  const double flops = mlp_step_flops(kMlpBatch);
  emit("mlp_train.compiled_ms", t_compiled * 1e3, "ms");
  emit("mlp_train.eager_ms", t_eager * 1e3, "ms");
  emit("mlp_train.compiled_GFLOPs", flops / t_compiled * 1e-9, "GFLOP/s");
  // The physical limit in this run: the step's matmul FLOPs at the measured FMA peak.
  const double peak = bench_peak::fma_peak_gflops();
  emit("mlp_train.fma_peak_GFLOPs", peak, "GFLOP/s");
  emit("mlp_train.peak_bound_ms", flops / (peak * 1e9) * 1e3, "ms");
  // The step's eight GEMMs alone, as one program with the same shapes and transposes: what the GEMM
  // library needs, however little the rest of the step costs. Timed interleaved with the step.
  {
    const xl::Tensor &w1 = mlp.layers[0]->weight, &w2 = mlp.layers[1]->weight, &w3 = mlp.layers[2]->weight;
    xl::Tensor a1 = xl::randn({kMlpBatch, kMlpHidden}), a2 = xl::randn({kMlpBatch, kMlpHidden});
    xl::Tensor g1 = xl::randn({kMlpBatch, kMlpHidden}), g2 = xl::randn({kMlpBatch, kMlpHidden});
    xl::Tensor g3 = xl::randn({kMlpBatch, kMlpClasses});
    xl::sync({a1, a2, g1, g2, g3});
    auto gemms = [&] {
      xl::NoGradGuard no_grad;
      xl::sync({xl::matmul(x, w1.t()), xl::matmul(a1, w2.t()), xl::matmul(a2, w3.t()),    // forward
                xl::matmul(g3, w3), xl::matmul(g2, w2),                                   // input gradients
                xl::matmul(g3.t(), a2), xl::matmul(g2.t(), a1), xl::matmul(g1.t(), x)});  // weight gradients
    };
    const double t_gemms = time_pair(gemms, compiled).first;
    emit("mlp_train.gemms_only_ms", t_gemms * 1e3, "ms");
  }
  note("mlp: " + std::to_string(uncached_compiled) +
       " uncached compiles during the timed runs (eager one-op programs included; 0 = all cache hits)");
  {
    // The plan of one lazy step (this runs one more real step).
    sgd.zero_grad();
    xl::Tensor loss = nn::cross_entropy(mlp.net.forward(x), y);
    loss.backward();
    sgd.step();
    std::vector<xl::Tensor> outs{loss};
    for (const auto& [n, p] : mlp.named) outs.push_back(p);
    note_plan("mlp step plan", outs);
    xl::sync();
  }
}

// ---------------------------------------------------------------------------------------------------------
// 2. Transformer block forward + backward.
void bench_transformer() {
  Block block;
  std::vector<std::pair<std::string, xl::Tensor>> named = block.named_parameters();
  block.reset();
  std::vector<xl::Tensor> params = block.parameters();
  xl::Tensor x = xl::tensor(uniform(kTfBatch * kTfSeq * kTfModel, seed_of("tf.x"), 1.0f), {kTfBatch, kTfSeq, kTfModel});
  xl::sync({x});

  auto step = [&](const xl::Tensor& input) {
    zero_grads(params);
    xl::Tensor loss = xl::mean(block.forward(input));
    loss.backward();
    return loss;
  };
  auto compiled_step = xl::compile(step);

  float c0 = compiled_step(x).item<float>();
  std::vector<GradStats> cg = all_grad_stats(named);
  emit_grad_checks("transformer_train", named);
  emit_check("transformer_train.check.loss0", c0);
  float e0;
  std::vector<GradStats> eg;
  {
    xl::EagerModeGuard eager(true);
    e0 = step(x).item<float>();
    eg = all_grad_stats(named);
  }
  const double gd = grad_diff(cg, eg);
  note("transformer check: compiled loss " + fmt(c0, "%.7f") + ", eager " + fmt(e0, "%.7f") +
       "; max gradient-summary difference compiled vs eager " + fmt(gd, "%.2e") +
       (std::fabs(c0 - e0) <= 1e-4 * std::fabs(e0) + 1e-6 && gd <= 1e-3 ? " (ok)" : " (MISMATCH)"));

  auto compiled = [&] {
    xl::Tensor loss = compiled_step(x);
    xl::sync({loss});
  };
  auto eager = [&] {
    xl::EagerModeGuard guard(true);
    xl::Tensor loss = step(x);
    xl::sync({loss});
  };
  compiled();
  int64_t uncached_warm = xl::metrics::counter_value("UncachedCompile");
  auto [t_compiled, t_eager] = time_pair(compiled, eager, 2);
  int64_t uncached = xl::metrics::counter_value("UncachedCompile") - uncached_warm;
  const double flops = block_step_flops(kTfBatch, kTfSeq);
  emit("transformer_train.compiled_ms", t_compiled * 1e3, "ms");
  emit("transformer_train.eager_ms", t_eager * 1e3, "ms");
  emit("transformer_train.compiled_GFLOPs", flops / t_compiled * 1e-9, "GFLOP/s");
  note("transformer: " + std::to_string(uncached) + " uncached compiles during the timed runs (0 = all cache hits)");
  {
    zero_grads(params);
    xl::Tensor loss = xl::mean(block.forward(x));
    loss.backward();
    std::vector<xl::Tensor> outs{loss};
    for (const xl::Tensor& p : params) outs.push_back(p.grad());
    note_plan("transformer step plan", outs);
    xl::sync();
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. Host overhead of a compiled step of ~1000 IR nodes on tiny tensors: a chain of kOverheadIters x
// (mul, add, sin, mul) over 4-element tensors, and an in-place update of a parameter.
xl::Tensor overhead_chain(const xl::Tensor& p, const xl::Tensor& a, const xl::Tensor& b, const xl::Tensor& c) {
  xl::Tensor h = p;
  for (int64_t i = 0; i < kOverheadIters; ++i) h = xl::sin(h * a + b) * c;
  return h;
}

void bench_overhead() {
  auto host = [](const char* name, float scale, float offset) {
    return xl::tensor(uniform(kOverheadElems, seed_of(name), scale, offset), {kOverheadElems});
  };
  xl::Tensor p = host("overhead.p", 1.0f, 0.0f), a = host("overhead.a", 0.5f, 1.0f), b = host("overhead.b", 0.5f, 0.0f),
             c = host("overhead.c", 0.25f, 1.0f);
  xl::sync();
  auto step = xl::compile([&] {
    xl::Tensor h = overhead_chain(p, a, b, c);
    p.sub_(h * 1e-3f);
    return h;
  });
  int nodes = 0;
  {
    xl::Tensor h = overhead_chain(p, a, b, c);
    xl::Tensor next = p - h * 1e-3f;
    nodes = count_nodes(xl::debug::graph_text({h, next}));
  }
  // Check one step against the host (double precision).
  std::vector<float> hp = p.to_vector<float>(), ha = a.to_vector<float>(), hb = b.to_vector<float>(),
                     hc = c.to_vector<float>();
  std::vector<float> h = step().to_vector<float>(), p1 = p.to_vector<float>();
  double err = 0;
  for (int64_t i = 0; i < kOverheadElems; ++i) {
    double v = hp[i];
    for (int64_t k = 0; k < kOverheadIters; ++k) v = std::sin(v * ha[i] + hb[i]) * hc[i];
    err = std::max({err, std::fabs(h[i] - v), std::fabs(p1[i] - (hp[i] - 1e-3 * v))});
  }
  const int calls = 200;
  auto run = [&] {
    for (int i = 0; i < calls; ++i) {
      xl::Tensor r = step();
      asm volatile("" ::"r"(&r) : "memory");
    }
  };
  for (int i = 0; i < 3; ++i) run();
  int64_t uncached_before = xl::metrics::counter_value("UncachedCompile");
  int64_t cached_before = xl::metrics::counter_value("CachedCompile");
  xl::metrics::MetricData tr0 = xl::metrics::metric_data("TracingTime"), ex0 = xl::metrics::metric_data("ExecuteTime");
  std::vector<double> t;
  for (int r = 0; r < g_runs; ++r) {
    double t0 = now_s();
    run();
    t.push_back((now_s() - t0) / calls);
  }
  int64_t uncached = xl::metrics::counter_value("UncachedCompile") - uncached_before;
  int64_t cached = xl::metrics::counter_value("CachedCompile") - cached_before;
  xl::metrics::MetricData tr = xl::metrics::metric_data("TracingTime"), ex = xl::metrics::metric_data("ExecuteTime");
  emit("overhead_1000.per_step_us", median(t) * 1e6, "us");
  emit("overhead_1000.nodes", nodes, "nodes");
  // Mean per step of the runtime's own timers over the timed calls (sync-side graph building + execution).
  const double steps = static_cast<double>(g_runs) * calls;
  if (tr.samples > tr0.samples) emit("overhead_1000.tracing_us", (tr.total - tr0.total) / steps * 1e-3, "us");
  if (ex.samples > ex0.samples) emit("overhead_1000.execute_us", (ex.total - ex0.total) / steps * 1e-3, "us");
  note("overhead: " + std::to_string(nodes) + " IR nodes per step; " + std::to_string(cached) + " cached and " +
       std::to_string(uncached) + " uncached compiles in " + std::to_string(g_runs * calls) +
       " timed calls; check after one step: max |xlite - host| = " + fmt(err, "%.2e") +
       (err <= 1e-4 ? " (ok)" : " (MISMATCH)"));
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = parse_args(argc, argv);
  note("settings: train_bench" + env_settings({"XLITE_BACKEND", "OMP_NUM_THREADS", "OMP_WAIT_POLICY"}) +
       " runs=" + std::to_string(g_runs));
  try {
    if (what == "all" || what == "overhead") bench_overhead();
    if (what == "all" || what == "mlp") bench_mlp();
    if (what == "all" || what == "transformer") bench_transformer();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
