// Reductions and the normalisations built from them (softmax, log_softmax, logsumexp, var).
#include <algorithm>
#include <cmath>

#include "ops/op_support.h"
#include "xlite/autocast.h"
#include "xlite/autograd.h"
#include "ir/op_attrs.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::AttrKey;
using ir::OpId;
using ops::OpScope;

Tensor reduce(OpId op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  int64_t rank = ops::impl_of(x).shape().size();
  std::vector<int64_t> normalized = ops::normalize_dims(dims, rank);
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) normalized.push_back(d);
  if (op == OpId::reduce_max || op == OpId::reduce_min)
    for (int64_t d : normalized)
      if (x.shape()[d] == 0)
        ops::fail("cannot reduce over dim " + std::to_string(d) + " of size 0 in " + shape_str(x.shape()));
  return ops::make(op, {x}, ir::ReduceAttrs{.dims = normalized, .keepdim = keepdim}.to_attrs());
}

// Fits: a tensor's non-zero dims multiply to an addressable size (ir/sizes.h), and so do any of them.
int64_t reduced_count(const Tensor& x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x.numel();
  int64_t n = 1;
  for (int64_t d : ops::normalize_dims(dims, x.dim())) n *= x.shape()[d];
  return n;
}

// Integer and bool sums and products are i64, like PyTorch.
Tensor widen_for_accumulation(const Tensor& x) {
  DType d = ops::impl_of(x).dtype();
  return is_floating(d) ? x : ops::convert_to(x, DType::i64);
}

// 16-bit floats are normalised in f32 and the result converted back.
Tensor to_compute_float(const Tensor& x) {
  DType d = ops::impl_of(x).dtype();
  if (is_16_bit_float(d)) return ops::convert_to(x, DType::f32);
  if (!is_floating(d)) ops::fail("needs a floating tensor, got " + std::string(dtype_name(d)));
  return x;
}

Tensor arg_reduce(const char* name, OpId op, const Tensor& x, int64_t dim, bool keepdim) {
  OpScope scope(name);
  const TensorImpl& impl = ops::impl_of(x);
  int64_t d = ops::normalize_dim(dim, impl.shape().size());
  if (impl.shape().empty()) return scope.finish(ops::scalar_tensor(0, DType::i64, impl.device()));
  if (impl.shape()[d] == 0) ops::fail("cannot reduce over dim " + std::to_string(dim) + " of size 0");
  Tensor in = impl.dtype() == DType::bool_ ? ops::convert_to(x, DType::u8) : x;
  return scope.finish(ops::make(op, {in}, ir::ArgReduceAttrs{.dim = d, .keepdim = keepdim}.to_attrs()));
}
}  // namespace

namespace {
// A public reduction: the op scope named `name` around the IR reduction (sums and products widened).
Tensor named_reduce(const char* name, OpId op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope(name);
  const bool widen = op == OpId::reduce_sum || op == OpId::reduce_prod;
  return scope.finish(reduce(op, widen ? widen_for_accumulation(x) : x, dims, keepdim));
}

// The max that softmax, log-softmax and logsumexp subtract for stability, kept along `dims`. Their results
// do not depend on it, so neither do their gradients: it is computed without recording a gradient (as JAX
// stops it), and the backward pass computes none through it only to cancel it.
Tensor stabilizing_shift(const Tensor& x, const std::vector<int64_t>& dims) {
  NoGradGuard no_grad;
  return max(x, dims, true);
}
}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("sum", OpId::reduce_sum, x, d, k);
}
Tensor prod(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("prod", OpId::reduce_prod, x, d, k);
}
Tensor max(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("max", OpId::reduce_max, x, d, k);
}
Tensor min(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("min", OpId::reduce_min, x, d, k);
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("amax", OpId::reduce_max, x, d, k);
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& d, bool k) {
  return named_reduce("amin", OpId::reduce_min, x, d, k);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("mean");
  DType dtype = ops::impl_of(x).dtype();
  if (!is_floating(dtype))
    ops::fail("needs a floating tensor, got " + std::string(dtype_name(dtype)) + "; convert it with .to()");
  Tensor total = reduce(OpId::reduce_sum, to_compute_float(x), dims, keepdim);
  return scope.finish(ops::convert_to(div(total, reduced_count(x, dims)), dtype));
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_reduce("argmax", OpId::argmax, x, dim, keepdim);
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_reduce("argmin", OpId::argmin, x, dim, keepdim);
}
Tensor argmax(const Tensor& x) {
  OpScope scope("argmax");
  return scope.finish(arg_reduce("argmax", OpId::argmax, reshape(x, {-1}), 0, false));
}
Tensor argmin(const Tensor& x) {
  OpScope scope("argmin");
  return scope.finish(arg_reduce("argmin", OpId::argmin, reshape(x, {-1}), 0, false));
}

Tensor logsumexp(const Tensor& x_in, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("logsumexp");
  const Tensor x = autocast_for_precision(x_in);
  DType dtype = ops::impl_of(x).dtype();
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (xf.numel() == 0 || x.dim() == 0) {
    Tensor r = log(sum(exp(xf), dims, keepdim));
    return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
  }
  // An infinite max would give inf - inf, so shift by 0 there.
  Tensor m = stabilizing_shift(xf, dims);
  Tensor shift = where(isinf(m), 0.0, m);
  Tensor r = log(sum(exp(xf - shift), dims, true)) + shift;
  if (!keepdim) {
    std::vector<int64_t> reduced = ops::normalize_dims(dims, x.dim());
    if (dims.empty())
      for (int64_t d = 0; d < x.dim(); ++d) reduced.push_back(d);
    Shape out;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) out.push_back(x.shape()[d]);
    r = reshape(r, out);
  }
  return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  OpScope scope("var");
  DType dtype = ops::impl_of(x).dtype();
  Tensor xf = to_compute_float(x);
  int64_t n = reduced_count(x, dims);
  Tensor centered = xf - mean(xf, dims, true);
  Tensor r = sum(centered * centered, dims, keepdim) / static_cast<double>(std::max<int64_t>(n - correction, 0));
  return scope.finish(ops::convert_to(r, dtype));
}

