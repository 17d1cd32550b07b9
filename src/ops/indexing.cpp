// NumPy/PyTorch indexing (x.index({...}), index_put) and the scatter family (masked_fill, masked_scatter,
// index_add, index_copy, slice_scatter, select_scatter). Every write is one scatter into the flattened
// tensor: the positions it writes are found by indexing an iota of x's shape with the same indices, so
// reads and writes agree on what an index means by construction.
#include <algorithm>
#include <string>

#include "ops/op_support.h"
#include "ops/views.h"
#include "xlite/factories.h"
#include "xlite/indexing.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

// Each element's flat position, in x's shape.
Tensor positions_of(const Tensor& x) {
  return reshape(arange(Scalar(int64_t{0}), Scalar(x.numel()), Scalar(int64_t{1}), x.device()), x.shape());
}

// flat with vals written (or added) at the flat positions pos; repeated positions add up.
Tensor scatter_flat(const Tensor& x, const Tensor& pos, const Tensor& values, bool accumulate) {
  const DType dtype = x.dtype(), compute = dtype == DType::bool_ ? DType::u8 : dtype;
  Tensor flat = reshape(x, {-1}).to(compute);
  Tensor index = reshape(pos, {-1});
  Tensor vals = reshape(ops::convert_to(broadcast_to(values, pos.shape()), compute), {-1});
  if (accumulate) return reshape(scatter_add(flat, 0, index, vals), x.shape()).to(dtype);
  Tensor hit = scatter_add(zeros({x.numel()}, DType::i64, x.device()), 0, index, ones_like(index)) > 0;
  Tensor placed = scatter_add(zeros_like(flat), 0, index, vals);
  return reshape(where(hit, placed, flat), x.shape()).to(dtype);
}

// x[..., index, ...] along dim d (index may count from the end); an error names the dim as the user wrote it.
Tensor selected(const Tensor& x, int64_t d, int64_t index, int64_t shown_dim) {
  const int64_t n = x.shape()[d];
  const int64_t at = index < 0 ? index + n : index;
  if (at < 0 || at >= n)
    ops::fail("index " + std::to_string(index) + " is out of range for dim " + std::to_string(shown_dim) + " of size " +
              std::to_string(n));
  return squeeze(slice(x, d, at, at + 1), d);
}

int64_t consumed_dims(const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Kind::integer:
    case TensorIndex::Kind::slice: return 1;
    case TensorIndex::Kind::tensor:
      return i.tensor().dtype() == DType::bool_ ? std::max<int64_t>(i.tensor().dim(), 0) : 1;
    case TensorIndex::Kind::ellipsis:
    case TensorIndex::Kind::none:
    case TensorIndex::Kind::boolean: return 0;
  }
  return 0;
}

struct Advanced {
  int64_t dim;
  Tensor index;  // integer values along dim, broadcast with the others
};

// The advanced (tensor) indices applied to r at their dims, NumPy's way.
Tensor apply_advanced(const Tensor& r, std::vector<Advanced> advanced) {
  std::sort(advanced.begin(), advanced.end(), [](const Advanced& a, const Advanced& b) { return a.dim < b.dim; });
  Shape broadcast;
  bool adjacent = true;
  for (size_t k = 0; k < advanced.size(); ++k) {
    broadcast = k == 0 ? advanced[0].index.shape() : ops::broadcast_shapes(broadcast, advanced[k].index.shape());
    if (k > 0 && advanced[k].dim != advanced[k - 1].dim + 1) adjacent = false;
  }
  std::vector<int64_t> order, rest;
  for (const Advanced& a : advanced) order.push_back(a.dim);
  for (int64_t d = 0; d < r.dim(); ++d)
    if (std::find(order.begin(), order.end(), d) == order.end()) rest.push_back(d);
  order.insert(order.end(), rest.begin(), rest.end());
  Tensor moved = permute(r, order);
  // One flat position per broadcast element; an index out of its dim's range becomes -1, which the gather
  // refuses when it runs.
  Tensor linear = zeros(broadcast, DType::i64, r.device());
  Tensor valid = ones(broadcast, DType::bool_, r.device());
  int64_t extent = 1;
  for (const Advanced& a : advanced) {
    const int64_t size = r.shape()[a.dim];
    Tensor i = a.index.to(DType::i64);
    i = where(i < 0, i + size, i);
    valid = logical_and(valid, logical_and(i >= 0, i < size));
    linear = linear * size + i;
    extent *= size;
  }
  linear = where(valid, linear, Scalar(int64_t{-1}));
  Shape flat_shape{extent};
  Shape kept;
  for (int64_t d : rest) kept.push_back(r.shape()[d]);
  flat_shape.insert(flat_shape.end(), kept.begin(), kept.end());
  Tensor picked = index_select(reshape(moved, flat_shape), 0, reshape(linear, {-1}));
  Shape out = broadcast;
  out.insert(out.end(), kept.begin(), kept.end());
  picked = reshape(picked, out);
  const int64_t first = advanced[0].dim;
  if (!adjacent || first == 0) return picked;
  // Adjacent advanced indices keep their place: the broadcast dims go back where the first one was.
  std::vector<int64_t> back;
  const int64_t nb = static_cast<int64_t>(broadcast.size());
  for (int64_t d = 0; d < first; ++d) back.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) back.push_back(d);
  for (int64_t d = nb + first; d < picked.dim(); ++d) back.push_back(d);
  return permute(picked, back);
}

