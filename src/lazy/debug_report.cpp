#include "lazy/debug_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#include "core/call_site.h"
#include "core/debug_output.h"
#include "core/environment.h"
#include "core/runtime_context.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "lazy/step_program.h"
#include "runtime/allocator.h"
#include "xlite/math_mode.h"

namespace xlite::lazy::debug_report {
namespace {

using detail::type_text;

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

std::string ms(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) * 1e-6);
  return text;
}

std::vector<const ir::Instr*> parameters_in_order(const ir::Graph& graph) {
  std::vector<const ir::Instr*> params(graph.num_parameters, nullptr);
  for (const ir::Instr& instr : graph.instrs)
    if (instr.op == ir::OpId::parameter) {
      const int64_t index = ir::ParameterAttrs::of(instr.attrs).index;
      if (index >= 0 && index < graph.num_parameters) params[index] = &instr;
    }
  return params;
}

std::vector<call_site::Frame> frames_of(const call_site::Stack& stack) {
  return stack.user_frames(static_cast<size_t>(env::settings().debug_max_frames));
}

// How many of the graphs' instructions differ: the closest earlier graph is the one with the fewest.
size_t distance(const ir::Graph& a, const ir::Graph& b) {
  size_t d = a.instrs.size() > b.instrs.size() ? a.instrs.size() - b.instrs.size() : b.instrs.size() - a.instrs.size();
  for (size_t i = 0; i < std::min(a.instrs.size(), b.instrs.size()); ++i) d += !(a.instrs[i] == b.instrs[i]);
  return d + (a.outputs != b.outputs);
}

// Lines of `before` and `now` that the other lacks, in order ("- " and "+ "), from a longest common
// subsequence; graphs past a few hundred lines are compared line by line.
std::string text_diff(const std::string& before, const std::string& now) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const std::vector<std::string> a = lines(before), b = lines(now);
  std::string diff;
  constexpr size_t kMaxLines = 400;
  if (a.size() > kMaxLines || b.size() > kMaxLines) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      if (i < a.size() && i < b.size() && a[i] == b[i]) continue;
      if (i < a.size()) diff += "  - " + a[i] + "\n";
      if (i < b.size()) diff += "  + " + b[i] + "\n";
    }
    return diff;
  }
  std::vector<std::vector<uint16_t>> common(a.size() + 1, std::vector<uint16_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;)
    for (size_t j = b.size(); j-- > 0;)
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
    } else if (j == b.size() || (i < a.size() && common[i + 1][j] >= common[i][j + 1])) {
      diff += "  - " + a[i++] + "\n";
    } else {
      diff += "  + " + b[j++] + "\n";
    }
  }
  return diff;
}

// The graphs each call site compiled, newest last, for the explainer.
struct History final : RuntimeState {
  static constexpr size_t kPerSite = 8;
  std::mutex mutex;
  std::map<std::string, std::deque<std::pair<uint64_t, ir::Graph>>> by_site;
  std::string describe() const override { return std::to_string(by_site.size()) + " call sites"; }
  void clear_cache() override {
    std::lock_guard lock(mutex);
    by_site.clear();
  }
};
History& history() { return runtime_context::state<History>("recompilation history"); }

// Why a graph compiled at a site that compiled others before: the difference from the closest of them.
std::string explain(const std::string& site, uint64_t hash, const ir::Graph& graph, std::string* ir_diff) {
  History& h = history();
  std::lock_guard lock(h.mutex);
  auto& seen = h.by_site[site];
  std::string why;
  const std::pair<uint64_t, ir::Graph>* closest = nullptr;
  for (const auto& entry : seen)
    if (entry.first != hash && (!closest || distance(graph, entry.second) < distance(graph, closest->second)))
      closest = &entry;
  if (closest) {
    why = difference(graph, closest->second) + " (the closest of " + std::to_string(seen.size()) +
          " graphs compiled here before)";
    if (ir_diff) *ir_diff = text_diff(ir::to_text(closest->second), ir::to_text(graph));
  } else if (!seen.empty()) {
    why = "the same graph, compiled here before, had left the program cache (XLITE_COMPILATION_CACHE_SIZE)";
  }
  seen.emplace_back(hash, graph);
  if (seen.size() > History::kPerSite) seen.pop_front();
  return why;
}

}  // namespace