Tensor softmax(const Tensor& x_in, int64_t dim) {
  OpScope scope("softmax");
  const Tensor x = autocast_for_precision(x_in);
  DType dtype = ops::impl_of(x).dtype();
  int64_t d = ops::normalize_dim(dim, x.dim());
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (x.dim() == 0) return scope.finish(ops::convert_to(exp(xf - xf), is_floating(dtype) ? dtype : xf.dtype()));
  if (x.shape()[d] == 0)
    return scope.finish(
        ops::convert_to(ops::fresh_handle(xf), is_floating(dtype) ? dtype : xf.dtype()));  // empty, like PyTorch
  Tensor e = exp(xf - stabilizing_shift(xf, {d}));
  // One division per row and a multiply per element, as PyTorch's CPU kernel does: a vector division
  // costs five times a multiply, and the row's pass over its exponentials would wait on it.
  Tensor r = e * reciprocal(sum(e, {d}, true));
  return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
}

Tensor log_softmax(const Tensor& x_in, int64_t dim) {
  OpScope scope("log_softmax");
  const Tensor x = autocast_for_precision(x_in);
  DType dtype = ops::impl_of(x).dtype();
  int64_t d = ops::normalize_dim(dim, x.dim());
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (x.dim() == 0) return scope.finish(ops::convert_to(xf - xf, is_floating(dtype) ? dtype : xf.dtype()));
  if (x.shape()[d] == 0)
    return scope.finish(
        ops::convert_to(ops::fresh_handle(xf), is_floating(dtype) ? dtype : xf.dtype()));  // empty, like PyTorch
  Tensor shifted = xf - stabilizing_shift(xf, {d});
  Tensor r = shifted - log(sum(exp(shifted), {d}, true));
  return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
}

}  // namespace xlite

namespace xlite {

Tensor any(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("any");
  return scope.finish(sum(ne(x, 0), dims, keepdim) > 0);
}

Tensor all(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("all");
  return scope.finish(sum(eq(x, 0), dims, keepdim) == 0);
}

Tensor count_nonzero(const Tensor& x, const std::vector<int64_t>& dims) {
  OpScope scope("count_nonzero");
  return scope.finish(sum(ne(x, 0), dims));
}

Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  OpScope scope("std");
  return scope.finish(sqrt(var(x, dims, correction, keepdim)));
}

Tensor norm(const Tensor& x_in, double p, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("norm");
  const Tensor x = autocast_for_precision(x_in);
  DType dtype = ops::impl_of(x).dtype();
  if (!is_floating(dtype)) ops::fail("needs a floating tensor, got " + std::string(dtype_name(dtype)));
  if (std::isnan(p)) ops::fail("p must be a number, got nan");
  Tensor a = abs(x);
  if (std::isinf(p)) return scope.finish(p > 0 ? max(a, dims, keepdim) : min(a, dims, keepdim));
  if (p == 0) return scope.finish(ops::convert_to(sum(ne(x, 0), dims, keepdim), dtype));
  if (p == 1) return scope.finish(sum(a, dims, keepdim));
  // The root of a zero sum has an infinite derivative: give those rows a zero gradient instead of NaN,
  // like PyTorch's norm.
  Tensor s = p == 2 ? sum(square(x), dims, keepdim) : sum(pow(a, p), dims, keepdim);
  Tensor zero = s == 0;
  Tensor root = p == 2 ? sqrt(where(zero, 1.0, s)) : pow(where(zero, 1.0, s), 1.0 / p);
  return scope.finish(where(zero, 0.0, root));
}

Tensor norm(const Tensor& x, std::string_view ord, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("norm");
  if (ord != "fro") ops::fail("ord must be \"fro\" or a number, got \"" + std::string(ord) + "\"");
  return scope.finish(norm(x, 2.0, dims, keepdim));
}

namespace {
ValuesIndices extreme_along(const char* name, bool largest, const Tensor& x, int64_t dim, bool keepdim) {
  OpScope scope(name);
  const int64_t d = ops::normalize_dim(dim, x.dim() == 0 ? 1 : x.dim());
  if (x.dim() == 0) return scope.finish(ValuesIndices{ops::fresh_handle(x), zeros({}, DType::i64, x.device())});
  Tensor values = largest ? amax(x, {d}, keepdim) : amin(x, {d}, keepdim);
  Tensor indices = largest ? argmax(x, d, keepdim) : argmin(x, d, keepdim);
  return scope.finish(ValuesIndices{values, indices});
}
}  // namespace

ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_along("max", true, x, dim, keepdim); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_along("min", false, x, dim, keepdim); }

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  OpScope scope("isclose");
  if (rtol < 0 || atol < 0) ops::fail("rtol and atol must be >= 0");
  // Equal values (infinities among them) are close; otherwise the distance decides, which is never true
  // for an infinity or NaN.
  Tensor finite = logical_not(logical_or(logical_or(isnan(a), isinf(a)), logical_or(isnan(b), isinf(b))));
  Tensor close = logical_or(eq(a, b), logical_and(finite, le(abs(a - b), abs(b) * rtol + atol)));
  if (equal_nan) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  return scope.finish(close);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  OpScope scope("allclose");
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  OpScope scope("equal");
  if (a.shape() != b.shape()) return false;
  return all(eq(a, b)).item<bool>();
}

}  // namespace xlite
