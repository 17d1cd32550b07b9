// Lowers each IR op to StableHLO ops with xlite's semantics (ir/stablehlo.h says where they differ).
#include "ir/stablehlo.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/check.h"
#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "ir/stablehlo_writer.h"

namespace xlite::ir {
namespace {

using stablehlo::i64_array;
using stablehlo::i64_list;
using stablehlo::Value;
using stablehlo::Writer;

std::vector<int64_t> up_to(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

Shape without_dims(const Shape& shape, std::span<const int64_t> dims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out.push_back(shape[d]);
  return out;
}

// f16 and bf16 values are accumulated in f32 by xlite's reductions, dots and convolutions.
DType accumulator(DType dtype) { return is_16_bit_float(dtype) ? DType::f32 : dtype; }

// The literal of the dtype's largest (or smallest) value, infinities for floats: the identity of min (max).
std::string extreme(DType dtype, bool largest) {
  switch (dtype) {
    case DType::i32:
      return std::to_string(largest ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min());
    case DType::i64:
      return std::to_string(largest ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min());
    case DType::u8: return largest ? "255" : "0";
    case DType::bool_: return largest ? "true" : "false";
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16: return stablehlo::literal(largest ? INFINITY : -INFINITY, dtype);
  }
  return "0";
}

class Lowering {
 public:
  explicit Lowering(Writer& w) : w_(w) {}

  Value lower(const Instr& instr, const std::vector<Value>& in) {
    switch (op_info(instr.op).cls) {
      case OpClass::Leaf: return leaf(instr);
      case OpClass::Random: return random(instr);
      case OpClass::Convert: return convert(in[0], instr.dtype);
      case OpClass::Unary: return unary(instr.op, in[0]);
      case OpClass::UnaryFloat: return unary_float(instr.op, in[0]);
      case OpClass::Predicate: return predicate(instr.op, in[0]);
      case OpClass::Binary: return binary(instr.op, in[0], in[1]);
      case OpClass::Compare: return w_.compare(in[0], in[1], direction(compare_op(instr.op)));
      case OpClass::Logical: return w_.same(logical_name(logical_op(instr.op)), in);
      case OpClass::Select: return w_.select(in[0], in[1], in[2]);
      case OpClass::Reduce: return reduce(instr, in[0]);
      case OpClass::ArgReduce: return arg_reduce(instr, in[0]);
      case OpClass::Scan: return scan(instr, in[0]);
      case OpClass::Sort: return sort(instr, in[0]);
      case OpClass::Reshape: return w_.reshape(in[0], instr.shape);
      case OpClass::Transpose:
        return w_.op("stablehlo.transpose", in, instr.shape, instr.dtype,
                     "permutation = " + i64_array(TransposeAttrs::of(instr.attrs).perm));
      case OpClass::Broadcast:
        return w_.op("stablehlo.broadcast_in_dim", in, instr.shape, instr.dtype,
                     "broadcast_dimensions = " + i64_array(BroadcastAttrs::of(instr.attrs).dims));
      case OpClass::Slice: {
        const SliceAttrs slice = SliceAttrs::of(instr.attrs);
        return w_.op("stablehlo.slice", in, instr.shape, instr.dtype,
                     "limit_indices = " + i64_array(slice.limit) + ", start_indices = " + i64_array(slice.start) +
                         ", strides = " + i64_array(slice.stride));
      }
      case OpClass::Concat:
        return w_.op("stablehlo.concatenate", in, instr.shape, instr.dtype,
                     "dimension = " + std::to_string(DimAttrs::of(instr.attrs).dim) + " : i64");
      case OpClass::Pad: {
        const PadAttrs pad = PadAttrs::of(instr.attrs);
        const std::vector<int64_t> interior(pad.lo.size(), 0);
        return w_.op("stablehlo.pad", {in[0], w_.constant(pad.value, instr.dtype)}, instr.shape, instr.dtype,
                     "edge_padding_high = " + i64_array(pad.hi) + ", edge_padding_low = " + i64_array(pad.lo) +
                         ", interior_padding = " + i64_array(interior));
      }
      case OpClass::Flip:
        return w_.op("stablehlo.reverse", in, instr.shape, instr.dtype,
                     "dimensions = " + i64_array(FlipAttrs::of(instr.attrs).dims));
      case OpClass::Gather: return gather(in[0], in[1], DimAttrs::of(instr.attrs).dim);
      case OpClass::IndexSelect: {
        const int64_t dim = DimAttrs::of(instr.attrs).dim;
        const Value index = w_.op("stablehlo.broadcast_in_dim", {in[1]}, instr.shape, in[1].dtype,
                                  "broadcast_dimensions = array<i64: " + std::to_string(dim) + ">");
        return gather(in[0], index, dim);
      }
      case OpClass::ScatterAdd: return scatter_add(in[0], in[1], in[2], DimAttrs::of(instr.attrs).dim);
      case OpClass::Dot: return dot(instr, in[0], in[1]);
      case OpClass::Conv: return conv(instr, in[0], in[1]);
      case OpClass::Transfer: return in[0];
      case OpClass::Barrier: return w_.op_results("stablehlo.optimization_barrier", in, in, "")[0];
      case OpClass::CustomCall: return custom_call(instr, in);
      case OpClass::CustomOutput: {
        // A call with several outputs is a multi-result op: output i is its result #i.
        const CustomOutputAttrs output = CustomOutputAttrs::of(instr.attrs);
        return {in[0].name + "#" + std::to_string(output.index), instr.shape, instr.dtype};
      }
    }
    XLITE_FAIL("[stablehlo] no lowering for " + std::string(op_name(instr.op)));
  }

 private:
  Value zero(const Value& like) { return w_.splat(0, like.dtype, like.shape); }
  Value splat(double v, const Value& like) { return w_.splat(v, like.dtype, like.shape); }
  Value mul(const Value& a, const Value& b) { return w_.same("stablehlo.multiply", {a, b}); }
  Value add(const Value& a, const Value& b) { return w_.same("stablehlo.add", {a, b}); }
  Value logical_and(const Value& a, const Value& b) { return w_.same("stablehlo.and", {a, b}); }
  Value logical_or(const Value& a, const Value& b) { return w_.same("stablehlo.or", {a, b}); }
  Value iota(const Shape& shape, int64_t dim, DType dtype) {
    return w_.op("stablehlo.iota", {}, shape, dtype, "iota_dimension = " + std::to_string(dim) + " : i64");
  }

  Value leaf(const Instr& instr) {
    switch (leaf_op(instr.op)) {
      case LeafOp::constant: return w_.constant(ConstantAttrs::of(instr.attrs).value, instr.dtype);
      case LeafOp::iota: return iota(instr.shape, IotaAttrs::of(instr.attrs).dim, instr.dtype);
      case LeafOp::parameter: break;  // bound to the function's arguments before lowering
    }
    XLITE_FAIL("[stablehlo] a parameter is an argument, not an op");
  }

  Value random(const Instr& instr) {
    const bool normal = random_op(instr.op) == RandomOp::rng_normal;
    std::string dims;
    for (size_t d = 0; d < instr.shape.size(); ++d) dims += (d ? ", " : "") + std::to_string(instr.shape[d]);
    const Shape rank{static_cast<int64_t>(instr.shape.size())};
    const Value shape = w_.op("stablehlo.constant", {}, rank, DType::i64,
                              "value = dense<[" + dims + "]> : " + stablehlo::tensor_type(rank, DType::i64));
    return w_.op("stablehlo.rng", {w_.constant(0, instr.dtype), w_.constant(1, instr.dtype), shape}, instr.shape,
                 instr.dtype,
                 std::string("rng_distribution = #stablehlo<rng_distribution ") + (normal ? "NORMAL>" : "UNIFORM>"));
  }

  Value convert(const Value& x, DType dtype) {
    if (dtype == DType::bool_) return x.dtype == DType::bool_ ? x : w_.compare(x, zero(x), "NE");
    // xlite stores a float in a narrow integer through i64, wrapping (-1.0 -> 255 in u8).
    if (is_floating(x.dtype) && (dtype == DType::i32 || dtype == DType::u8))
      return w_.convert(w_.convert(x, DType::i64), dtype);
    return w_.convert(x, dtype);
  }

  Value unary(OpId op, const Value& x) {
    const bool is_unsigned = x.dtype == DType::u8;
    switch (unary_op(op)) {
      case UnaryOp::neg:
        return is_unsigned ? w_.same("stablehlo.subtract", {zero(x), x}) : w_.same("stablehlo.negate", {x});
      case UnaryOp::abs: return is_unsigned ? x : w_.same("stablehlo.abs", {x});
      case UnaryOp::relu: return is_unsigned ? x : w_.same("stablehlo.maximum", {x, zero(x)});
      case UnaryOp::sign:
        return is_unsigned ? w_.convert(w_.compare(x, zero(x), "NE"), x.dtype) : w_.same("stablehlo.sign", {x});
    }
    XLITE_FAIL("[stablehlo] unary op");
  }

  Value unary_float(OpId op, const Value& x) {
    switch (unary_float_op(op)) {
      case UnaryFloatOp::exp: return w_.same("stablehlo.exponential", {x});
      case UnaryFloatOp::expm1: return w_.same("stablehlo.exponential_minus_one", {x});
      case UnaryFloatOp::log: return w_.same("stablehlo.log", {x});
      case UnaryFloatOp::log1p: return w_.same("stablehlo.log_plus_one", {x});
      case UnaryFloatOp::sqrt: return w_.same("stablehlo.sqrt", {x});
      case UnaryFloatOp::rsqrt: return w_.same("stablehlo.rsqrt", {x});
      case UnaryFloatOp::sin: return w_.same("stablehlo.sine", {x});
      case UnaryFloatOp::cos: return w_.same("stablehlo.cosine", {x});
      case UnaryFloatOp::tan: return w_.same("stablehlo.tan", {x});
      case UnaryFloatOp::atan: return w_.same("stablehlo.atan2", {x, splat(1, x)});
      case UnaryFloatOp::tanh: return w_.same("stablehlo.tanh", {x});
      case UnaryFloatOp::sigmoid: return w_.same("stablehlo.logistic", {x});
      case UnaryFloatOp::erf: return w_.same("chlo.erf", {x});
      case UnaryFloatOp::floor: return w_.same("stablehlo.floor", {x});
      case UnaryFloatOp::ceil: return w_.same("stablehlo.ceil", {x});
      case UnaryFloatOp::round: return w_.same("stablehlo.round_nearest_even", {x});
      case UnaryFloatOp::reciprocal: return w_.same("stablehlo.divide", {splat(1, x), x});
      case UnaryFloatOp::silu: return mul(x, w_.same("stablehlo.logistic", {x}));
      case UnaryFloatOp::gelu: {  // 0.5 x (1 + erf(x / sqrt 2))
        const Value scaled = mul(x, splat(0.70710678118654752, x));
        return half_x_times_one_plus(x, w_.same("chlo.erf", {scaled}));
      }
      case UnaryFloatOp::gelu_tanh: {  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        const Value cube = mul(mul(x, x), x);
        const Value inner = add(x, mul(splat(0.044715, x), cube));
        const Value scaled = mul(splat(0.79788456080286536, x), inner);
        return half_x_times_one_plus(x, w_.same("stablehlo.tanh", {scaled}));
      }
    }
    XLITE_FAIL("[stablehlo] unary float op");
  }

  // 0.5 x (1 + t). Each value is named before it is used: the order of a call's arguments is unspecified in
  // C++, and the text must not depend on the compiler.
  Value half_x_times_one_plus(const Value& x, const Value& t) {
    const Value one_plus = add(splat(1, x), t);
    const Value half_x = mul(splat(0.5, x), x);
    return mul(half_x, one_plus);
  }

  Value predicate(OpId op, const Value& x) {
    const bool floating = is_floating(x.dtype);
    switch (predicate_op(op)) {
      case PredicateOp::logical_not:
        return x.dtype == DType::bool_ ? w_.same("stablehlo.not", {x}) : w_.compare(x, zero(x), "EQ");
      case PredicateOp::isnan: return floating ? w_.compare(x, x, "NE") : w_.splat(0, DType::bool_, x.shape);
      case PredicateOp::isinf: {
        if (!floating) return w_.splat(0, DType::bool_, x.shape);
        const Value magnitude = w_.same("stablehlo.abs", {x});
        return w_.compare(magnitude, splat(INFINITY, x), "EQ");
      }
    }
    XLITE_FAIL("[stablehlo] predicate op");
  }

  Value binary(OpId op, const Value& a, const Value& b) {
    switch (binary_op(op)) {
      case BinaryOp::add: return add(a, b);
      case BinaryOp::sub: return w_.same("stablehlo.subtract", {a, b});
      case BinaryOp::mul: return mul(a, b);
      case BinaryOp::div: return w_.same("stablehlo.divide", {a, b});
      case BinaryOp::pow: return w_.same("stablehlo.power", {a, b});
      case BinaryOp::maximum: return w_.same("stablehlo.maximum", {a, b});
      case BinaryOp::minimum: return w_.same("stablehlo.minimum", {a, b});
      case BinaryOp::remainder: {
        // StableHLO's remainder has the dividend's sign, PyTorch's (and xlite's) the divisor's.
        const Value r = w_.same("stablehlo.remainder", {a, b});
        if (a.dtype == DType::u8) return r;
        const Value r_negative = w_.compare(r, zero(r), "LT");
        const Value b_negative = w_.compare(b, zero(b), "LT");
        const Value signs_differ = w_.same("stablehlo.xor", {r_negative, b_negative});
        const Value fix = logical_and(w_.compare(r, zero(r), "NE"), signs_differ);
        return w_.select(fix, add(r, b), r);
      }
    }
    XLITE_FAIL("[stablehlo] binary op");
  }

  static std::string_view direction(CompareOp op) {
    switch (op) {
      case CompareOp::eq: return "EQ";
      case CompareOp::ne: return "NE";
      case CompareOp::lt: return "LT";
      case CompareOp::le: return "LE";
      case CompareOp::gt: return "GT";
      case CompareOp::ge: return "GE";
    }
    return "EQ";
  }

  static std::string_view logical_name(LogicalOp op) {
    switch (op) {
      case LogicalOp::logical_and: return "stablehlo.and";
      case LogicalOp::logical_or: return "stablehlo.or";
      case LogicalOp::logical_xor: return "stablehlo.xor";
    }
    return "stablehlo.and";
  }

  // The identity and the combining op of a reduction or scan over `acc` values (bools: or / and).
  enum class Combiner { sum, product, maximum, minimum };
  std::pair<Value, std::string_view> combiner(Combiner kind, DType acc) {
    switch (kind) {
      case Combiner::sum: return {w_.constant(0, acc), "stablehlo.add"};
      case Combiner::product: return {w_.constant(1, acc), "stablehlo.multiply"};
      case Combiner::maximum:
        return {w_.constant_literal(extreme(acc, false), acc),
                acc == DType::bool_ ? "stablehlo.or" : "stablehlo.maximum"};
      case Combiner::minimum:
        return {w_.constant_literal(extreme(acc, true), acc),
                acc == DType::bool_ ? "stablehlo.and" : "stablehlo.minimum"};
    }
    XLITE_FAIL("[stablehlo] no combiner");
  }

  Value reduce(const Instr& instr, const Value& x) {
    const ReduceAttrs attrs = ReduceAttrs::of(instr.attrs);
    std::vector<int64_t> dims(attrs.dims.begin(), attrs.dims.end());
    std::sort(dims.begin(), dims.end());
    const DType acc = accumulator(x.dtype);
    Combiner kind = Combiner::sum;
    switch (reduce_op(instr.op)) {
      case ReduceOp::reduce_sum: kind = Combiner::sum; break;
      case ReduceOp::reduce_prod: kind = Combiner::product; break;
      case ReduceOp::reduce_max: kind = Combiner::maximum; break;
      case ReduceOp::reduce_min: kind = Combiner::minimum; break;
    }
    const auto [initial, combine] = combiner(kind, acc);
    const std::vector<Value> reduced =
        w_.op_with_region("stablehlo.reduce", {w_.convert(x, acc), initial}, {{"", without_dims(x.shape, dims), acc}},
                          "dimensions = " + i64_array(dims), {acc, acc},
                          [&](Writer& body, std::span<const Value> args) -> std::vector<Value> {
                            return {body.same(combine, {args[0], args[1]})};
                          });
    return w_.reshape(w_.convert(reduced[0], x.dtype), instr.shape);
  }

  // A running reduction as XLA writes one: a window of the whole dim, padded before by all but one element
  // with the combiner's identity, so that output k reduces elements 0..k.
  Value scan(const Instr& instr, const Value& x) {
    const int64_t dim = DimAttrs::of(instr.attrs).dim, rank = static_cast<int64_t>(x.shape.size());
    if (x.shape[dim] == 0) return x;  // nothing to scan; XLA refuses a window of size 0
    const DType acc = accumulator(x.dtype);
    Combiner kind = Combiner::sum;
    switch (scan_op(instr.op)) {
      case ScanOp::cumsum: kind = Combiner::sum; break;
      case ScanOp::cumprod: kind = Combiner::product; break;
      case ScanOp::cummax: kind = Combiner::maximum; break;
      case ScanOp::cummin: kind = Combiner::minimum; break;
    }
    const auto [initial, combine] = combiner(kind, acc);
    std::vector<int64_t> window(rank, 1);
    window[dim] = x.shape[dim];
    std::string padding = "dense<[";
    for (int64_t d = 0; d < rank; ++d)
      padding += std::string(d ? ", " : "") + "[" + std::to_string(d == dim ? x.shape[dim] - 1 : 0) + ", 0]";
    padding += "]> : tensor<" + std::to_string(rank) + "x2xi64>";
    const std::vector<Value> scanned =
        w_.op_with_region("stablehlo.reduce_window", {w_.convert(x, acc), initial}, {{"", x.shape, acc}},
                          "padding = " + padding + ", window_dimensions = " + i64_array(window), {acc, acc},
                          [&](Writer& body, std::span<const Value> args) -> std::vector<Value> {
                            return {body.same(combine, {args[0], args[1]})};
                          });
    return w_.convert(scanned[0], x.dtype);
  }

  // A stable sort of (value, position) pairs by value, NaN above every number; the positions are the result.
  Value sort(const Instr& instr, const Value& x) {
    const SortAttrs attrs = SortAttrs::of(instr.attrs);
    const Value position = iota(x.shape, attrs.dim, DType::i64);
    const bool floating = is_floating(x.dtype);
    const std::vector<Value> sorted = w_.op_with_region(
        "stablehlo.sort", {x, position}, {{"", x.shape, x.dtype}, {"", x.shape, DType::i64}},
        "dimension = " + std::to_string(attrs.dim) + " : i64, is_stable = true",
        {x.dtype, x.dtype, DType::i64, DType::i64},
        [&](Writer& body, std::span<const Value> args) -> std::vector<Value> {
          const Value &a = args[0], &b = args[1];
          Value before = body.compare(a, b, attrs.descending ? "GT" : "LT");
          if (floating) {  // ascending: a number before NaN; descending: NaN before a number
            const Value a_nan = body.compare(a, a, "NE"), b_nan = body.compare(b, b, "NE");
            const Value first_nan = attrs.descending ? a_nan : b_nan, second_nan = attrs.descending ? b_nan : a_nan;
            before = body.select(first_nan, body.same("stablehlo.not", {second_nan}),
                                 body.same("stablehlo.and", {before, body.same("stablehlo.not", {second_nan})}));
          }
          return {before};
        });
    return sorted[1];
  }

  // A variadic reduce over (value, index) pairs whose combiner keeps the better pair: the larger (argmax) or
  // smaller (argmin) value, NaN beating every number, and on a tie the smaller index. It is commutative and
  // associative, so XLA may combine in any order.
  Value arg_reduce(const Instr& instr, const Value& operand) {
    const ArgReduceAttrs attrs = ArgReduceAttrs::of(instr.attrs);
    const bool want_max = arg_reduce_op(instr.op) == ArgReduceOp::argmax;
    const Value x = operand.dtype == DType::bool_ ? w_.convert(operand, DType::u8) : operand;
    const Value index = iota(x.shape, attrs.dim, DType::i64);
    const Value initial = w_.constant_literal(extreme(x.dtype, !want_max), x.dtype);
    const Value last_index = w_.constant_literal(extreme(DType::i64, true), DType::i64);
    const std::vector<int64_t> dims{attrs.dim};
    const Shape reduced_shape = without_dims(x.shape, dims);
    const bool floating = is_floating(x.dtype);
    const std::vector<Value> results = w_.op_with_region(
        "stablehlo.reduce", {x, index, initial, last_index},
        {{"", reduced_shape, x.dtype}, {"", reduced_shape, DType::i64}}, "dimensions = " + i64_array(dims),
        {x.dtype, DType::i64, x.dtype, DType::i64},
        [&](Writer& body, std::span<const Value> args) -> std::vector<Value> {
          const Value &a = args[0], &a_index = args[1], &b = args[2], &b_index = args[3];
          Value a_beats = body.compare(a, b, want_max ? "GT" : "LT");
          Value tie = body.compare(a, b, "EQ");
          if (floating) {
            const Value a_nan = body.compare(a, a, "NE"), b_nan = body.compare(b, b, "NE");
            a_beats = body.same("stablehlo.or",
                                {a_beats, body.same("stablehlo.and", {a_nan, body.same("stablehlo.not", {b_nan})})});
            tie = body.same("stablehlo.or", {tie, body.same("stablehlo.and", {a_nan, b_nan})});
          }
          const Value a_first = body.compare(a_index, b_index, "LT");
          const Value keep_a = body.same("stablehlo.or", {a_beats, body.same("stablehlo.and", {tie, a_first})});
          return {body.select(keep_a, a, b), body.select(keep_a, a_index, b_index)};
        });
    return w_.reshape(results[1], instr.shape);
  }

  // torch.gather's index (each element names a position along dim) as a full StableHLO index: shape
  // index.shape + [rank], whose last dim holds, for each element, its own position with dim replaced.
  Value full_index(const Value& index, int64_t dim) {
    const int64_t rank = static_cast<int64_t>(index.shape.size());
    Shape column = index.shape;
    column.push_back(1);
    std::vector<Value> parts;
    for (int64_t d = 0; d < rank; ++d) {
      const Value part = d == dim ? w_.convert(index, DType::i64) : iota(index.shape, d, DType::i64);
      parts.push_back(w_.reshape(part, column));
    }
    Shape shape = index.shape;
    shape.push_back(rank);
    return w_.op("stablehlo.concatenate", parts, shape, DType::i64, "dimension = " + std::to_string(rank) + " : i64");
  }

  Value gather(const Value& x, const Value& index, int64_t dim) {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    // XLA refuses slices of an empty dim, and an empty index reads nothing.
    if (numel(index.shape) == 0) return w_.splat(0, x.dtype, index.shape);
    const std::vector<int64_t> all = up_to(rank), ones(rank, 1);
    return w_.op("stablehlo.gather", {x, full_index(index, dim)}, index.shape, x.dtype,
                 "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = " + i64_list(all) +
                     ", start_index_map = " + i64_list(all) + ", index_vector_dim = " + std::to_string(rank) +
                     ">, indices_are_sorted = false, slice_sizes = " + i64_array(ones));
  }

  Value scatter_add(const Value& x, const Value& index, const Value& src, int64_t dim) {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (numel(index.shape) == 0) return x;  // XLA refuses an empty dim; nothing is added
    const std::vector<int64_t> all = up_to(rank);
    const std::string_view combine = x.dtype == DType::bool_ ? "stablehlo.or" : "stablehlo.add";
    return w_.op_with_region(
        "stablehlo.scatter", {x, full_index(index, dim), src}, {{"", x.shape, x.dtype}},
        "indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = " +
            i64_list(all) + ", scatter_dims_to_operand_dims = " + i64_list(all) +
            ", index_vector_dim = " + std::to_string(rank) + ">, unique_indices = false",
        {x.dtype, x.dtype}, [&](Writer& body, std::span<const Value> args) -> std::vector<Value> {
          return {body.same(combine, {args[0], args[1]})};
        })[0];
  }

  Value dot(const Instr& instr, const Value& a, const Value& b) {
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    const std::vector<int64_t> batch = up_to(rank - 2);
    std::string numbers = "dot_dimension_numbers = #stablehlo.dot<";
    if (!batch.empty())
      numbers +=
          "lhs_batching_dimensions = " + i64_list(batch) + ", rhs_batching_dimensions = " + i64_list(batch) + ", ";
    numbers += "lhs_contracting_dimensions = [" + std::to_string(rank - 1) + "], rhs_contracting_dimensions = [" +
               std::to_string(rank - 2) + "]>";
    const DType acc = accumulator(a.dtype);
    const Value product =
        w_.op("stablehlo.dot_general", {w_.convert(a, acc), w_.convert(b, acc)}, instr.shape, acc, numbers);
    return w_.convert(product, instr.dtype);
  }

  // stablehlo.custom_call with the kernel's name as its target and its attributes as the backend config:
  // a tool that runs the module needs the kernel registered under that name.
  Value custom_call(const Instr& instr, const std::vector<Value>& in) {
    const CustomCallAttrs call = CustomCallAttrs::of(instr.attrs);
    std::vector<OperandType> types;
    for (const Value& v : in) types.push_back({v.shape, v.dtype});
    std::vector<Value> results;
    for (const kernels::TensorType& t : custom_call_outputs(instr.attrs, types))
      results.push_back({"", t.shape, t.dtype});
    const std::string properties = "backend_config = " + stablehlo::string_literal(call.args) +
                                   ", call_target_name = " + stablehlo::string_literal(call.kernel);
    if (results.size() == 1) return w_.op("stablehlo.custom_call", in, instr.shape, instr.dtype, properties);
    // The packed value stands for the results; custom_output instructions name them.
    const std::vector<Value> named = w_.op_results("stablehlo.custom_call", in, results, properties);
    return {named[0].name.substr(0, named[0].name.find('#')), instr.shape, instr.dtype};
  }

  Value conv(const Instr& instr, const Value& x, const Value& weight) {
    const ConvAttrs conv = ConvAttrs::of(instr.attrs);
    const std::string padding = "dense<[[" + std::to_string(conv.lo[0]) + ", " + std::to_string(conv.hi[0]) + "], [" +
                                std::to_string(conv.lo[1]) + ", " + std::to_string(conv.hi[1]) +
                                "]]> : tensor<2x2xi64>";
    const DType acc = accumulator(x.dtype);
    const Value out = w_.op(
        "stablehlo.convolution", {w_.convert(x, acc), w_.convert(weight, acc)}, instr.shape, acc,
        "batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, "
        "feature_group_count = " +
            std::to_string(conv.groups) + " : i64, lhs_dilation = array<i64: 1, 1>, padding = " + padding +
            ", rhs_dilation = " + i64_array(conv.dilation) + ", window_strides = " + i64_array(conv.stride));
    return w_.convert(out, instr.dtype);
  }

  Writer& w_;
};

std::string types_of(const std::vector<Value>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + stablehlo::tensor_type(values[i].shape, values[i].dtype);
  return s;
}

}  // namespace

std::string to_stablehlo(const Graph& graph) {
  std::vector<Value> arguments(graph.num_parameters);
  std::vector<Value> values(graph.instrs.size());
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    const Instr& instr = graph.instrs[i];
    if (instr.op != OpId::parameter) continue;
    const int64_t index = ParameterAttrs::of(instr.attrs).index;
    values[i] = arguments[index] = {"%arg" + std::to_string(index), instr.shape, instr.dtype};
  }
  Writer w(4);
  Lowering lowering(w);
  for (size_t i = 0; i < graph.instrs.size(); ++i) {
    const Instr& instr = graph.instrs[i];
    if (instr.op == OpId::parameter) continue;
    w.comment(instr_text(graph, i));
    std::vector<Value> in;
    for (int32_t o : instr.operands) in.push_back(values[o]);
    values[i] = lowering.lower(instr, in);
  }
  std::vector<Value> results;
  std::string names;
  for (int32_t o : graph.outputs) {
    names += (results.empty() ? "" : ", ") + values[o].name;
    results.push_back(values[o]);
  }
  w.line("\"func.return\"(" + names + ") : (" + types_of(results) + ") -> ()");

  std::string signature;
  for (size_t i = 0; i < arguments.size(); ++i)
    signature +=
        (i ? ", " : "") + arguments[i].name + ": " + stablehlo::tensor_type(arguments[i].shape, arguments[i].dtype);
  return "module @xlite {\n  func.func public @main(" + signature + ") -> (" + types_of(results) + ") {\n" + w.text() +
         "  }\n}\n";
}

}  // namespace xlite::ir
