// Elementwise functions written with the primitive ops: inverse trigonometry, hyperbolic functions,
// overflow-safe logaddexp and hypot, PyTorch's activations, clamps and nan_to_num, and dropout.
//
// Where a formula picks between branches with `where`, the branch not taken still runs and still gets a
// (zero) gradient; an input that overflows there would turn that zero into NaN (0 * inf). Each such
// branch therefore reads an input made safe for it (`safe`), not x itself.
#include <cmath>
#include <limits>
#include <string>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;

// What a float function returns for x: x's dtype, or the default float for integers and bools.
DType float_result(DType d) { return is_floating(d) ? d : ops::default_float(); }
DType float_result(const Tensor& a, const Tensor& b) {
  const Tensor* operands[] = {&a, &b};
  return float_result(ops::result_type(operands, {}));
}

// The values a float function computes with: 16-bit floats in f32, rounded once at the end (back()), as
// PyTorch's kernels compute them.
Tensor floating(const Tensor& x, DType result) {
  return ops::convert_to(x, is_16_bit_float(result) ? DType::f32 : result);
}
Tensor floating(const Tensor& x) { return floating(x, float_result(ops::impl_of(x).dtype())); }
Tensor back(const Tensor& r, DType result) { return ops::convert_to(r, result); }

// x where `use` holds, else `fallback`: the input of a branch that is only taken where `use` holds.
Tensor safe(const Tensor& use, const Tensor& x, double fallback) { return where(use, x, fallback); }

// v is negative or a negative zero (1 / -0 is -inf).
Tensor sign_bit(const Tensor& v) { return logical_or(v < 0, logical_and(v == 0, reciprocal(v) < 0)); }

double largest_finite(DType d) {
  switch (d) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;
    case DType::f32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}
}  // namespace

Tensor asin(const Tensor& x) {
  OpScope scope("asin");
  Tensor f = floating(x);
  // x / sqrt(1 - x^2) is +-inf at +-1, where atan gives +-pi/2; (1 - x)(1 + x) keeps precision near 1.
  return scope.finish(back(atan(f / sqrt((1.0 - f) * (f + 1.0))), float_result(x.dtype())));
}

Tensor acos(const Tensor& x) {
  OpScope scope("acos");
  Tensor f = floating(x);
  // 2 atan(sqrt((1 - x) / (1 + x))) is accurate near 1, where pi/2 - asin(x) would cancel.
  return scope.finish(back(atan(sqrt((1.0 - f) / (f + 1.0))) * 2.0, float_result(x.dtype())));
}

Tensor atan2(const Tensor& y, const Tensor& x) {
  OpScope scope("atan2");
  const DType out = float_result(y, x);
  Shape shape = ops::broadcast_shapes(y.shape(), x.shape());
  Tensor yf = ops::broadcast_to_shape(floating(y, out), shape);
  Tensor xf = ops::broadcast_to_shape(floating(x, out), shape);
  // Two infinities point along a diagonal: their signs give the same angle.
  Tensor both_infinite = logical_and(isinf(xf), isinf(yf));
  Tensor xs = where(both_infinite, sign(xf), xf), ys = where(both_infinite, sign(yf), yf);
  Tensor origin = logical_and(xs == 0, ys == 0);
  Tensor x_negative = sign_bit(xs), y_negative = sign_bit(ys);
  Tensor half_turn = where(y_negative, full_like(ys, -kPi), full_like(ys, kPi));
  // atan(y / x) is the angle for x > 0 and off by a half turn for x < 0 (and for x = -0, where y / x is
  // an infinity of the wrong sign). At the origin the angle is +-0 or +-pi by the zeros' signs.
  Tensor t = atan(ys / safe(logical_not(origin), xs, 1.0));
  Tensor angle = where(x_negative, t + half_turn, t);
  return scope.finish(back(where(origin, where(x_negative, half_turn, ys), angle), out));
}

Tensor sinh(const Tensor& x) {
  OpScope scope("sinh");
  Tensor f = floating(x);
  Tensor small = abs(f) < 1.0;
  Tensor s = safe(small, f, 0.0);
  // expm1 keeps precision near 0; halving inside exp keeps sinh finite up to the dtype's limit.
  Tensor near_zero = (expm1(s) - expm1(-s)) * 0.5;
  Tensor l = safe(logical_not(small), f, 1.0);
  return scope.finish(back(where(small, near_zero, exp(l - kLn2) - exp(-l - kLn2)), float_result(x.dtype())));
}

