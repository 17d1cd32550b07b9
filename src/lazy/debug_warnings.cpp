#include "lazy/debug_warnings.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "core/call_site.h"
#include "core/clock.h"
#include "core/debug_output.h"
#include "core/runtime_context.h"
#include "ir/op_attrs.h"

namespace xlite::lazy::debug_warnings {
namespace {

constexpr int64_t kFirstCheck = 10;  // syncs before any warning: a program's first steps compile
constexpr size_t kShapesKept = 8;    // per input, enough to show that it keeps changing

struct Tracker final : RuntimeState {
  std::mutex mutex;
  int64_t syncs = 0, compiles = 0, recompiles = 0, value_reads = 0;
  int64_t compile_ns = 0, tracing_ns = 0, execute_ns = 0;
  Window before_window;                     // the totals at the kFirstCheck-th sync (the warm-up), elapsed_ns its time
  std::set<std::string> sites;              // call sites that compiled
  std::map<std::string, int64_t> reads_at;  // user line -> value reads
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> shapes;  // (site, input) -> shapes seen
  bool warned_compiles = false, warned_reads = false, warned_compile_time = false, warned_tracing_time = false;
  std::string describe() const override {
    return std::to_string(syncs) + " syncs, " + std::to_string(compiles) + " compiles, " + std::to_string(value_reads) +
           " value reads";
  }
};
Tracker& tracker() { return runtime_context::state<Tracker>("debug warnings"); }

void warn(const std::string& text) { debug_output::write("[xlite] warning: " + text + "\n"); }

// "input 0 at tests/a.cpp:12 (f) took 5 shapes: [8,127] [8,131] ...", for each input that changed.
std::string changing_inputs(const Tracker& t) {
  std::string text;
  for (const auto& [key, seen] : t.shapes) {
    if (seen.size() < 2) continue;
    text += "\n  input " + std::to_string(key.second) + (key.first.empty() ? "" : " at " + key.first) + " took " +
            std::to_string(seen.size()) + (seen.size() >= kShapesKept ? " or more" : "") + " shapes:";
    for (const std::string& shape : seen) text += " " + shape;
  }
  return text;
}

void check(Tracker& t) {
  if (t.syncs < kFirstCheck) return;
  // A program's first syncs compile anyway; compiles at a call site that compiled before are the cost.
  if (!t.warned_compiles && 2 * t.recompiles >= kFirstCheck && 2 * t.compiles >= t.syncs) {
    t.warned_compiles = true;
    const std::string inputs = changing_inputs(t);
    warn("CompileTime too frequent: " + std::to_string(t.compiles) + " compiles in " + std::to_string(t.syncs) +
         " syncs, " + std::to_string(t.recompiles) + " of them at a call site that compiled before." +
         (inputs.empty() ? " The graphs differ in their ops: a Python-level branch or a changing number of steps?"
                         : inputs + "\n  Pad or bucket these shapes to a few sizes, so that each compiles once."));
  }
  if (!t.warned_reads && 2 * t.value_reads >= t.syncs) {
    t.warned_reads = true;
    auto most = std::max_element(t.reads_at.begin(), t.reads_at.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    warn("TransferFromDevice too frequent: " + std::to_string(t.value_reads) + " of " + std::to_string(t.syncs) +
         " syncs were value reads, each splitting the graph" +
         (most == t.reads_at.end() || most->first.empty()
              ? std::string(".")
              : ", " + std::to_string(most->second) + " of them at " + most->first + ".") +
         " Read values after the loop, or keep them as tensors.");
  }
  const Window totals{t.syncs, t.compiles, now_ns(), t.tracing_ns, t.compile_ns, t.execute_ns};
  if (t.syncs == kFirstCheck) t.before_window = totals;
  if (t.syncs < 3 * kFirstCheck) return;
  const Window& b = t.before_window;
  const Window window{totals.syncs - b.syncs,           totals.compiles - b.compiles,
                      totals.elapsed_ns - b.elapsed_ns, totals.tracing_ns - b.tracing_ns,
                      totals.compile_ns - b.compile_ns, totals.execute_ns - b.execute_ns};
  for (auto [warned, text] : {std::pair{&t.warned_compile_time, compile_time_warning(window)},
                              std::pair{&t.warned_tracing_time, tracing_time_warning(window)}}) {
    if (*warned || text.empty()) continue;
    *warned = true;
    warn(text);
  }
}

std::string ms(int64_t ns) { return std::to_string(ns / 1000000) + " ms"; }

}  // namespace

void note_compiled(const std::string& site, const ir::Graph& graph, int64_t compile_ns) {
  Tracker& t = tracker();
  std::lock_guard lock(t.mutex);
  ++t.compiles;
  if (!site.empty() && !t.sites.insert(site).second) ++t.recompiles;
  t.compile_ns += compile_ns;
  for (const ir::Instr& instr : graph.instrs) {
    if (instr.op != ir::OpId::parameter) continue;
    auto& seen = t.shapes[{site, ir::ParameterAttrs::of(instr.attrs).index}];
    if (seen.size() < kShapesKept) seen.insert(shape_str(instr.shape));
  }
}

std::string compile_time_warning(const Window& w) {
  if (w.elapsed_ns <= 0 || 2 * w.compile_ns <= w.elapsed_ns) return "";
  return "CompileTime dominates: after the first " + std::to_string(kFirstCheck) + " syncs, compiling took " +
         ms(w.compile_ns) + " of " + ms(w.elapsed_ns) + " (" + std::to_string(w.compiles) + " compiles in " +
         std::to_string(w.syncs) + " syncs).";
}

std::string tracing_time_warning(const Window& w) {
  if (w.elapsed_ns <= 0 || 2 * w.tracing_ns <= w.elapsed_ns || w.tracing_ns <= 2 * w.execute_ns) return "";
  return "TracingTime dominates: after the first " + std::to_string(kFirstCheck) +
         " syncs, building graphs on the host took " + ms(w.tracing_ns) + " of " + ms(w.elapsed_ns) +
         ", running them " + ms(w.execute_ns) + " (" + std::to_string(w.syncs) +
         " syncs). The steps wait on tracing: xlite::compile(fn) traces a step once and replays it.";
}

void note_sync(bool value_read, int64_t tracing_ns, int64_t execute_ns) {
  std::string where;
  if (value_read) {
    const auto frames = call_site::Stack::capture().user_frames(1);
    if (!frames.empty()) where = call_site::describe(frames.front());
  }
  Tracker& t = tracker();
  std::lock_guard lock(t.mutex);
  ++t.syncs;
  t.tracing_ns += tracing_ns;
  t.execute_ns += execute_ns;
  if (value_read) {
    ++t.value_reads;
    ++t.reads_at[where];
  }
  check(t);
}

}  // namespace xlite::lazy::debug_warnings
