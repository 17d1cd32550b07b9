#pragma once
// The one op table. Each IR op is declared here once; shape rules live in shape_rules.cpp, reference
// kernels in backends/reference, found by OpId.
#include <cstdint>
#include <string>
#include <string_view>

#include "xlite/dtype.h"

namespace xlite::ir {

// X(id, text name, arity (-1: variadic), class)
#define XLITE_IR_OPS(X)                                   \
  X(parameter, "parameter", 0, Leaf)                      \
  X(constant, "constant", 0, Leaf)                        \
  X(iota, "iota", 0, Leaf)                                \
  X(rng_uniform, "rng_uniform", 2, Random)                \
  X(rng_normal, "rng_normal", 2, Random)                  \
  X(convert, "convert", 1, Convert)                       \
  X(neg, "neg", 1, Unary)                                 \
  X(abs, "abs", 1, Unary)                                 \
  X(exp, "exp", 1, UnaryFloat)                            \
  X(expm1, "expm1", 1, UnaryFloat)                        \
  X(log, "log", 1, UnaryFloat)                            \
  X(log1p, "log1p", 1, UnaryFloat)                        \
  X(sqrt, "sqrt", 1, UnaryFloat)                          \
  X(rsqrt, "rsqrt", 1, UnaryFloat)                        \
  X(sin, "sin", 1, UnaryFloat)                            \
  X(cos, "cos", 1, UnaryFloat)                            \
  X(tan, "tan", 1, UnaryFloat)                            \
  X(tanh, "tanh", 1, UnaryFloat)                          \
  X(sigmoid, "sigmoid", 1, UnaryFloat)                    \
  X(relu, "relu", 1, Unary)                               \
  X(gelu, "gelu", 1, UnaryFloat)                          \
  X(gelu_tanh, "gelu_tanh", 1, UnaryFloat)                \
  X(silu, "silu", 1, UnaryFloat)                          \
  X(erf, "erf", 1, UnaryFloat)                            \
  X(floor, "floor", 1, UnaryFloat)                        \
  X(ceil, "ceil", 1, UnaryFloat)                          \
  X(round, "round", 1, UnaryFloat)                        \
  X(sign, "sign", 1, Unary)                               \
  X(reciprocal, "reciprocal", 1, UnaryFloat)              \
  X(logical_not, "logical_not", 1, Predicate)             \
  X(isnan, "isnan", 1, Predicate)                         \
  X(isinf, "isinf", 1, Predicate)                         \
  X(add, "add", 2, Binary)                                \
  X(sub, "sub", 2, Binary)                                \
  X(mul, "mul", 2, Binary)                                \
  X(div, "div", 2, Binary)                                \
  X(pow, "pow", 2, Binary)                                \
  X(maximum, "maximum", 2, Binary)                        \
  X(minimum, "minimum", 2, Binary)                        \
  X(remainder, "remainder", 2, Binary)                    \
  X(eq, "eq", 2, Compare)                                 \
  X(ne, "ne", 2, Compare)                                 \
  X(lt, "lt", 2, Compare)                                 \
  X(le, "le", 2, Compare)                                 \
  X(gt, "gt", 2, Compare)                                 \
  X(ge, "ge", 2, Compare)                                 \
  X(logical_and, "logical_and", 2, Logical)               \
  X(logical_or, "logical_or", 2, Logical)                 \
  X(logical_xor, "logical_xor", 2, Logical)               \
  X(select, "select", 3, Select)                          \
  X(reduce_sum, "reduce_sum", 1, Reduce)                  \
  X(reduce_prod, "reduce_prod", 1, Reduce)                \
  X(reduce_max, "reduce_max", 1, Reduce)                  \
  X(reduce_min, "reduce_min", 1, Reduce)                  \
  X(argmax, "argmax", 1, ArgReduce)                       \
  X(argmin, "argmin", 1, ArgReduce)                       \
  X(reshape, "reshape", 1, Reshape)                       \
  X(transpose, "transpose", 1, Transpose)                 \
  X(broadcast, "broadcast", 1, Broadcast)                 \
  X(slice, "slice", 1, Slice)                             \
  X(concat, "concat", -1, Concat)                         \
  X(pad, "pad", 1, Pad)                                   \
  X(flip, "flip", 1, Flip)                                \
  X(gather, "gather", 2, Gather)                          \
  X(index_select, "index_select", 2, IndexSelect)         \
  X(scatter_add, "scatter_add", 3, ScatterAdd)            \
  X(dot, "dot", 2, Dot)                                   \
  X(conv2d, "conv2d", 2, Conv)

enum class OpId : uint16_t {
#define XLITE_OP_ENUM(id, name, arity, cls) id,
  XLITE_IR_OPS(XLITE_OP_ENUM)
#undef XLITE_OP_ENUM
      count_
};

constexpr int kNumOps = static_cast<int>(OpId::count_);

// The class of an op decides its shape rule and how passes and backends treat it.
enum class OpClass : uint8_t {
  Leaf,        // no operands: parameter, constant (a scalar literal of its dtype*), iota
  Random,      // operands (seed, offset), attrs shape, dtype
  Convert,     // attr dtype
  Unary,       // same shape and dtype out
  UnaryFloat,  // like Unary, floating dtypes only
  Predicate,   // same shape, bool out
  Binary,      // operands of one shape and dtype, same out
  Compare,     // operands of one shape and dtype, bool out
  Logical,     // bool operands, bool out
  Select,      // (bool cond, a, b) of one shape
  Reduce,      // attrs dims, keepdim
  ArgReduce,   // attrs dim, keepdim; i64 out
  Reshape,     // attr shape
  Transpose,   // attr perm
  Broadcast,   // attrs shape, dims (operand dim i -> output dim dims[i]; size 1 expands)
  Slice,       // attrs start, limit, stride per dim
  Concat,      // attr dim
  Pad,         // attrs lo, hi (per dim, >= 0), value (of the operand's dtype*)
  Flip,        // attr dims
  Gather,      // (x, index) attr dim, torch.gather semantics
  IndexSelect, // (x, index 1-D) attr dim
  ScatterAdd,  // (x, index, src) attr dim
  Dot,         // [B..., M, K] x [B..., K, N]
  Conv,        // x [N, C, H, W], w [O, C / groups, KH, KW]; attrs stride, lo, hi (padding), dilation, groups
};

// * A value attr is a double. For a bool it must be 0 or 1 and for an integer dtype an integer in the
//   dtype's range (a backend cannot convert anything else defined); floating dtypes take any double.
//   The verifier rejects the rest, so text IR cannot give backends a value they would disagree on.
// Every result shape is addressable (ir/sizes.h): sizes that overflow are rejected, never wrapped.

struct OpInfo {
  std::string_view name;
  int arity;
  OpClass cls;
};

const OpInfo& op_info(OpId op);
inline std::string_view op_name(OpId op) { return op_info(op).name; }
// Returns false if no op has this name.
bool op_from_name(std::string_view name, OpId* op);

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
