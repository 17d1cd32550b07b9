// Elementwise ops: unary, binary (with broadcasting and promotion), where, clamp.
#include <string>

#include "ops/op_support.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::OpId;
using ops::OpScope;

// Float-only math turns integer and bool inputs into the default float dtype.
Tensor unary_float(const char* name, OpId op, const Tensor& x) {
  OpScope scope(name);
  Tensor in =
      ops::impl_of(x).dtype() == DType::bool_ || !is_floating(x.dtype()) ? ops::convert_to(x, ops::default_float()) : x;
  return scope.finish(ops::make(op, {in}));
}

Tensor unary_numeric(const char* name, OpId op, const Tensor& x) {
  OpScope scope(name);
  if (ops::impl_of(x).dtype() == DType::bool_) ops::fail("bool tensors are not supported");
  return scope.finish(ops::make(op, {x}));
}

// Floor, ceil and round leave integers as they are.
Tensor rounding(const char* name, OpId op, const Tensor& x) {
  OpScope scope(name);
  if (!is_floating(ops::impl_of(x).dtype())) return scope.finish(ops::fresh_handle(x));
  return scope.finish(ops::make(op, {x}));
}

enum class BinaryKind { arithmetic, true_division, comparison, logical };

// One operand of a binary op: a tensor or a host scalar.
struct Operand {
  const Tensor* tensor = nullptr;
  std::optional<Scalar> scalar;
};

// A host scalar goes to the device of the tensor operand it meets.
Tensor as_operand_tensor(const Operand& o, DType dtype, const Shape& shape, Device device) {
  Tensor t = o.tensor ? ops::convert_to(*o.tensor, dtype) : ops::scalar_tensor(*o.scalar, dtype, device);
  return ops::broadcast_to_shape(t, shape);
}

// The broadcast shape of the tensor operands (starting from `shape`) and their promoted dtype.
DType common_type(const Operand& a, const Operand& b, Shape& shape) {
  const Tensor* tensors[2];
  size_t num_tensors = 0;
  for (const Operand* o : {&a, &b}) {
    if (!o->tensor) continue;
    tensors[num_tensors++] = o->tensor;
    const Shape& s = ops::impl_of(*o->tensor).shape();
    if (shape.empty())
      shape = s;  // broadcasting against no dims at all gives the shape itself
    else if (s != shape)
      shape = ops::broadcast_shapes(shape, s);
  }
  const std::span<const Tensor* const> tensor_span(tensors, num_tensors);
  if (a.tensor && b.tensor) return ops::result_type(tensor_span, {});
  if (a.tensor) return ops::result_type(tensor_span, std::span<const Scalar>(&*b.scalar, 1));
  if (b.tensor) return ops::result_type(tensor_span, std::span<const Scalar>(&*a.scalar, 1));
  const Scalar both[] = {*a.scalar, *b.scalar};
  return ops::result_type({}, both);
}

Tensor binary(const char* name, OpId op, BinaryKind kind, const Operand& a, const Operand& b) {
  OpScope scope(name);
  Shape shape;
  DType dtype = common_type(a, b, shape);
  const Device device = a.tensor ? a.tensor->device() : b.tensor ? b.tensor->device() : Device{};
  switch (kind) {
    case BinaryKind::true_division:
      if (!is_floating(dtype)) dtype = ops::default_float();
      break;
    case BinaryKind::logical: dtype = DType::bool_; break;
    case BinaryKind::arithmetic:
      if (dtype == DType::bool_) {
        if (op == OpId::maximum || op == OpId::minimum) {
          // On bools, max is "or" and min is "and".
          OpId logical = op == OpId::maximum ? OpId::logical_or : OpId::logical_and;
          return scope.finish(ops::make(
              logical, {as_operand_tensor(a, dtype, shape, device), as_operand_tensor(b, dtype, shape, device)}));
        }
        if (op == OpId::add || op == OpId::mul) {
          OpId logical = op == OpId::add ? OpId::logical_or : OpId::logical_and;
          return scope.finish(ops::make(
              logical, {as_operand_tensor(a, dtype, shape, device), as_operand_tensor(b, dtype, shape, device)}));
        }
        ops::fail("bool tensors are not supported; convert them with .to()");
      }
      break;
    case BinaryKind::comparison: break;
  }
  return scope.finish(
      ops::make(op, {as_operand_tensor(a, dtype, shape, device), as_operand_tensor(b, dtype, shape, device)}));
}

Operand T(const Tensor& t) { return Operand{&t, std::nullopt}; }
Operand S(Scalar s) { return Operand{nullptr, s}; }

}  // namespace

