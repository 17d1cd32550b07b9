#include <unordered_map>

#include "passes/passes.h"
#include "passes/rewriter.h"
#include "ir/hash.h"

namespace xlite::passes {

ir::Graph cse(const ir::Graph& graph) {
  Rewriter rw(graph);
  std::unordered_multimap<uint64_t, int32_t> seen;
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    ir::Instr instr = rw.remapped(i);
    if (instr.op == ir::OpId::parameter) {
      rw.map(i, rw.append(std::move(instr)));
      continue;
    }
    uint64_t h = ir::hash_mix(static_cast<uint64_t>(instr.op), instr.attrs.hash());
    for (int32_t o : instr.operands) h = ir::hash_mix(h, static_cast<uint64_t>(o));
    int32_t found = -1;
    auto [begin, end] = seen.equal_range(h);
    for (auto it = begin; it != end && found < 0; ++it)
      if (rw.at(it->second) == instr) found = it->second;
    if (found < 0) {
      found = rw.append(std::move(instr));
      seen.emplace(h, found);
    }
    rw.map(i, found);
  }
  return rw.finish();
}

ir::Graph dce(const ir::Graph& graph) {
  std::vector<bool> live(graph.instrs.size(), false);
  for (int32_t o : graph.outputs) live[o] = true;
  for (size_t i = graph.instrs.size(); i-- > 0;) {
    if (graph.instrs[i].op == ir::OpId::parameter) live[i] = true;
    if (live[i])
      for (int32_t o : graph.instrs[i].operands) live[o] = true;
  }
  Rewriter rw(graph);
  for (size_t i = 0; i < graph.instrs.size(); ++i)
    if (live[i]) rw.map(i, rw.append(rw.remapped(i)));
  return rw.finish();
}

}  // namespace xlite::passes