Tensor cosh(const Tensor& x) {
  OpScope scope("cosh");
  Tensor f = floating(x);
  return scope.finish(back(exp(f - kLn2) + exp(-f - kLn2), float_result(x.dtype())));
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  OpScope scope("logaddexp");
  const DType out = float_result(a, b);
  Tensor af = floating(a, out), bf = floating(b, out);
  // Equal infinities would give inf - inf; their difference is 0 there.
  Tensor equal = af == bf;
  Tensor difference = where(equal, 0.0, safe(logical_not(equal), af, 0.0) - safe(logical_not(equal), bf, 0.0));
  return scope.finish(back(maximum(af, bf) + log1p(exp(-abs(difference))), out));
}

Tensor hypot(const Tensor& a, const Tensor& b) {
  OpScope scope("hypot");
  const DType out = float_result(a, b);
  Tensor af = floating(a, out), bf = floating(b, out);
  Tensor infinite = logical_or(isinf(af), isinf(bf));
  // Scaled by the larger magnitude so that the squares neither overflow nor underflow.
  Tensor m = maximum(abs(af), abs(bf));
  Tensor scale = where(logical_or(m == 0, infinite), 1.0, m);
  Tensor r = scale * sqrt(square(af / scale) + square(bf / scale));
  return scope.finish(back(where(infinite, INFINITY, r), out));
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  OpScope scope("softplus");
  if (beta == 0) ops::fail("beta must not be 0");
  Tensor f = floating(x);
  Tensor linear = f * beta > threshold;
  Tensor soft = log1p(exp(safe(logical_not(linear), f, 0.0) * beta)) / beta;
  return scope.finish(back(where(linear, f, soft), float_result(x.dtype())));
}

Tensor mish(const Tensor& x) {
  OpScope scope("mish");
  Tensor f = floating(x);
  return scope.finish(back(f * tanh(softplus(f)), float_result(x.dtype())));
}

Tensor hardsigmoid(const Tensor& x) {
  OpScope scope("hardsigmoid");
  return scope.finish(back(clamp(floating(x) / 6.0 + 0.5, 0.0, 1.0), float_result(x.dtype())));
}

Tensor hardswish(const Tensor& x) {
  OpScope scope("hardswish");
  Tensor f = floating(x);
  return scope.finish(back(f * hardsigmoid(f), float_result(x.dtype())));
}

Tensor elu(const Tensor& x, double alpha) {
  OpScope scope("elu");
  Tensor f = floating(x);
  Tensor positive = f > 0;
  return scope.finish(
      back(where(positive, f, expm1(safe(logical_not(positive), f, 0.0)) * alpha), float_result(x.dtype())));
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  OpScope scope("leaky_relu");
  Tensor f = floating(x);
  return scope.finish(back(where(f > 0, f, f * negative_slope), float_result(x.dtype())));
}

Tensor glu(const Tensor& x, int64_t dim) {
  OpScope scope("glu");
  if (x.dim() == 0) ops::fail("needs at least one dim, got a 0-dim tensor");
  const int64_t d = ops::normalize_dim(dim, x.dim());
  if (x.shape()[d] % 2 != 0)
    ops::fail("dim " + std::to_string(dim) + " of " + shape_str(x.shape()) + " must have an even size");
  std::vector<Tensor> halves = chunk(floating(x), 2, d);
  return scope.finish(back(halves[0] * sigmoid(halves[1]), float_result(x.dtype())));
}

Tensor clamp_min(const Tensor& x, Scalar min) {
  OpScope scope("clamp_min");
  return scope.finish(clamp(x, min, std::nullopt));
}

Tensor clamp_max(const Tensor& x, Scalar max) {
  OpScope scope("clamp_max");
  return scope.finish(clamp(x, std::nullopt, max));
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  OpScope scope("nan_to_num");
  const DType d = ops::impl_of(x).dtype();
  if (!is_floating(d)) return scope.finish(clone(x));
  const double top = largest_finite(d);
  Tensor r = where(isnan(x), nan, x);
  r = where(r == INFINITY, posinf.value_or(top), r);
  return scope.finish(where(r == -INFINITY, neginf.value_or(-top), r));
}

Tensor dropout(const Tensor& x, double p, bool training) {
  OpScope scope("dropout");
  if (!(p >= 0 && p <= 1)) ops::fail("p must be in [0, 1], got " + std::to_string(p));
  if (!training || p == 0) return x;  // the input itself, as PyTorch returns it
  if (p == 1) return scope.finish(x * 0.0);
  Tensor keep = rand(x.shape(), DType::f32, x.device()) >= p;
  return scope.finish(where(keep, x / (1.0 - p), 0.0));
}

}  // namespace xlite