Tensor neg(const Tensor& x) { return unary_numeric("neg", OpId::neg, x); }
Tensor abs(const Tensor& x) { return unary_numeric("abs", OpId::abs, x); }
Tensor relu(const Tensor& x) { return unary_numeric("relu", OpId::relu, x); }
Tensor exp(const Tensor& x) { return unary_float("exp", OpId::exp, x); }
Tensor expm1(const Tensor& x) { return unary_float("expm1", OpId::expm1, x); }
Tensor log(const Tensor& x) { return unary_float("log", OpId::log, x); }
Tensor log1p(const Tensor& x) { return unary_float("log1p", OpId::log1p, x); }
Tensor sqrt(const Tensor& x) { return unary_float("sqrt", OpId::sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary_float("rsqrt", OpId::rsqrt, x); }
Tensor sin(const Tensor& x) { return unary_float("sin", OpId::sin, x); }
Tensor cos(const Tensor& x) { return unary_float("cos", OpId::cos, x); }
Tensor tan(const Tensor& x) { return unary_float("tan", OpId::tan, x); }
Tensor atan(const Tensor& x) { return unary_float("atan", OpId::atan, x); }
Tensor tanh(const Tensor& x) { return unary_float("tanh", OpId::tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary_float("sigmoid", OpId::sigmoid, x); }
Tensor silu(const Tensor& x) { return unary_float("silu", OpId::silu, x); }
Tensor erf(const Tensor& x) { return unary_float("erf", OpId::erf, x); }
Tensor reciprocal(const Tensor& x) { return unary_float("reciprocal", OpId::reciprocal, x); }
Tensor floor(const Tensor& x) { return rounding("floor", OpId::floor, x); }
Tensor ceil(const Tensor& x) { return rounding("ceil", OpId::ceil, x); }
Tensor round(const Tensor& x) { return rounding("round", OpId::round, x); }

Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate == "none") return unary_float("gelu", OpId::gelu, x);
  if (approximate == "tanh") return unary_float("gelu", OpId::gelu_tanh, x);
  OpScope scope("gelu");
  ops::fail("approximate must be \"none\" or \"tanh\", got \"" + std::string(approximate) + "\"");
}

Tensor sign(const Tensor& x) {
  OpScope scope("sign");
  if (ops::impl_of(x).dtype() == DType::bool_) return scope.finish(ops::fresh_handle(x));
  return scope.finish(ops::make(OpId::sign, {x}));
}

Tensor square(const Tensor& x) {
  OpScope scope("square");
  Tensor in = ops::impl_of(x).dtype() == DType::bool_ ? ops::convert_to(x, DType::i64) : x;
  return scope.finish(ops::make(OpId::mul, {in, in}));
}

Tensor logical_not(const Tensor& x) {
  OpScope scope("logical_not");
  return scope.finish(ops::make(OpId::logical_not, {x}));
}
Tensor isnan(const Tensor& x) {
  OpScope scope("isnan");
  return scope.finish(ops::make(OpId::isnan, {x}));
}
Tensor isinf(const Tensor& x) {
  OpScope scope("isinf");
  return scope.finish(ops::make(OpId::isinf, {x}));
}

#define XLITE_DEFINE_BINARY(name, kind)                                                                 \
  Tensor name(const Tensor& a, const Tensor& b) { return binary(#name, OpId::name, kind, T(a), T(b)); } \
  Tensor name(const Tensor& a, Scalar b) { return binary(#name, OpId::name, kind, T(a), S(b)); }        \
  Tensor name(Scalar a, const Tensor& b) { return binary(#name, OpId::name, kind, S(a), T(b)); }
XLITE_DEFINE_BINARY(add, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(sub, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(mul, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(div, BinaryKind::true_division)
XLITE_DEFINE_BINARY(pow, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(maximum, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(minimum, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(remainder, BinaryKind::arithmetic)
XLITE_DEFINE_BINARY(eq, BinaryKind::comparison)
XLITE_DEFINE_BINARY(ne, BinaryKind::comparison)
XLITE_DEFINE_BINARY(lt, BinaryKind::comparison)
XLITE_DEFINE_BINARY(le, BinaryKind::comparison)
XLITE_DEFINE_BINARY(gt, BinaryKind::comparison)
XLITE_DEFINE_BINARY(ge, BinaryKind::comparison)
XLITE_DEFINE_BINARY(logical_and, BinaryKind::logical)
XLITE_DEFINE_BINARY(logical_or, BinaryKind::logical)
XLITE_DEFINE_BINARY(logical_xor, BinaryKind::logical)
#undef XLITE_DEFINE_BINARY

namespace {
Tensor where_impl(const Tensor& cond, const Operand& a, const Operand& b) {
  OpScope scope("where");
  if (ops::impl_of(cond).dtype() != DType::bool_)
    ops::fail("condition must be bool, got " + std::string(dtype_name(cond.dtype())));
  Shape shape = cond.shape();
  DType dtype = common_type(a, b, shape);
  const Device device = cond.device();
  return scope.finish(
      ops::make(OpId::select, {ops::broadcast_to_shape(cond, shape), as_operand_tensor(a, dtype, shape, device),
                               as_operand_tensor(b, dtype, shape, device)}));
}
}  // namespace

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return where_impl(c, T(a), T(b)); }
Tensor where(const Tensor& c, const Tensor& a, Scalar b) { return where_impl(c, T(a), S(b)); }
Tensor where(const Tensor& c, Scalar a, const Tensor& b) { return where_impl(c, S(a), T(b)); }
Tensor where(const Tensor& c, Scalar a, Scalar b) { return where_impl(c, S(a), S(b)); }

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  OpScope scope("clamp");
  if (!lo && !hi) ops::fail("at least one of lo and hi must be given");
  Tensor r = ops::fresh_handle(x);
  if (lo) r = maximum(r, *lo);
  if (hi) r = minimum(r, *hi);
  return scope.finish(r);
}

Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  OpScope scope("clamp");
  return scope.finish(minimum(maximum(x, lo), hi));
}

// Operators.
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return logical_xor(a, b); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace xlite
