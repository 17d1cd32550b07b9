// Constant folding evaluates with the reference evaluator, so folded values are exactly what the oracle
// computes and no second set of op semantics exists here.
#include <cmath>
#include <optional>

#include "backends/reference/backend.h"
#include "compiler/optimize.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "core/elements.h"
#include "ir/op_attrs.h"
#include "runtime/transfer.h"
#include "xlite/error.h"

namespace xlite::compiler {
namespace {
using ir::AttrKey;
using ir::Instr;
using ir::OpId;

bool foldable(const Instr& instr) { return instr.shape.empty() && ir::is_elementwise_class(ir::op_info(instr.op).cls); }

// Runs one instruction on constant operands; nullopt when it throws (left for run time to report).
std::optional<double> evaluate(const passes::Rewriter& rw, const Instr& instr) {
  ir::Graph g;
  Instr folded = instr;
  for (size_t k = 0; k < instr.operands.size(); ++k) {
    g.instrs.push_back(rw.at(instr.operands[k]));
    folded.operands[k] = static_cast<int32_t>(k);
  }
  g.instrs.push_back(folded);
  g.outputs = {static_cast<int32_t>(g.instrs.size() - 1)};
  try {
    auto result = backends::reference::compile(g)->run({});
    std::vector<std::byte> host(dtype_size(instr.dtype));
    runtime::to_host(*result[0], host);
    double value = read_element_f64(host.data(), instr.dtype, 0);
    if (!is_floating(instr.dtype) && std::fabs(value) > 9007199254740992.0)
      return std::nullopt;  // not exact in a double
    return value;
  } catch (const Error&) {
    return std::nullopt;
  }
}
}  // namespace

ir::Graph fold_constants(const ir::Graph& graph) {
  passes::Rewriter rw(graph);
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    Instr instr = rw.remapped(i);
    bool all_constant = !instr.operands.empty() && foldable(instr);
    for (int32_t o : instr.operands) all_constant = all_constant && rw.at(o).op == OpId::constant;
    if (all_constant) {
      if (auto value = evaluate(rw, instr)) {
        Instr constant{OpId::constant, {}, {}, {}, instr.dtype, instr.origin, instr.device, instr.site};
        constant.attrs = ir::ConstantAttrs{.value = *value, .dtype = instr.dtype}.to_attrs();
        instr = std::move(constant);
      }
    }
    rw.map(i, rw.append(std::move(instr)));
  }
  return rw.finish();
}

ir::Graph optimize(const ir::Graph& graph) {
  ir::Graph current = graph;
  for (int round = 0; round < 16; ++round) {
    ir::Graph next = passes::dce(fold_constants(passes::cse(passes::simplify(current))));
    if (next == current) break;
    current = std::move(next);
  }
  return current;
}

}  // namespace xlite::compiler
