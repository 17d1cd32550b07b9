#include "ir/op.h"

#include <array>
#include <charconv>
#include <string>

#include "core/check.h"
#include "xlite/error.h"

namespace xlite::ir {
namespace {
constexpr std::array<OpInfo, kNumOps> kOps = {{
#define XLITE_OP_INFO(id, name, arity, cls, traits, schema) {name, arity, OpClass::cls, static_cast<uint8_t>(traits)},
    XLITE_IR_OPS(XLITE_OP_INFO)
#undef XLITE_OP_INFO
}};
}  // namespace

const OpInfo& op_info(OpId op) { return kOps[static_cast<size_t>(op)]; }

bool is_elementwise_class(OpClass cls) {
  switch (cls) {
    case OpClass::Convert:
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::Predicate:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Logical:
    case OpClass::Select: return true;
    case OpClass::Leaf:
    case OpClass::Random:
    case OpClass::Reduce:
    case OpClass::ArgReduce:
    case OpClass::Scan:
    case OpClass::Sort:
    case OpClass::Reshape:
    case OpClass::Transpose:
    case OpClass::Broadcast:
    case OpClass::Slice:
    case OpClass::Concat:
    case OpClass::Pad:
    case OpClass::Flip:
    case OpClass::Gather:
    case OpClass::IndexSelect:
    case OpClass::ScatterAdd:
    case OpClass::Dot:
    case OpClass::Conv:
    case OpClass::Transfer:  // a copy between devices, never part of a loop
    case OpClass::Barrier:   // a region of its own, so that nothing fuses across it
    case OpClass::CustomCall:
    case OpClass::CustomOutput: return false;
  }
  return false;
}

bool is_differentiable(OpId op) {
  const OpInfo& info = op_info(op);
  if (info.has(kPiecewiseConstant)) return false;
  switch (info.cls) {
    case OpClass::Predicate:
    case OpClass::Compare:
    case OpClass::Logical:
    case OpClass::ArgReduce:
    case OpClass::Sort:
    case OpClass::Leaf:
    case OpClass::Random:
    case OpClass::CustomCall:  // its kernel's backward, through custom rules on its results
    case OpClass::CustomOutput: return false;
    case OpClass::Convert:
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::Binary:
    case OpClass::Select:
    case OpClass::Reduce:
    case OpClass::Scan:
    case OpClass::Reshape:
    case OpClass::Transpose:
    case OpClass::Broadcast:
    case OpClass::Slice:
    case OpClass::Concat:
    case OpClass::Pad:
    case OpClass::Flip:
    case OpClass::Gather:
    case OpClass::IndexSelect:
    case OpClass::ScatterAdd:
    case OpClass::Dot:
    case OpClass::Conv:
    case OpClass::Transfer:
    case OpClass::Barrier: return true;
  }
  return false;
}

bool may_raise(OpId op, DType dtype) {
  const OpInfo& info = op_info(op);
  return info.has(kRaisesOnBadIndex) || (info.has(kRaisesOnIntegers) && !is_floating(dtype));
}

#define XLITE_VIEW_CASE(id, name, arity, cls, traits, schema) \
  case OpId::id: return View::id;
#define XLITE_DEFINE_VIEW(View_, function, OPS)                                                                     \
  View_ function(OpId op) {                                                                                         \
    using View = View_;                                                                                             \
    switch (op) {                                                                                                   \
      OPS(XLITE_VIEW_CASE)                                                                                          \
      default: XLITE_FAIL(std::string(#function) + " of " + std::string(op_name(op)) + ", an op of another class"); \
    }                                                                                                               \
  }
XLITE_DEFINE_VIEW(LeafOp, leaf_op, XLITE_LEAF_OPS)
XLITE_DEFINE_VIEW(RandomOp, random_op, XLITE_RANDOM_OPS)
XLITE_DEFINE_VIEW(UnaryOp, unary_op, XLITE_UNARY_OPS)
XLITE_DEFINE_VIEW(UnaryFloatOp, unary_float_op, XLITE_UNARY_FLOAT_OPS)
XLITE_DEFINE_VIEW(PredicateOp, predicate_op, XLITE_PREDICATE_OPS)
XLITE_DEFINE_VIEW(BinaryOp, binary_op, XLITE_BINARY_OPS)
XLITE_DEFINE_VIEW(CompareOp, compare_op, XLITE_COMPARE_OPS)
XLITE_DEFINE_VIEW(LogicalOp, logical_op, XLITE_LOGICAL_OPS)
XLITE_DEFINE_VIEW(ReduceOp, reduce_op, XLITE_REDUCE_OPS)
XLITE_DEFINE_VIEW(ArgReduceOp, arg_reduce_op, XLITE_ARG_REDUCE_OPS)
XLITE_DEFINE_VIEW(ScanOp, scan_op, XLITE_SCAN_OPS)
#undef XLITE_DEFINE_VIEW
#undef XLITE_VIEW_CASE

bool op_from_name(std::string_view name, OpId* op) {
  for (int i = 0; i < kNumOps; ++i) {
    if (kOps[i].name == name) {
      *op = static_cast<OpId>(i);
      return true;
    }
  }
  return false;
}

std::string blame_message(const char* origin, OpId op, std::string_view message) {
  const std::string_view ir_name = op_name(op);
  const std::string_view name = origin && *origin ? std::string_view(origin) : ir_name;
  std::string text = "[";
  text.append(name).append("] ").append(message);
  if (name != ir_name) text.append(" (in ").append(ir_name).append(")");
  return text;
}

std::string number_text(double v) {
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::string(text, end);
}

}  // namespace xlite::ir
