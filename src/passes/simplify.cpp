#include <algorithm>
#include <numeric>
#include <optional>

#include "passes/passes.h"
#include "passes/rewriter.h"
#include "ir/op_attrs.h"

namespace xlite::passes {
namespace {
using ir::AttrKey;
using ir::Instr;
using ir::OpId;

// The scalar value of a constant, seen through broadcasts.
std::optional<double> constant_value(const Rewriter& rw, int32_t index) {
  const Instr* instr = &rw.at(index);
  while (instr->op == OpId::broadcast) instr = &rw.at(instr->operands[0]);
  if (instr->op != OpId::constant) return std::nullopt;
  return ir::ConstantAttrs::of(instr->attrs).value;
}

bool same_type(const Instr& a, const Instr& b) { return a.shape == b.shape && a.dtype == b.dtype; }

// Returns the value an instruction can be replaced by, if an identity applies.
std::optional<int32_t> identity_of(const Rewriter& rw, const Instr& instr) {
  auto operand = [&](int k) -> const Instr& { return rw.at(instr.operands[k]); };
  auto is_const = [&](int k, double v) {
    auto c = constant_value(rw, instr.operands[k]);
    return c && *c == v;
  };
  switch (instr.op) {
    case OpId::add:
      if (is_const(1, 0) && same_type(operand(0), instr)) return instr.operands[0];
      if (is_const(0, 0) && same_type(operand(1), instr)) return instr.operands[1];
      break;
    case OpId::sub:
      if (is_const(1, 0) && same_type(operand(0), instr)) return instr.operands[0];
      break;
    case OpId::mul:
      if (is_const(1, 1) && same_type(operand(0), instr)) return instr.operands[0];
      if (is_const(0, 1) && same_type(operand(1), instr)) return instr.operands[1];
      break;
    case OpId::div:
      if (is_const(1, 1) && same_type(operand(0), instr)) return instr.operands[0];
      break;
    case OpId::neg:
      if (operand(0).op == instr.op) return operand(0).operands[0];
      break;
    case OpId::transfer:
      // A copy to the device the value is on, or back to the device it came from, moves nothing.
      if (operand(0).device == instr.device) return instr.operands[0];
      if (operand(0).op == OpId::transfer && rw.at(operand(0).operands[0]).device == instr.device)
        return operand(0).operands[0];
      break;
    case OpId::logical_not:
      // not(not x) is x only for bool x; for numbers it is x != 0.
      if (operand(0).op == instr.op && rw.at(operand(0).operands[0]).dtype == DType::bool_)
        return operand(0).operands[0];
      break;
    case OpId::reshape:
    case OpId::convert:
    case OpId::slice:
    case OpId::broadcast:
    case OpId::transpose:
      if (same_type(operand(0), instr)) {
        // Same type is a no-op for reshape and convert; for the others the attributes must be identities.
        if (instr.op == OpId::reshape || instr.op == OpId::convert) return instr.operands[0];
        if (instr.op == OpId::slice) {
          const auto& stride = ir::SliceAttrs::of(instr.attrs).stride;
          if (std::all_of(stride.begin(), stride.end(), [](int64_t s) { return s == 1; })) return instr.operands[0];
        }
        if (instr.op == OpId::broadcast) {
          const auto& dims = ir::BroadcastAttrs::of(instr.attrs).dims;
          std::vector<int64_t> iota(dims.size());
          std::iota(iota.begin(), iota.end(), 0);
          if (std::ranges::equal(dims, iota)) return instr.operands[0];
        }
        if (instr.op == OpId::transpose) {
          const auto& perm = ir::TransposeAttrs::of(instr.attrs).perm;
          std::vector<int64_t> iota(perm.size());
          std::iota(iota.begin(), iota.end(), 0);
          if (std::ranges::equal(perm, iota)) return instr.operands[0];
        }
      }
      break;
    default: break;
  }
  return std::nullopt;
}

// Merges an instruction with its producer when both are of one kind (reshape, transpose, broadcast).
std::optional<Instr> composed(const Rewriter& rw, const Instr& instr) {
  if (instr.op != OpId::reshape && instr.op != OpId::transpose && instr.op != OpId::broadcast) return std::nullopt;
  const Instr& inner = rw.at(instr.operands[0]);
  if (inner.op != instr.op) return std::nullopt;
  Instr merged = instr;
  merged.operands = inner.operands;
  switch (instr.op) {
    case OpId::reshape: return merged;
    case OpId::transpose: {
      const auto outer = ir::TransposeAttrs::of(instr.attrs).perm;
      const auto first = ir::TransposeAttrs::of(inner.attrs).perm;
      std::vector<int64_t> perm(outer.size());
      for (size_t k = 0; k < outer.size(); ++k) perm[k] = first[outer[k]];
      merged.attrs = ir::TransposeAttrs{.perm = perm}.to_attrs();
      return merged;
    }
    case OpId::broadcast: {
      const ir::BroadcastAttrs outer = ir::BroadcastAttrs::of(instr.attrs);
      const auto first = ir::BroadcastAttrs::of(inner.attrs).dims;
      std::vector<int64_t> dims(first.size());
      for (size_t k = 0; k < first.size(); ++k) dims[k] = outer.dims[first[k]];
      merged.attrs = ir::BroadcastAttrs{.shape = outer.shape, .dims = dims}.to_attrs();
      return merged;
    }
    default: return std::nullopt;
  }
}

Instr matrix_transpose(int32_t operand, const Instr& of) {
  const size_t r = of.shape.size();
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[r - 2], perm[r - 1]);
  Shape shape = of.shape;
  std::swap(shape[r - 2], shape[r - 1]);
  return Instr{OpId::transpose, {operand}, ir::TransposeAttrs{.perm = perm}.to_attrs(), shape, of.dtype, of.origin,
               of.device,       of.site};
}

// (a b)^T = b^T a^T: the GEMM then writes the transposed product itself, reading its operands through
// transpose flags, instead of a separate pass over the product (the weight gradient of x @ w^T).
// Only for a product nothing else reads, so that no GEMM is duplicated.
std::optional<int32_t> transposed_product(Rewriter& rw, const Instr& instr, int product_readers) {
  if (!ir::is_matrix_transpose(instr) || product_readers != 1) return std::nullopt;
  const Instr product = rw.at(instr.operands[0]);  // a copy: appending moves the instructions
  if (product.op != OpId::dot) return std::nullopt;
  const Instr a = rw.at(product.operands[0]), b = rw.at(product.operands[1]);
  const int32_t bt = rw.append(matrix_transpose(product.operands[1], b));
  const int32_t at = rw.append(matrix_transpose(product.operands[0], a));
  return rw.append(
      Instr{OpId::dot, {bt, at}, {}, instr.shape, instr.dtype, product.origin, product.device, product.site});
}
}  // namespace

ir::Graph simplify(const ir::Graph& graph) {
  Rewriter rw(graph);
  std::vector<int> readers(graph.instrs.size(), 0);
  for (const Instr& instr : graph.instrs)
    for (int32_t o : instr.operands) ++readers[o];
  for (int32_t o : graph.outputs) ++readers[o];
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    Instr instr = rw.remapped(i);
    if (auto same = identity_of(rw, instr)) {
      rw.map(i, *same);
      continue;
    }
    if (instr.op == OpId::transpose) {
      if (auto product = transposed_product(rw, instr, readers[graph.instrs[i].operands[0]])) {
        rw.map(i, *product);
        continue;
      }
    }
    if (auto merged = composed(rw, instr)) instr = std::move(*merged);
    rw.map(i, rw.append(std::move(instr)));
  }
  return rw.finish();
}

}  // namespace xlite::passes
