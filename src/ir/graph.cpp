#include "ir/graph.h"

#include <span>

#include "ir/hash.h"
#include "ir/kernel_registry.h"
#include "ir/node.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "xlite/error.h"

namespace xlite::ir {

uint64_t hash_graph_begin(size_t num_instrs, int64_t num_parameters) {
  return hash_mix(num_instrs, static_cast<uint64_t>(num_parameters));
}

uint64_t hash_graph_instr(uint64_t h, OpId op, uint64_t attrs_hash, DType dtype, const Shape& shape,
                          std::span<const int32_t> operands, Device device) {
  // The small fields share one word: every eager op hashes its graph, so each mix counts.
  h = hash_mix(h, static_cast<uint64_t>(op) | static_cast<uint64_t>(dtype) << 16 | uint64_t{shape.size()} << 24 |
                      uint64_t{operands.size()} << 32 | static_cast<uint64_t>(device.index) << 56 |
                      static_cast<uint64_t>(device.kind) << 62);
  h = hash_mix(h, attrs_hash);
  for (int64_t d : shape) h = hash_mix(h, static_cast<uint64_t>(d));
  for (int32_t o : operands) h = hash_mix(h, static_cast<uint64_t>(o));
  return h;
}

uint64_t hash_graph_end(uint64_t h, std::span<const int32_t> outputs) {
  h = hash_mix(h, outputs.size());
  for (int32_t o : outputs) h = hash_mix(h, static_cast<uint64_t>(o));
  return h;
}

uint64_t Graph::hash() const {
  uint64_t h = hash_graph_begin(instrs.size(), num_parameters);
  for (const Instr& instr : instrs)
    h = hash_graph_instr(h, instr.op, instr.attrs.hash(), instr.dtype, instr.shape, instr.operands, instr.device);
  return hash_graph_end(h, outputs);
}

Device home_device(const Graph& graph) {
  return graph.outputs.empty() ? Device{} : graph.instrs[graph.outputs[0]].device;
}

bool is_matrix_transpose(const Instr& instr) {
  if (instr.op != OpId::transpose) return false;
  const auto& perm = ir::TransposeAttrs::of(instr.attrs).perm;
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t k = 0; k < r; ++k)
    if (perm[k] != static_cast<int64_t>(k + 2 < r ? k : 2 * r - 3 - k)) return false;
  return true;
}

std::vector<OperandType> operand_types(const Graph& graph, const Instr& instr) {
  std::vector<OperandType> types;
  for (int32_t o : instr.operands) types.push_back({graph.instrs[o].shape, graph.instrs[o].dtype});
  return types;
}

namespace {
// A custom_output reads one output of a custom_call with several, and has that output's type.
void verify_custom_output(const Graph& graph, const Instr& instr, const std::string& where) {
  const Instr& call = graph.instrs[instr.operands[0]];
  if (call.op != OpId::custom_call)
    throw Error(where + "reads a " + std::string(op_name(call.op)) + ", not a custom_call");
  const std::vector<kernels::TensorType> outputs = custom_call_outputs(call.attrs, operand_types(graph, call));
  const int64_t index = CustomOutputAttrs::of(instr.attrs).index;
  if (outputs.size() < 2 || index >= static_cast<int64_t>(outputs.size()))
    throw Error(where + "output " + std::to_string(index) + " of a call with " + std::to_string(outputs.size()) +
                (outputs.size() == 1 ? " output, which is the call's value itself" : " outputs"));
  const int64_t offset = pack_outputs(outputs).offsets[index];
  if (CustomOutputAttrs::of(instr.attrs).offset != offset)
    throw Error(where + "offset " + std::to_string(CustomOutputAttrs::of(instr.attrs).offset) + " but output " +
                std::to_string(index) + " starts at byte " + std::to_string(offset));
  if (outputs[index].shape != instr.shape || outputs[index].dtype != instr.dtype)
    throw Error(where + "declared type " + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape) +
                " but output " + std::to_string(index) + " of the call is " +
                std::string(dtype_name(outputs[index].dtype)) + shape_str(outputs[index].shape));
}
}  // namespace

void verify(const Graph& graph) {
  std::vector<bool> seen_parameter(graph.num_parameters, false);
  std::vector<OperandType> types;
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
      if (instr.op != OpId::transfer && graph.instrs[o].device != instr.device)
        throw Error(where + "on " + instr.device.str() + " reads %" + std::to_string(o) + " on " +
                    graph.instrs[o].device.str() + " (only a transfer moves values between devices)");
    }
    if (instr.op == OpId::parameter) {
      int64_t index = 0;
      try {
        check_attr_schema(instr.op, instr.attrs);
        index = ParameterAttrs::of(instr.attrs).index;
      } catch (const Error& e) {
        throw Error(where + e.what());
      }
      if (index < 0 || index >= graph.num_parameters || seen_parameter[index])
        throw Error(where + "parameter index " + std::to_string(index) + " is out of range or repeated");
      seen_parameter[index] = true;
      try {
        require_addressable("parameter", instr.shape, instr.dtype);
      } catch (const Error& e) {
        throw Error(where + e.what());
      }
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
    if (instr.op == OpId::custom_output) verify_custom_output(graph, instr, where);
  }
  for (bool seen : seen_parameter)
    if (!seen) throw Error("[verify] a parameter index is missing");
  for (int32_t o : graph.outputs)
    if (o < 0 || static_cast<size_t>(o) >= graph.instrs.size())
      throw Error("[verify] output %" + std::to_string(o) + " does not exist");
}

}  // namespace xlite::ir
