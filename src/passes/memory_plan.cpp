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
                               std::vector<int64_t>* live_per_step) {
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
    (is_output[w] ? written_outputs : live) += ir::value_bytes(graph.instrs[w]);
    const Total borrowed = s < scratch.size() ? scratch[s] : 0;
    most_scratch = std::max(most_scratch, borrowed);
    peak = std::max(peak, live + borrowed);
    if (live_per_step) live_per_step->push_back(clamped(argument + written_outputs + live + borrowed));
    for (int32_t v : freed[s])
      if (!is_output[v] && graph.instrs[v].op != ir::OpId::parameter) live -= ir::value_bytes(graph.instrs[v]);
  }
  debug::MemoryStats stats;
  stats.argument_bytes = clamped(argument);
  stats.alias_bytes = clamped(alias);
  stats.output_bytes = clamped(output);
  stats.temp_bytes = clamped(peak);
  stats.scratch_bytes = clamped(most_scratch);
  return stats;
}

}  // namespace xlite::passes
