// Scans along a dim: cumsum, cumprod, and cummax/cummin with the index of each running extreme.
#include "ops/op_support.h"
#include "ir/op_attrs.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::OpId;

// The scan op on x along dim; a 0-dim tensor scans as one element. Bool runs as u8.
Tensor scan(OpId op, const Tensor& x, int64_t dim, DType compute) {
  const TensorImpl& impl = ops::impl_of(x);
  const int64_t rank = static_cast<int64_t>(impl.shape().size());
  const int64_t d = ops::normalize_dim(dim, rank == 0 ? 1 : rank);
  Tensor in = ops::convert_to(rank == 0 ? reshape(x, {1}) : x, compute);
  Tensor r = ops::make(op, {in}, ir::DimAttrs{.dim = d}.to_attrs());
  return rank == 0 ? reshape(r, {}) : r;
}

// Integers and bools accumulate in i64, like PyTorch.
DType accumulation_dtype(DType d) { return is_floating(d) ? d : DType::i64; }
DType extreme_dtype(DType d) { return d == DType::bool_ ? DType::u8 : d; }

ValuesIndices running_extreme(OpId op, const Tensor& x, int64_t dim) {
  const DType dtype = ops::impl_of(x).dtype();
  const int64_t d = ops::normalize_dim(dim, x.dim() == 0 ? 1 : x.dim());
  Tensor values = scan(op, x, d, extreme_dtype(dtype));
  // The latest position whose element equals the running extreme there (NaN matching NaN) is the index
  // of the extreme: the running maximum over those positions.
  Tensor xv = ops::convert_to(x, extreme_dtype(dtype));
  Tensor match = eq(xv, values);
  if (is_floating(dtype)) match = logical_or(match, logical_and(isnan(xv), isnan(values)));
  const Shape shape = x.dim() == 0 ? Shape{1} : x.shape();
  Tensor position = ops::iota_along(shape, x.dim() == 0 ? 0 : d, DType::i64, x.device());
  if (x.dim() == 0) position = reshape(position, {});
  Tensor indices = scan(OpId::cummax, where(match, position, Scalar(int64_t{0})), d, DType::i64);
  return {ops::convert_to(values, dtype), indices};
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) {
  ops::OpScope scope("cumsum");
  return scope.finish(scan(OpId::cumsum, x, dim, accumulation_dtype(ops::impl_of(x).dtype())));
}

Tensor cumprod(const Tensor& x, int64_t dim) {
  ops::OpScope scope("cumprod");
  return scope.finish(scan(OpId::cumprod, x, dim, accumulation_dtype(ops::impl_of(x).dtype())));
}

ValuesIndices cummax(const Tensor& x, int64_t dim) {
  ops::OpScope scope("cummax");
  return scope.finish(running_extreme(OpId::cummax, x, dim));
}

ValuesIndices cummin(const Tensor& x, int64_t dim) {
  ops::OpScope scope("cummin");
  return scope.finish(running_extreme(OpId::cummin, x, dim));
}

}  // namespace xlite