std::string hash_text(uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string human_bytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (std::abs(value) >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::string difference(const ir::Graph& now, const ir::Graph& before) {
  if (now.num_parameters != before.num_parameters)
    return "inputs: " + std::to_string(now.num_parameters) + " vs " + std::to_string(before.num_parameters);
  const auto params_now = parameters_in_order(now), params_before = parameters_in_order(before);
  for (size_t k = 0; k < params_now.size(); ++k) {
    const ir::Instr* a = params_now[k];
    const ir::Instr* b = params_before[k];
    if (!a || !b) continue;
    if (a->dtype != b->dtype)
      return "input " + std::to_string(k) + " dtype " + std::string(dtype_name(a->dtype)) + " vs " +
             std::string(dtype_name(b->dtype));
    if (a->shape != b->shape)
      return "input " + std::to_string(k) + " shape " + type_text(a->dtype, a->shape) + " vs " +
             type_text(b->dtype, b->shape);
    if (a->device != b->device)
      return "input " + std::to_string(k) + " device " + a->device.str() + " vs " + b->device.str();
  }
  for (size_t i = 0; i < std::min(now.instrs.size(), before.instrs.size()); ++i) {
    const ir::Instr& a = now.instrs[i];
    const ir::Instr& b = before.instrs[i];
    if (a == b) continue;
    std::string text = "graph differs at %" + std::to_string(i) + ": " + std::string(ir::op_name(a.op)) + " " +
                       type_text(a.dtype, a.shape) + " vs " + std::string(ir::op_name(b.op)) + " " +
                       type_text(b.dtype, b.shape);
    if (a.site)
      if (auto frames = a.site->user_frames(1); !frames.empty())
        text += " (user frame " + call_site::describe(frames[0]) + ")";
    return text;
  }
  if (now.instrs.size() != before.instrs.size())
    return "graph has " + std::to_string(now.instrs.size()) + " nodes vs " + std::to_string(before.instrs.size());
  if (now.outputs != before.outputs)
    return "outputs: " + std::to_string(now.outputs.size()) + " vs " + std::to_string(before.outputs.size());
  return "";
}

std::string compilation(const char* cause, uint64_t hash, const ir::Graph& graph, const runtime::Executable& exe,
                        int64_t compile_ns) {
  const int level = debug_output::level();
  const call_site::Stack stack = call_site::Stack::capture();
  const std::vector<call_site::Frame> frames = frames_of(stack);
  const std::string site = frames.empty() ? "" : call_site::describe(frames.front());
  std::string ir_diff;
  // Without a user frame there is no call site to compare graphs within.
  const std::string why = site.empty() ? "" : explain(site, hash, graph, level >= 3 ? &ir_diff : nullptr);
  const runtime::CompileSummary summary = exe.compile_summary();
  const debug::MemoryStats memory = exe.memory_stats();

  std::string r = "[xlite] Compilation Analysis\n";
  r += "  cause: " + std::string(cause) + "\n";
  r += "  graph hash: " + hash_text(hash) + "\n";
  r += "  graph: " + std::to_string(graph.num_parameters) + " inputs, " + std::to_string(graph.outputs.size()) +
       " outputs, " + std::to_string(graph.instrs.size()) + " nodes (" + std::to_string(summary.instructions) +
       " after passes)\n";
  r += "  compiled: " + std::to_string(summary.kernels) + " kernels, " + std::to_string(summary.library_calls) +
       " library calls, " + std::to_string(summary.fallbacks) + " reference fallbacks, " +
       std::to_string(summary.transfers) + " transfers, " + std::to_string(summary.custom_calls) + " custom calls" +
       (is_fast_math() ? ", fast math (xlite/math_mode.h)" : "") +
       (is_excess_precision() ? ", excess precision (xlite/math_mode.h)" : "") + "\n";
  r += "  compile time: " + ms(compile_ns) + " (passes " + ms(summary.passes_ns) + ", fusion " + ms(summary.fusion_ns) +
       ", codegen " + ms(summary.lowering_ns) + ")\n";
  r += "  call site:\n" + call_site::describe(frames, "    ");
  if (!why.empty()) r += "  recompiled: " + why + "\n";
  if (!ir_diff.empty()) r += "  text IR against that graph:\n" + ir_diff;
  if (level >= 3 && !memory.fusion.empty()) {
    r += "  fusion decisions:\n";
    std::istringstream lines(memory.fusion);
    for (std::string line; std::getline(lines, line);) r += "    " + line + "\n";
  }

  r += "[xlite] Post Compilation Analysis\n";
  r += "  inputs " + human_bytes(memory.argument_bytes) + ", outputs " + human_bytes(memory.output_bytes) +
       ", aliased " + human_bytes(memory.alias_bytes) + ", intermediates (peak) " + human_bytes(memory.temp_bytes) +
       ", code " + human_bytes(memory.code_bytes) + "\n";
  const Device device = exe.device();
  const MemoryInfo info = runtime::allocator(device).info();
  // Saturating: a legal graph may be far too large to run.
  const int64_t peak = ir::checked_add(ir::checked_add(memory.argument_bytes, memory.output_bytes).value_or(kMaxBytes),
                                       memory.temp_bytes)
                           .value_or(kMaxBytes);
  r += "  peak estimate " + human_bytes(peak) + " of " + device.str() + "'s limit " + human_bytes(info.bytes_limit) +
       " (" + human_bytes(info.bytes_used) + " in use now)\n";
  if (!summary.largest_buffers.empty()) r += "  largest buffers:\n";
  for (const auto& buffer : summary.largest_buffers) {
    r += "    " + human_bytes(buffer.bytes) + "  " + buffer.value;
    if (*buffer.origin) r += " (from " + std::string(buffer.origin) + ")";
    if (buffer.site)
      if (auto at = buffer.site->user_frames(1); !at.empty()) r += " at " + call_site::describe(at.front());
    r += "\n";
  }
  debug_output::write(r);
  return site;
}

void execution(const Execution& run) {
  std::string r = "[xlite] Execution Analysis\n";
  r += "  cause: " + std::string(run.cause) + "\n";
  r += "  graph hash: " + hash_text(run.hash) + "\n";
  r += "  run time: " + ms(run.run_ns) + "\n";
  r += "  bytes moved: " + human_bytes(run.input_bytes + run.output_bytes) + " (" + std::to_string(run.inputs) +
       " inputs " + human_bytes(run.input_bytes) + ", " + std::to_string(run.outputs) + " outputs " +
       human_bytes(run.output_bytes) + ")\n";
  debug_output::write(r);
}

}  // namespace xlite::lazy::debug_report