Tensor apply_index(const Tensor& x, const std::vector<TensorIndex>& indices) {
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    consumed += consumed_dims(i);
    ellipses += i.kind() == TensorIndex::Kind::ellipsis ? 1 : 0;
  }
  if (ellipses > 1) ops::fail("an index can have only one ellipsis");
  if (consumed > x.dim())
    ops::fail("too many indices for a tensor of " + std::to_string(x.dim()) + " dims: " + std::to_string(consumed));
  Tensor r = x;
  int64_t d = 0, source_dim = 0;
  std::vector<Advanced> advanced;
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::integer: r = selected(r, d, i.integer(), source_dim++); break;
      case TensorIndex::Kind::slice: {
        const indexing::Slice& s = i.slice();
        if (s.step < 1) ops::fail("slice step must be >= 1, got " + std::to_string(s.step));
        r = slice(r, d, s.start.value_or(0), s.stop.value_or(INT64_MAX), s.step);
        ++d, ++source_dim;
        break;
      }
      case TensorIndex::Kind::ellipsis: {
        const int64_t skipped = x.dim() - consumed;
        d += skipped, source_dim += skipped;
        break;
      }
      case TensorIndex::Kind::none: r = unsqueeze(r, d++); break;
      case TensorIndex::Kind::boolean:
        r = unsqueeze(r, d);
        if (!i.integer()) r = slice(r, d, 0, 0);
        ++d;
        break;
      case TensorIndex::Kind::tensor: {
        const Tensor& t = i.tensor();
        if (t.dtype() == DType::bool_) {
          // A mask over the next t.dim() dims: its positions, read on the host, one index per dim.
          for (int64_t k = 0; k < t.dim(); ++k)
            if (t.shape()[k] != r.shape()[d + k])
              ops::fail("the mask " + shape_str(t.shape()) + " does not match dims " + std::to_string(source_dim) +
                        ".. of " + shape_str(x.shape()));
          Tensor where_true = nonzero(t);
          for (int64_t k = 0; k < t.dim(); ++k) advanced.push_back({d + k, squeeze(slice(where_true, 1, k, k + 1), 1)});
          d += t.dim(), source_dim += t.dim();
        } else {
          if (is_floating(t.dtype()))
            ops::fail("tensors used as indices must be integers or bools, got " + std::string(dtype_name(t.dtype())));
          advanced.push_back({d++, t});
          ++source_dim;
        }
        break;
      }
    }
  }
  if (!advanced.empty()) return apply_advanced(r, std::move(advanced));
  return r.impl() == x.impl() ? ops::alias_view(x, false) : r;
}

void require_same_shape(const char* what, const Shape& got, const Shape& want) {
  if (got != want) ops::fail(std::string(what) + " must be " + shape_str(want) + ", got " + shape_str(got));
}
}  // namespace

Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices) {
  OpScope scope("index");
  // Integers, slices, None and ellipses give a view, as PyTorch's basic indexing does; a tensor index a copy.
  const bool basic = std::none_of(indices.begin(), indices.end(),
                                  [](const TensorIndex& i) { return i.kind() == TensorIndex::Kind::tensor; });
  std::optional<ops::ViewsInside> views;
  if (basic) views.emplace();
  return scope.finish(apply_index(x, indices));
}

