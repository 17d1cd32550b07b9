// Sorting along a dim and what is read off a sorted order: sort, argsort, topk, kthvalue, median, mode.
// The permutation is the argsort op; values are gathered through it, so their gradient is gather's.
#include <cmath>
#include <string>

#include "ops/op_support.h"
#include "ir/op_attrs.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::OpId;

// The sorting permutation of x along d (normalised); a 0-dim tensor is its own order.
Tensor permutation(const Tensor& x, int64_t d, bool descending) {
  if (x.dim() == 0) return zeros_like(x).to(DType::i64);
  Tensor in = x.dtype() == DType::bool_ ? ops::convert_to(x, DType::u8) : x;
  return ops::make(OpId::argsort, {in}, ir::SortAttrs{.dim = d, .descending = descending}.to_attrs());
}

int64_t dim_of(const Tensor& x, int64_t dim) { return ops::normalize_dim(dim, x.dim() == 0 ? 1 : x.dim()); }
int64_t extent(const Tensor& x, int64_t d) { return x.dim() == 0 ? 1 : x.shape()[d]; }

Tensor take(const Tensor& x, int64_t d, const Tensor& index) { return x.dim() == 0 ? x : gather(x, d, index); }

ValuesIndices squeezed(ValuesIndices r, int64_t d, bool keepdim) {
  if (keepdim || r.values.dim() == 0) return r;
  return {squeeze(r.values, d), squeeze(r.indices, d)};
}

void require_k(int64_t k, int64_t low, int64_t dim, int64_t n) {
  if (k < low || k > n)
    ops::fail("k (" + std::to_string(k) + ") is out of range for dim " + std::to_string(dim) + " of size " +
              std::to_string(n));
}

// Element k (from 0) of the ascending order along d, keeping d as size 1.
ValuesIndices kth_smallest(const Tensor& x, int64_t d, int64_t k) {
  Tensor index = x.dim() == 0 ? permutation(x, d, false) : slice(permutation(x, d, false), d, k, k + 1);
  return {take(x, d, index), index};
}
}  // namespace

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending) {
  ops::OpScope scope("sort");
  const int64_t d = dim_of(x, dim);
  Tensor index = permutation(x, d, descending);
  return scope.finish(ValuesIndices{take(x, d, index), index});
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  ops::OpScope scope("argsort");
  return scope.finish(permutation(x, dim_of(x, dim), descending));
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  ops::OpScope scope("topk");
  const int64_t d = dim_of(x, dim);
  require_k(k, 0, dim, extent(x, d));
  Tensor index = permutation(x, d, largest);
  if (x.dim() > 0) index = slice(index, d, 0, k);
  return scope.finish(ValuesIndices{take(x, d, index), index});
}

ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  ops::OpScope scope("kthvalue");
  const int64_t d = dim_of(x, dim);
  require_k(k, 1, dim, extent(x, d));
  return scope.finish(squeezed(kth_smallest(x, d, k - 1), d, keepdim));
}

ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim) {
  ops::OpScope scope("median");
  const int64_t d = dim_of(x, dim), n = extent(x, d);
  if (n == 0) ops::fail("cannot take the median of an empty dim " + std::to_string(dim));
  ValuesIndices r = kth_smallest(x, d, (n - 1) / 2);
  if (is_floating(x.dtype()) && x.dim() > 0) {
    // A NaN anywhere in the row is its median, at the first NaN's index, like PyTorch's median.
    Tensor nan = isnan(x);
    Tensor has_nan = any(nan, {d}, true);
    r.values = where(has_nan, NAN, r.values);
    r.indices = where(has_nan, argmax(nan, d, true), r.indices);
  }
  return scope.finish(squeezed(r, d, keepdim));
}

Tensor median(const Tensor& x) {
  ops::OpScope scope("median");
  if (x.numel() == 0) ops::fail("cannot take the median of an empty tensor");
  return scope.finish(median(reshape(x, {-1}), 0).values);
}

// Counting equal pairs costs n^2 per row, fine for the category-sized dims mode is used on.
ValuesIndices mode(const Tensor& x, int64_t dim, bool keepdim) {
  ops::OpScope scope("mode");
  const int64_t d = dim_of(x, dim), n = extent(x, d);
  if (n == 0) ops::fail("cannot take the mode of an empty dim " + std::to_string(dim));
  if (x.dim() == 0) return scope.finish(ValuesIndices{x, zeros_like(x).to(DType::i64)});
  Tensor xl = transpose(x, d, -1);                                              // [..., n]
  Tensor sorted = sort(xl, -1).values;                                          // the smallest value first among ties
  Tensor counts = sum(eq(unsqueeze(sorted, -1), unsqueeze(sorted, -2)), {-1});  // [..., n]
  Tensor best = argmax(counts, -1, true);                                       // first most frequent in sorted order
  Tensor value = gather(sorted, -1, best);                                      // [..., 1]
  // PyTorch reports the last position holding the mode.
  Tensor position = ops::iota_along(xl.shape(), xl.dim() - 1, DType::i64, x.device());
  Tensor index = amax(where(eq(xl, value), position, Scalar(int64_t{-1})), {-1}, true);
  ValuesIndices r{transpose(value, d, -1), transpose(index, d, -1)};
  r.values = take(x, d, r.indices);  // the same value, with gather's gradient
  return scope.finish(squeezed(r, d, keepdim));
}

}  // namespace xlite
