#pragma once
// The one op table. Each IR op is declared here once; shape rules live in shape_rules.cpp, reference
// kernels in backends/reference, found by OpId.
#include <cstdint>
#include <string>
#include <string_view>

#include "xlite/dtype.h"

namespace xlite::ir {

// Facts about an op that passes and backends need beyond its class, kept on its row of the table so that
// adding an op states them in one place.
enum OpTrait : uint8_t {
  kExpensive = 1 << 0,          // worth computing once rather than once per consumer
  kPiecewiseConstant = 1 << 1,  // a gradient of zero almost everywhere: no gradient flows
  kRaisesOnBadIndex = 1 << 2,   // an index value out of range raises at run time (or a kernel's check fails)
  kRaisesOnIntegers = 1 << 3,   // integer operands can raise at run time (division by zero, negative power)
};

// X(id, text name, arity (-1: variadic), class, traits (OpTrait flags, or 0), attribute schema (a struct of
// ir/op_attrs.h)). The table is split by class so that each class with several ops gets its own enum below
// (UnaryOp, BinaryOp, ...): a switch over one of those without `default:` is checked by -Wswitch, so a
// layer that forgets a new op fails to build.
#define XLITE_LEAF_OPS(X)                               \
  X(parameter, "parameter", 0, Leaf, 0, ParameterAttrs) \
  X(constant, "constant", 0, Leaf, 0, ConstantAttrs)    \
  X(iota, "iota", 0, Leaf, 0, IotaAttrs)

#define XLITE_RANDOM_OPS(X)                                         \
  X(rng_uniform, "rng_uniform", 2, Random, kExpensive, RandomAttrs) \
  X(rng_normal, "rng_normal", 2, Random, kExpensive, RandomAttrs)

#define XLITE_UNARY_OPS(X)              \
  X(neg, "neg", 1, Unary, 0, NoAttrs)   \
  X(abs, "abs", 1, Unary, 0, NoAttrs)   \
  X(relu, "relu", 1, Unary, 0, NoAttrs) \
  X(sign, "sign", 1, Unary, kPiecewiseConstant, NoAttrs)

#define XLITE_UNARY_FLOAT_OPS(X)                                \
  X(exp, "exp", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(expm1, "expm1", 1, UnaryFloat, kExpensive, NoAttrs)         \
  X(log, "log", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(log1p, "log1p", 1, UnaryFloat, kExpensive, NoAttrs)         \
  X(sqrt, "sqrt", 1, UnaryFloat, 0, NoAttrs)                    \
  X(rsqrt, "rsqrt", 1, UnaryFloat, 0, NoAttrs)                  \
  X(sin, "sin", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(cos, "cos", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(tan, "tan", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(atan, "atan", 1, UnaryFloat, kExpensive, NoAttrs)           \
  X(tanh, "tanh", 1, UnaryFloat, kExpensive, NoAttrs)           \
  X(sigmoid, "sigmoid", 1, UnaryFloat, kExpensive, NoAttrs)     \
  X(gelu, "gelu", 1, UnaryFloat, kExpensive, NoAttrs)           \
  X(gelu_tanh, "gelu_tanh", 1, UnaryFloat, kExpensive, NoAttrs) \
  X(silu, "silu", 1, UnaryFloat, kExpensive, NoAttrs)           \
  X(erf, "erf", 1, UnaryFloat, kExpensive, NoAttrs)             \
  X(floor, "floor", 1, UnaryFloat, kPiecewiseConstant, NoAttrs) \
  X(ceil, "ceil", 1, UnaryFloat, kPiecewiseConstant, NoAttrs)   \
  X(round, "round", 1, UnaryFloat, kPiecewiseConstant, NoAttrs) \
  X(reciprocal, "reciprocal", 1, UnaryFloat, 0, NoAttrs)

#define XLITE_PREDICATE_OPS(X)                            \
  X(logical_not, "logical_not", 1, Predicate, 0, NoAttrs) \
  X(isnan, "isnan", 1, Predicate, 0, NoAttrs)             \
  X(isinf, "isinf", 1, Predicate, 0, NoAttrs)

#define XLITE_BINARY_OPS(X)                                         \
  X(add, "add", 2, Binary, 0, NoAttrs)                              \
  X(sub, "sub", 2, Binary, 0, NoAttrs)                              \
  X(mul, "mul", 2, Binary, 0, NoAttrs)                              \
  X(div, "div", 2, Binary, kRaisesOnIntegers, NoAttrs)              \
  X(pow, "pow", 2, Binary, kExpensive | kRaisesOnIntegers, NoAttrs) \
  X(maximum, "maximum", 2, Binary, 0, NoAttrs)                      \
  X(minimum, "minimum", 2, Binary, 0, NoAttrs)                      \
  X(remainder, "remainder", 2, Binary, kRaisesOnIntegers, NoAttrs)

#define XLITE_COMPARE_OPS(X)          \
  X(eq, "eq", 2, Compare, 0, NoAttrs) \
  X(ne, "ne", 2, Compare, 0, NoAttrs) \
  X(lt, "lt", 2, Compare, 0, NoAttrs) \
  X(le, "le", 2, Compare, 0, NoAttrs) \
  X(gt, "gt", 2, Compare, 0, NoAttrs) \
  X(ge, "ge", 2, Compare, 0, NoAttrs)

#define XLITE_LOGICAL_OPS(X)                            \
  X(logical_and, "logical_and", 2, Logical, 0, NoAttrs) \
  X(logical_or, "logical_or", 2, Logical, 0, NoAttrs)   \
  X(logical_xor, "logical_xor", 2, Logical, 0, NoAttrs)

#define XLITE_REDUCE_OPS(X)                                \
  X(reduce_sum, "reduce_sum", 1, Reduce, 0, ReduceAttrs)   \
  X(reduce_prod, "reduce_prod", 1, Reduce, 0, ReduceAttrs) \
  X(reduce_max, "reduce_max", 1, Reduce, 0, ReduceAttrs)   \
  X(reduce_min, "reduce_min", 1, Reduce, 0, ReduceAttrs)

#define XLITE_ARG_REDUCE_OPS(X)                        \
  X(argmax, "argmax", 1, ArgReduce, 0, ArgReduceAttrs) \
  X(argmin, "argmin", 1, ArgReduce, 0, ArgReduceAttrs)

#define XLITE_SCAN_OPS(X)                     \
  X(cumsum, "cumsum", 1, Scan, 0, DimAttrs)   \
  X(cumprod, "cumprod", 1, Scan, 0, DimAttrs) \
  X(cummax, "cummax", 1, Scan, 0, DimAttrs)   \
  X(cummin, "cummin", 1, Scan, 0, DimAttrs)

// Classes of one op each.
#define XLITE_SINGLE_OPS(X)                                                                 \
  X(convert, "convert", 1, Convert, 0, ConvertAttrs)                                        \
  X(select, "select", 3, Select, 0, NoAttrs)                                                \
  X(reshape, "reshape", 1, Reshape, 0, ReshapeAttrs)                                        \
  X(transpose, "transpose", 1, Transpose, 0, TransposeAttrs)                                \
  X(broadcast, "broadcast", 1, Broadcast, 0, BroadcastAttrs)                                \
  X(slice, "slice", 1, Slice, 0, SliceAttrs)                                                \
  X(concat, "concat", -1, Concat, 0, DimAttrs)                                              \
  X(pad, "pad", 1, Pad, 0, PadAttrs)                                                        \
  X(flip, "flip", 1, Flip, 0, FlipAttrs)                                                    \
  X(gather, "gather", 2, Gather, kExpensive | kRaisesOnBadIndex, DimAttrs)                  \
  X(index_select, "index_select", 2, IndexSelect, kExpensive | kRaisesOnBadIndex, DimAttrs) \
  X(scatter_add, "scatter_add", 3, ScatterAdd, kRaisesOnBadIndex, DimAttrs)                 \
  X(argsort, "argsort", 1, Sort, 0, SortAttrs)                                              \
  X(dot, "dot", 2, Dot, 0, NoAttrs)                                                         \
  X(conv2d, "conv2d", 2, Conv, 0, ConvAttrs)                                                \
  X(transfer, "transfer", 1, Transfer, 0, NoAttrs)                                          \
  X(opt_barrier, "opt_barrier", -1, Barrier, 0, NoAttrs)                                    \
  X(custom_call, "custom_call", -1, CustomCall, kRaisesOnBadIndex, CustomCallAttrs)         \
  X(custom_output, "custom_output", 1, CustomOutput, 0, CustomOutputAttrs)

#define XLITE_IR_OPS(X)    \
  XLITE_LEAF_OPS(X)        \
  XLITE_RANDOM_OPS(X)      \
  XLITE_UNARY_OPS(X)       \
  XLITE_UNARY_FLOAT_OPS(X) \
  XLITE_PREDICATE_OPS(X)   \
  XLITE_BINARY_OPS(X)      \
  XLITE_COMPARE_OPS(X)     \
  XLITE_LOGICAL_OPS(X)     \
  XLITE_REDUCE_OPS(X)      \
  XLITE_ARG_REDUCE_OPS(X)  \
  XLITE_SCAN_OPS(X)        \
  XLITE_SINGLE_OPS(X)

enum class OpId : uint16_t {
#define XLITE_OP_ENUM(id, name, arity, cls, traits, schema) id,
  XLITE_IR_OPS(XLITE_OP_ENUM)
#undef XLITE_OP_ENUM
      count_
};

constexpr int kNumOps = static_cast<int>(OpId::count_);

// The class of an op decides its shape rule and how passes and backends treat it.
enum class OpClass : uint8_t {
  Leaf,          // no operands: parameter, constant (a scalar literal of its dtype*), iota
  Random,        // operands (seed, offset), attrs shape, dtype
  Convert,       // attr dtype
  Unary,         // same shape and dtype out
  UnaryFloat,    // like Unary, floating dtypes only
  Predicate,     // same shape, bool out
  Binary,        // operands of one shape and dtype, same out
  Compare,       // operands of one shape and dtype, bool out
  Logical,       // bool operands, bool out
  Select,        // (bool cond, a, b) of one shape
  Reduce,        // attrs dims, keepdim
  ArgReduce,     // attrs dim, keepdim; i64 out
  Scan,          // attr dim: the running sum, product, maximum or minimum along dim; same shape and dtype out
  Sort,          // attrs dim, descending: the stable sorting permutation along dim (NaN above numbers); i64 out
  Reshape,       // attr shape
  Transpose,     // attr perm
  Broadcast,     // attrs shape, dims (operand dim i -> output dim dims[i]; size 1 expands)
  Slice,         // attrs start, limit, stride per dim
  Concat,        // attr dim
  Pad,           // attrs lo, hi (per dim, >= 0), value (of the operand's dtype*)
  Flip,          // attr dims
  Gather,        // (x, index) attr dim, torch.gather semantics
  IndexSelect,   // (x, index 1-D) attr dim
  ScatterAdd,    // (x, index, src) attr dim
  Dot,           // [B..., M, K] x [B..., K, N]
  Conv,          // x [N, C, H, W], w [O, C / groups, KH, KW]; attrs stride, lo, hi (padding), dilation, groups
  Transfer,      // the operand's value copied to the instruction's device (ir::Instr::device)
  Barrier,       // (value, after...): value, copied once every `after` operand is computed; no pass merges it
                 // with value or moves work across it (XLA's optimization_barrier). Gradient checkpointing
                 // recomputes behind one, so the recomputation neither merges with the forward pass nor runs
                 // before its gradient, and orders each segment's gradients before the next one's work
  CustomCall,    // a registered kernel (ir/kernel_registry.h) over its operands; attrs kernel, args. One output
                 // is its value; several are packed in one u8 buffer that custom_output instructions read
  CustomOutput,  // output `index` of a custom_call with several: attrs index, offset (its place in the packed
                 // buffer, ir::pack_outputs), shape, dtype
};

// * A value attr is a double. For a bool it must be 0 or 1 and for an integer dtype an integer in the
//   dtype's range (a backend cannot convert anything else defined); floating dtypes take any double.
//   The verifier rejects the rest, so text IR cannot give backends a value they would disagree on.
// Every result shape is addressable (ir/sizes.h): sizes that overflow are rejected, never wrapped.

struct OpInfo {
  std::string_view name;
  int arity;
  OpClass cls;
  uint8_t traits;  // OpTrait flags
  bool has(OpTrait trait) const { return (traits & trait) != 0; }
};

const OpInfo& op_info(OpId op);

// Ops of these classes read each operand at the element they write (when the operand has their shape).
bool is_elementwise_class(OpClass cls);
// Whether results of the op carry gradients: not integer-valued results (comparisons, argmax, iota),
// leaves, random draws, or piecewise-constant ops.
bool is_differentiable(OpId op);
// Whether an instruction of this op and dtype can raise at run time for a value in the data.
bool may_raise(OpId op, DType dtype);
inline std::string_view op_name(OpId op) { return op_info(op).name; }
// Returns false if no op has this name.
bool op_from_name(std::string_view name, OpId* op);

// Each class of several ops as its own enum, and an op's view as one of them (an InternalError for an op
// of another class). Layers with a case per op switch over these without `default:`, so that -Wswitch
// (an error in this build) names every switch a new op is missing from.
#define XLITE_SUB_ENUM(id, name, arity, cls, traits, schema) id,
enum class LeafOp : uint8_t { XLITE_LEAF_OPS(XLITE_SUB_ENUM) };
enum class RandomOp : uint8_t { XLITE_RANDOM_OPS(XLITE_SUB_ENUM) };
enum class UnaryOp : uint8_t { XLITE_UNARY_OPS(XLITE_SUB_ENUM) };
enum class UnaryFloatOp : uint8_t { XLITE_UNARY_FLOAT_OPS(XLITE_SUB_ENUM) };
enum class PredicateOp : uint8_t { XLITE_PREDICATE_OPS(XLITE_SUB_ENUM) };
enum class BinaryOp : uint8_t { XLITE_BINARY_OPS(XLITE_SUB_ENUM) };
enum class CompareOp : uint8_t { XLITE_COMPARE_OPS(XLITE_SUB_ENUM) };
enum class LogicalOp : uint8_t { XLITE_LOGICAL_OPS(XLITE_SUB_ENUM) };
enum class ReduceOp : uint8_t { XLITE_REDUCE_OPS(XLITE_SUB_ENUM) };
enum class ArgReduceOp : uint8_t { XLITE_ARG_REDUCE_OPS(XLITE_SUB_ENUM) };
enum class ScanOp : uint8_t { XLITE_SCAN_OPS(XLITE_SUB_ENUM) };
#undef XLITE_SUB_ENUM
LeafOp leaf_op(OpId op);
RandomOp random_op(OpId op);
UnaryOp unary_op(OpId op);
UnaryFloatOp unary_float_op(OpId op);
PredicateOp predicate_op(OpId op);
BinaryOp binary_op(OpId op);
CompareOp compare_op(OpId op);
LogicalOp logical_op(OpId op);
ReduceOp reduce_op(OpId op);
ArgReduceOp arg_reduce_op(OpId op);
ScanOp scan_op(OpId op);

// An error about IR op `op` as the user sees it: "[origin] message (in op)" when a public op `origin` built
// it (cross_entropy's gather), else "[op] message". Shape-rule errors at trace time and value errors at run
// time both read this way.
std::string blame_message(const char* origin, OpId op, std::string_view message);
// Whether v is a value of dtype, as constant and pad value attributes must be: for a bool 0 or 1, for an
// integer dtype an integer in its range; floating dtypes take any double.
bool holds_value(DType dtype, double v);

// A number for an error message: the shortest text that reads back as v (1e-30, 0.5, inf).
std::string number_text(double v);

}  // namespace xlite::ir
