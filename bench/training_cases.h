// The training cases of the peer comparison (bench/train_peers.sh), written once for the C++ sides (xlite's
// bench/peer_training.cpp and libtorch's bench/torch_training_peer.cpp; bench/train_peers.py has them for the
// Python frameworks): the case names, and how a case is measured and printed. Standard library only.
//
//   mlp.b<batch>            MLP 784-1024-1024-10 (ReLU), cross-entropy, SGD (lr 0.01): a full step
//   transformer.s<seq>      the pre-LN block (d_model 512, 8 heads, causal, 4x tanh-GELU MLP), 2048 tokens a
//                           step (batch = 2048 / seq): forward + backward of mean(output)
//   transformer_bf16.s<seq> the same with the products in bf16 (autocast)
//   chargpt.b<batch>        examples/chargpt.cpp's model (4 blocks, d_model 128, context 64, 96 tokens) and
//                           AdamW: a full step
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>

#include "process_memory.h"
#include "timing.h"
#include "train_common.h"

namespace training_cases {

constexpr int64_t kBlockTokens = bench_train::kTfBatch * bench_train::kTfSeq;  // tokens per block step

struct Case {
  std::string workload;  // mlp, transformer, transformer_bf16 or chargpt
  int64_t size = 0;      // the MLP's and chargpt's batch, or the block's sequence length
  bool is_block() const { return workload.rfind("transformer", 0) == 0; }
};

inline Case parse(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 2 >= name.size()) throw std::runtime_error("bad case name: " + name);
  Case c{name.substr(0, dot), std::atoll(name.c_str() + dot + 2)};
  const char letter = name[dot + 1];
  const bool by_batch = (c.workload == "mlp" || c.workload == "chargpt") && letter == 'b';
  const bool by_sequence = (c.workload == "transformer" || c.workload == "transformer_bf16") && letter == 's';
  if ((!by_batch && !by_sequence) || c.size <= 0 || (by_sequence && kBlockTokens % c.size != 0))
    throw std::runtime_error("unknown case " + name +
                             " (mlp.b<batch>, transformer[_bf16].s<seq> with seq | 2048, chargpt.b<batch>)");
  return c;
}

// A case made ready to run: `check` runs first and returns the check value (the MLP and chargpt: the loss
// after one update from the shared initial weights, which checks the gradients too; the block: the sum of
// squared gradient norms after one step); `step` is what is timed.
struct Steps {
  std::function<double()> check;
  std::function<void()> step;
};

// Runs a case as every side does: the check, warm-up steps, then the median of bench_timing::g_runs steps;
// prints `<name>.<tag>_ms` and two peaks of resident memory above the process's once the parameters and inputs
// exist: `<name>.<tag>_peak_MiB` over the whole case (the first calls, which compile, included) and
// `<name>.<tag>_steady_MiB` over the timed calls alone (what training holds once it runs). The caller prints
// the check value, whose line differs between xlite and its peers.
inline double measure(const std::string& name, const std::string& tag, const Case& c, const Steps& s) {
  const double base = bench_memory::status_mib("VmRSS");
  bench_memory::reset_peak_rss();
  const double check = s.check();
  for (int i = 0, warmup = c.is_block() ? 2 : 3; i < warmup; ++i) s.step();
  const double first = bench_memory::status_mib("VmHWM") - base;
  bench_memory::reset_peak_rss();
  const double t = bench_timing::time_one(s.step, 0);
  const double steady = bench_memory::status_mib("VmHWM") - base;
  bench_timing::emit(name + "." + tag + "_ms", t * 1e3, "ms");
  bench_timing::emit(name + "." + tag + "_peak_MiB", std::max(first, steady), "MiB");
  bench_timing::emit(name + "." + tag + "_steady_MiB", steady, "MiB");
  return check;
}

}  // namespace training_cases
