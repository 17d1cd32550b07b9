#include "passes/memory_plan.h"

#include <algorithm>
#include <limits>

namespace xlite::passes {
namespace {
// Each value's bytes fit in int64 (a verified graph's shapes are addressable, ir/sizes.h), but several
// huge values can add up past it. Totals are kept wider and reported clamped; allocating such a plan
// fails as out of memory.
using Total = __int128;
int64_t clamped(Total bytes) {
  return static_cast<int64_t>(std::min<Total>(bytes, std::numeric_limits<int64_t>::max()));
}
}  // namespace

std::vector<std::vector<int32_t>> last_uses(const ir::Graph& graph, const std::vector<std::vector<int32_t>>& reads) {
  std::vector<int64_t> last(graph.instrs.size(), -1);
  for (size_t s = 0; s < reads.size(); ++s)
    for (int32_t v : reads[s]) last[v] = static_cast<int64_t>(s);
  for (int32_t o : graph.outputs) last[o] = static_cast<int64_t>(reads.size());  // outputs outlive the run
  std::vector<std::vector<int32_t>> freed(reads.size());
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0 && last[v] < static_cast<int64_t>(reads.size())) freed[last[v]].push_back(static_cast<int32_t>(v));
  return freed;
}

debug::MemoryStats plan_memory(const ir::Graph& graph, const std::vector<int32_t>& writes,
                               const std::vector<std::vector<int32_t>>& reads, std::span<const int64_t> scratch,
                               std::vector<int64_t>* live_per_step, std::span<const int32_t> written_over) {
  std::vector<bool> is_output(graph.instrs.size(), false);
  for (int32_t o : graph.outputs) is_output[o] = true;
  Total argument = 0, alias = 0, output = 0, live = 0, peak = 0, most_scratch = 0;
  for (const auto& instr : graph.instrs)
    if (instr.op == ir::OpId::parameter) argument += ir::value_bytes(instr);
  std::vector<bool> counted(graph.instrs.size(), false);
  for (int32_t o : graph.outputs) {
    if (counted[o]) continue;
    counted[o] = true;
    if (graph.instrs[o].op == ir::OpId::parameter)
      alias += ir::value_bytes(graph.instrs[o]);
    else
      output += ir::value_bytes(graph.instrs[o]);
  }
  auto freed = last_uses(graph, reads);
  Total written_outputs = 0;
  if (live_per_step) live_per_step->clear();
  for (size_t s = 0; s < writes.size(); ++s) {
    int32_t w = writes[s];
    const int32_t donor = s < written_over.size() ? written_over[s] : -1;
    // A value written over its input takes that input's bytes: an intermediate's stay in `live`, an output's
    // move to the outputs.
    if (donor < 0) {
      (is_output[w] ? written_outputs : live) += ir::value_bytes(graph.instrs[w]);
    } else if (is_output[w]) {
      live -= ir::value_bytes(graph.instrs[donor]);
      written_outputs += ir::value_bytes(graph.instrs[w]);
    }
    const Total borrowed = s < scratch.size() ? scratch[s] : 0;
    most_scratch = std::max(most_scratch, borrowed);
    peak = std::max(peak, live + borrowed);
    if (live_per_step) live_per_step->push_back(clamped(argument + written_outputs + live + borrowed));
    for (int32_t v : freed[s])
      if (v != donor && !is_output[v] && graph.instrs[v].op != ir::OpId::parameter)
        live -= ir::value_bytes(graph.instrs[v]);
  }
  debug::MemoryStats stats;
  stats.argument_bytes = clamped(argument);
  stats.alias_bytes = clamped(alias);
  stats.output_bytes = clamped(output);
  stats.temp_bytes = clamped(peak);
  stats.scratch_bytes = clamped(most_scratch);
  return stats;
}

std::vector<int32_t> in_place_writes(const ir::Graph& graph, const std::vector<int32_t>& writes,
                                     const std::vector<std::vector<int32_t>>& reads,
                                     const std::vector<std::vector<bool>>& overwritable,
                                     const std::vector<bool>& may_lend) {
  std::vector<bool> is_output(graph.instrs.size(), false);
  for (int32_t o : graph.outputs) is_output[o] = true;
  std::vector<int64_t> written_at(graph.instrs.size(), -1), last_read(graph.instrs.size(), -1);
  for (size_t s = 0; s < writes.size(); ++s) {
    written_at[writes[s]] = static_cast<int64_t>(s);
    for (int32_t v : reads[s]) last_read[v] = static_cast<int64_t>(s);
  }
  std::vector<int32_t> donors(writes.size(), -1);
  for (size_t s = 0; s < writes.size(); ++s) {
    const ir::Instr& value = graph.instrs[writes[s]];
    for (size_t i = 0; i < reads[s].size(); ++i) {
      const int32_t v = reads[s][i];
      const ir::Instr& input = graph.instrs[v];
      const int64_t producer = written_at[v];
      if (!overwritable[s][i] || producer < 0 || !may_lend[producer] || is_output[v]) continue;
      if (last_read[v] != static_cast<int64_t>(s) || input.device != value.device) continue;
      if (numel(input.shape) != numel(value.shape) || dtype_size(input.dtype) != dtype_size(value.dtype)) continue;
      donors[s] = v;
      break;
    }
  }
  return donors;
}

}  // namespace xlite::passes
