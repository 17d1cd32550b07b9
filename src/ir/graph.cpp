#include "ir/graph.h"

#include <span>

#include "ir/hash.h"
#include "ir/node.h"
#include "xlite/error.h"

namespace xlite::ir {

uint64_t Graph::hash() const {
  uint64_t h = hash_mix(instrs.size(), static_cast<uint64_t>(num_parameters));
  for (const Instr& instr : instrs) {
    h = hash_mix(h, static_cast<uint64_t>(instr.op));
    h = hash_mix(h, instr.attrs.hash());
    h = hash_mix(h, static_cast<uint64_t>(instr.dtype));
    h = hash_mix(h, instr.shape.size());
    for (int64_t d : instr.shape) h = hash_mix(h, static_cast<uint64_t>(d));
    h = hash_mix(h, instr.operands.size());
    for (int32_t o : instr.operands) h = hash_mix(h, static_cast<uint64_t>(o));
  }
  h = hash_mix(h, outputs.size());
  for (int32_t o : outputs) h = hash_mix(h, static_cast<uint64_t>(o));
  return h;
}

bool is_matrix_transpose(const Instr& instr) {
  if (instr.op != OpId::transpose) return false;
  const auto& perm = instr.attrs.get_ints(AttrKey::perm);
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t k = 0; k < r; ++k)
    if (perm[k] != static_cast<int64_t>(k + 2 < r ? k : 2 * r - 3 - k)) return false;
  return true;
}

void verify(const Graph& graph) {
  std::vector<bool> seen_parameter(graph.num_parameters, false);
  std::vector<TypedShape> types;
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    const Instr& instr = graph.instrs[i];
    const std::string where = "[verify] %" + std::to_string(i) + " " + std::string(op_name(instr.op)) + ": ";
    const OpInfo& info = op_info(instr.op);
    if (info.arity >= 0 && static_cast<int>(instr.operands.size()) != info.arity)
      throw Error(where + "expects " + std::to_string(info.arity) + " operands, has " +
                  std::to_string(instr.operands.size()));
    types.clear();
    for (int32_t o : instr.operands) {
      if (o < 0 || static_cast<size_t>(o) >= i)
        throw Error(where + "operand %" + std::to_string(o) + " is not defined before use");
      types.push_back({graph.instrs[o].shape, graph.instrs[o].dtype});
    }
    if (instr.op == OpId::parameter) {
      int64_t index = instr.attrs.get_int(AttrKey::index);
      if (index < 0 || index >= graph.num_parameters || seen_parameter[index])
        throw Error(where + "parameter index " + std::to_string(index) + " is out of range or repeated");
      seen_parameter[index] = true;
      for (int64_t d : instr.shape)
        if (d < 0) throw Error(where + "negative dim in " + shape_str(instr.shape));
      continue;
    }
    TypedShape expected;
    try {
      expected = infer_type(instr.op, types, instr.attrs);
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    if (expected.shape != instr.shape || expected.dtype != instr.dtype)
      throw Error(where + "declared type " + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape) +
                  " but the shape rule gives " + std::string(dtype_name(expected.dtype)) + shape_str(expected.shape));
  }
  for (bool seen : seen_parameter)
    if (!seen) throw Error("[verify] a parameter index is missing");
  for (int32_t o : graph.outputs)
    if (o < 0 || static_cast<size_t>(o) >= graph.instrs.size())
      throw Error("[verify] output %" + std::to_string(o) + " does not exist");
}

}  // namespace xlite::ir
