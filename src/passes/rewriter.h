#pragma once
// Rebuilds a graph instruction by instruction: a pass reads each old instruction with its operands
// already mapped to the new graph, and either appends it (maybe changed) or answers with an existing value.
#include <vector>

#include "ir/graph.h"

namespace xlite::passes {

class Rewriter {
 public:
  explicit Rewriter(const ir::Graph& old) : old_(old), mapping_(old.instrs.size(), -1) {
    out_.num_parameters = old.num_parameters;
  }

  // The old instruction i with operands renumbered into the new graph.
  ir::Instr remapped(size_t i) const {
    ir::Instr instr = old_.instrs[i];
    for (int32_t& o : instr.operands) o = mapping_[o];
    return instr;
  }
  const ir::Instr& at(int32_t new_index) const { return out_.instrs[new_index]; }
  int32_t append(ir::Instr instr) {
    out_.instrs.push_back(std::move(instr));
    return static_cast<int32_t>(out_.instrs.size() - 1);
  }
  void map(size_t old_index, int32_t new_index) { mapping_[old_index] = new_index; }

  ir::Graph finish() {
    for (int32_t o : old_.outputs) out_.outputs.push_back(mapping_[o]);
    return std::move(out_);
  }

 private:
  const ir::Graph& old_;
  ir::Graph out_;
  std::vector<int32_t> mapping_;
};

}  // namespace xlite::passes
