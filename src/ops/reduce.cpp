// Reductions and the normalisations built from them (softmax, log_softmax, logsumexp, var).
#include <algorithm>

#include "ops/op_support.h"
#include "ir/op_attrs.h"
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
  if (d == DType::f16 || d == DType::bf16) return ops::convert_to(x, DType::f32);
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

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("sum");
  return scope.finish(reduce(OpId::reduce_sum, widen_for_accumulation(x), dims, keepdim));
}

Tensor prod(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("prod");
  return scope.finish(reduce(OpId::reduce_prod, widen_for_accumulation(x), dims, keepdim));
}

Tensor max(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("max");
  return scope.finish(reduce(OpId::reduce_max, x, dims, keepdim));
}

Tensor min(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("min");
  return scope.finish(reduce(OpId::reduce_min, x, dims, keepdim));
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

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  OpScope scope("logsumexp");
  DType dtype = ops::impl_of(x).dtype();
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (xf.numel() == 0 || x.dim() == 0) {
    Tensor r = log(sum(exp(xf), dims, keepdim));
    return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
  }
  // Shift by the max for stability; an infinite max would give inf - inf, so shift by 0 there.
  Tensor m = max(xf, dims, true);
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

Tensor softmax(const Tensor& x, int64_t dim) {
  OpScope scope("softmax");
  DType dtype = ops::impl_of(x).dtype();
  int64_t d = ops::normalize_dim(dim, x.dim());
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (x.dim() == 0) return scope.finish(ops::convert_to(exp(xf - xf), is_floating(dtype) ? dtype : xf.dtype()));
  if (x.shape()[d] == 0)
    return scope.finish(
        ops::convert_to(ops::fresh_handle(xf), is_floating(dtype) ? dtype : xf.dtype()));  // empty, like PyTorch
  Tensor e = exp(xf - max(xf, {d}, true));
  Tensor r = e / sum(e, {d}, true);
  return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  OpScope scope("log_softmax");
  DType dtype = ops::impl_of(x).dtype();
  int64_t d = ops::normalize_dim(dim, x.dim());
  Tensor xf = is_floating(dtype) ? to_compute_float(x) : ops::convert_to(x, ops::default_float());
  if (x.dim() == 0) return scope.finish(ops::convert_to(xf - xf, is_floating(dtype) ? dtype : xf.dtype()));
  if (x.shape()[d] == 0)
    return scope.finish(
        ops::convert_to(ops::fresh_handle(xf), is_floating(dtype) ? dtype : xf.dtype()));  // empty, like PyTorch
  Tensor shifted = xf - max(xf, {d}, true);
  Tensor r = shifted - log(sum(exp(shifted), {d}, true));
  return scope.finish(is_floating(dtype) ? ops::convert_to(r, dtype) : r);
}

}  // namespace xlite