Tensor index_put(const Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate) {
  OpScope scope("index_put");
  Tensor pos = apply_index(positions_of(x), indices);
  return scope.finish(scatter_flat(x, pos, values, accumulate));
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  OpScope scope("select");
  ops::ViewsInside views;
  return scope.finish(selected(x, ops::normalize_dim(dim, x.dim()), index, dim));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  OpScope scope("masked_fill");
  if (mask.dtype() != DType::bool_) ops::fail("mask must be bool, got " + std::string(dtype_name(mask.dtype())));
  return scope.finish(ops::convert_to(where(mask, ops::scalar_tensor(value, x.dtype(), x.device()), x), x.dtype()));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  OpScope scope("masked_fill");
  if (mask.dtype() != DType::bool_) ops::fail("mask must be bool, got " + std::string(dtype_name(mask.dtype())));
  if (value.dim() != 0) ops::fail("value must be a 0-dim tensor, got " + shape_str(value.shape()));
  return scope.finish(ops::convert_to(where(mask, value.to(x.dtype()), x), x.dtype()));
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  OpScope scope("masked_scatter");
  if (mask.dtype() != DType::bool_) ops::fail("mask must be bool, got " + std::string(dtype_name(mask.dtype())));
  Tensor m = reshape(broadcast_to(mask, x.shape()), {-1});
  // The k-th true position takes source's k-th element: k is the running count of trues, so no host read.
  Tensor k = maximum(cumsum(m, 0) - 1, Scalar(int64_t{0}));
  Tensor taken = index_select(reshape(source, {-1}).to(x.dtype()), 0, k);
  return scope.finish(reshape(where(m, taken, reshape(x, {-1})), x.shape()));
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha) {
  OpScope scope("index_add");
  Tensor pos = index_select(positions_of(x), dim, index);
  require_same_shape("src", src.shape(), pos.shape());
  return scope.finish(scatter_flat(x, pos, src * alpha, true));
}

Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  OpScope scope("index_copy");
  Tensor pos = index_select(positions_of(x), dim, index);
  require_same_shape("src", src.shape(), pos.shape());
  return scope.finish(scatter_flat(x, pos, src, false));
}

Tensor slice_scatter(const Tensor& x, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  OpScope scope("slice_scatter");
  Tensor pos = slice(positions_of(x), dim, start.value_or(0), end.value_or(INT64_MAX), step);
  require_same_shape("src", src.shape(), pos.shape());
  return scope.finish(scatter_flat(x, pos, src, false));
}

Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index) {
  OpScope scope("select_scatter");
  Tensor pos = select(positions_of(x), dim, index);
  require_same_shape("src", src.shape(), pos.shape());
  return scope.finish(scatter_flat(x, pos, src, false));
}

// Method forms.
Tensor Tensor::select(int64_t dim, int64_t index) const { return xlite::select(*this, dim, index); }
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return xlite::index(*this, indices); }

namespace {
// Writes value into self in place, as the named op.
Tensor& update(Tensor& self, const char* name, const std::function<Tensor()>& value) {
  OpScope scope(name);
  ops::InPlaceScope target(&ops::impl_of(self));
  Tensor v = scope.finish(value());
  return self.copy_(v);
}
}  // namespace

Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate) {
  return update(*this, "index_put_", [&] { return xlite::index_put(*this, indices, values, accumulate); });
}
Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, Scalar value) {
  return update(*this, "index_put_",
                [&] { return xlite::index_put(*this, indices, ops::scalar_tensor(value, dtype(), device())); });
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  return update(*this, "masked_fill_", [&] { return xlite::masked_fill(*this, mask, value); });
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha) {
  return update(*this, "index_add_", [&] { return xlite::index_add(*this, dim, index, src, alpha); });
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& src) {
  return update(*this, "index_copy_", [&] { return xlite::index_copy(*this, dim, index, src); });
}

}  // namespace xlite
