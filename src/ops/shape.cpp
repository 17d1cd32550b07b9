// Shape ops. The view ops among them (ops/views.h) share their input's storage, as PyTorch's do.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "ops/op_support.h"
#include "ops/views.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::AttrKey;
using ir::OpId;
using ops::OpScope;

// reshape's value: a view when x's strides allow one, else a copy (as PyTorch's reshape).
Tensor reshaped_or_copied(const Tensor& x, const Shape& shape) {
  if (auto strides = ops::view_strides(ops::layout_of(x), shape)) return ops::reshape_view(x, shape, *strides);
  return ops::reshaped(x, shape);
}

// shape with its -1 worked out, or an error when it does not hold x's elements.
Shape reshape_target(const Tensor& x, const Shape& shape) {
  const TensorImpl& impl = ops::impl_of(x);
  Shape out = shape;
  int64_t inferred = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (inferred >= 0) ops::fail("only one dim can be -1 in " + shape_str(shape));
      inferred = static_cast<int64_t>(i);
      out[i] = 1;  // while the others are counted
    } else if (out[i] < 0) {
      ops::fail("invalid dim " + std::to_string(out[i]) + " in " + shape_str(shape));
    }
  }
  const int64_t total = numel(impl.shape());
  auto invalid = [&] {
    ops::fail("shape " + shape_str(shape) + " is invalid for input " + shape_str(impl.shape()) + " of size " +
              std::to_string(total));
  };
  std::optional<int64_t> known = ir::checked_numel(out);  // nullopt: more elements than any input has
  if (!known) invalid();
  if (inferred >= 0) {
    if (*known == 0 || total % *known != 0) invalid();
    out[inferred] = total / *known;
  } else if (*known != total) {
    invalid();
  }
  return out;
}

Tensor triangle(const char* name, const Tensor& x, int64_t diagonal, bool lower) {
  OpScope scope(name);
  if (ops::impl_of(x).shape().size() < 2) ops::fail("needs a tensor of rank >= 2, got " + shape_str(x.shape()));
  int64_t rows = x.shape()[x.dim() - 2], cols = x.shape()[x.dim() - 1];
  Tensor row = ops::iota_along({rows, cols}, 0, DType::i64, x.device());
  Tensor col = ops::iota_along({rows, cols}, 1, DType::i64, x.device());
  Tensor offset = col - row;
  Tensor keep = lower ? offset <= diagonal : offset >= diagonal;
  return scope.finish(where(keep, x, zeros({}, x.dtype(), x.device())));
}
}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  OpScope scope("reshape");
  return scope.finish(reshaped_or_copied(x, reshape_target(x, shape)));
}

Tensor view(const Tensor& x, const Shape& shape) {
  OpScope scope("view");
  Shape out = reshape_target(x, shape);
  std::optional<std::vector<int64_t>> strides = ops::view_strides(ops::layout_of(x), out);
  if (!strides)
    ops::fail("view size " + shape_str(shape) + " is not compatible with the input's size " + shape_str(x.shape()) +
              " and stride (at least one dimension spans across two contiguous subspaces); use reshape() instead");
  return scope.finish(ops::reshape_view(x, out, *strides));
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  OpScope scope("flatten");
  ops::ViewsInside views;  // its result is the view an inner view op makes
  const Shape& shape = ops::impl_of(x).shape();
  if (shape.empty()) return scope.finish(reshape(x, {1}));
  int64_t s = ops::normalize_dim(start_dim, shape.size()), e = ops::normalize_dim(end_dim, shape.size());
  if (s > e) ops::fail("start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim));
  Shape out(shape.begin(), shape.begin() + s);
  // Fits: a tensor's non-zero dims multiply to an addressable size (ir/sizes.h), and so do these.
  out.push_back(std::accumulate(shape.begin() + s, shape.begin() + e + 1, int64_t{1}, std::multiplies<>()));
  out.insert(out.end(), shape.begin() + e + 1, shape.end());
  return scope.finish(reshaped_or_copied(x, out));
}

Tensor squeeze(const Tensor& x) {
  OpScope scope("squeeze");
  Shape out;
  for (int64_t d : ops::impl_of(x).shape())
    if (d != 1) out.push_back(d);
  return scope.finish(reshaped_or_copied(x, out));
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  OpScope scope("squeeze");
  Shape out = ops::impl_of(x).shape();
  int64_t d = ops::normalize_dim(dim, out.size());
  if (!out.empty() && out[d] == 1) out.erase(out.begin() + d);
  return scope.finish(reshaped_or_copied(x, out));
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  OpScope scope("unsqueeze");
  Shape out = ops::impl_of(x).shape();
  int64_t d = ops::normalize_dim(dim, out.size() + 1);
  out.insert(out.begin() + d, 1);
  return scope.finish(reshaped_or_copied(x, out));
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  OpScope scope("permute");
  int64_t rank = ops::impl_of(x).shape().size();
  if (static_cast<int64_t>(dims.size()) != rank)
    ops::fail("dims " + shape_str(dims) + " do not match a tensor of rank " + std::to_string(rank));
  std::vector<int64_t> perm;
  for (int64_t d : dims) {
    int64_t n = ops::normalize_dim(d, rank);
    if (std::find(perm.begin(), perm.end(), n) != perm.end()) ops::fail("dim " + std::to_string(d) + " repeated");
    perm.push_back(n);
  }
  return scope.finish(ops::permute_view(x, perm));
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  OpScope scope("transpose");
  ops::ViewsInside views;  // its result is the view an inner view op makes
  int64_t rank = ops::impl_of(x).shape().size();
  if (rank == 0) {
    ops::normalize_dim(dim0, 0);
    ops::normalize_dim(dim1, 0);
    return scope.finish(ops::alias_view(x, false));
  }
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[ops::normalize_dim(dim0, rank)], perm[ops::normalize_dim(dim1, rank)]);
  return scope.finish(permute(x, perm));
}

Tensor expand(const Tensor& x, const Shape& shape) {
  OpScope scope("expand");
  const Shape& from = ops::impl_of(x).shape();
  if (shape.size() < from.size()) ops::fail("cannot expand " + shape_str(from) + " to fewer dims " + shape_str(shape));
  Shape out = shape;
  size_t lead = shape.size() - from.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (i < lead) ops::fail("-1 is not allowed for a new leading dim in " + shape_str(shape));
      out[i] = from[i - lead];
    } else if (out[i] < 0) {
      ops::fail("invalid size " + std::to_string(out[i]) + " in " + shape_str(shape));
    }
    if (i >= lead && from[i - lead] != 1 && from[i - lead] != out[i])
      ops::fail("cannot expand " + shape_str(from) + " to " + shape_str(shape));
  }
  return scope.finish(ops::expand_view(x, out));
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  OpScope scope("broadcast_to");
  ops::ViewsInside views;  // its result is the view an inner view op makes
  return scope.finish(expand(x, shape));
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  OpScope scope("slice");
  const Shape& shape = ops::impl_of(x).shape();
  if (shape.empty()) ops::fail("cannot slice a 0-dim tensor");
  int64_t d = ops::normalize_dim(dim, shape.size());
  if (step <= 0) ops::fail("step must be positive, got " + std::to_string(step));
  int64_t size = shape[d];
  auto clamp_bound = [size](int64_t v) {
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t s = clamp_bound(start), e = std::max(clamp_bound(stop), clamp_bound(start));
  return scope.finish(ops::slice_view(x, d, s, e, step));
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  OpScope scope("narrow");
  const Shape& shape = ops::impl_of(x).shape();
  if (shape.empty()) ops::fail("cannot narrow a 0-dim tensor");
  int64_t d = ops::normalize_dim(dim, shape.size());
  int64_t s = start < 0 ? start + shape[d] : start;
  if (s < 0 || length < 0 || length > shape[d] - s)
    ops::fail("start " + std::to_string(start) + " and length " + std::to_string(length) + " exceed dim " +
              std::to_string(dim) + " of size " + std::to_string(shape[d]));
  return scope.finish(ops::slice_view(x, d, s, s + length, 1));
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  OpScope scope("concat");
  if (tensors.empty()) ops::fail("needs at least one tensor");
  std::vector<const Tensor*> all;
  for (const Tensor& t : tensors) all.push_back(&t);
  DType dtype = ops::result_type(all, {});
  const Shape& first = tensors[0].shape();
  if (first.empty()) ops::fail("zero-dim tensors cannot be concatenated");
  int64_t d = ops::normalize_dim(dim, first.size());
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    Shape s = tensors[i].shape();
    Shape expected = first;
    if (s.size() == expected.size()) expected[d] = s[d];
    if (s != expected)
      ops::fail("tensor " + std::to_string(i) + " has shape " + shape_str(s) + ", expected " + shape_str(first) +
                " outside dim " + std::to_string(dim));
    if (s[d] > 0) parts.push_back(ops::convert_to(tensors[i], dtype));
  }
  if (parts.empty()) return scope.finish(ops::convert_to(ops::fresh_handle(tensors[0]), dtype));
  if (parts.size() == 1) return scope.finish(ops::fresh_handle(parts[0]));
  return scope.finish(ops::make(OpId::concat, parts, ir::DimAttrs{.dim = d}.to_attrs()));
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  OpScope scope("cat");
  return scope.finish(concat(tensors, dim));
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  OpScope scope("stack");
  if (tensors.empty()) ops::fail("needs at least one tensor");
  int64_t d = ops::normalize_dim(dim, ops::impl_of(tensors[0]).shape().size() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (ops::impl_of(tensors[i]).shape() != tensors[0].shape())
      ops::fail("tensor " + std::to_string(i) + " has shape " + shape_str(tensors[i].shape()) + ", expected " +
                shape_str(tensors[0].shape()));
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return scope.finish(concat(parts, d));
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  OpScope scope("split");
  const Shape& shape = ops::impl_of(x).shape();
  if (shape.empty()) ops::fail("cannot split a 0-dim tensor");
  int64_t d = ops::normalize_dim(dim, shape.size());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) ops::fail("negative split size " + std::to_string(s));
    total = ir::checked_add(total, s).value_or(-1);
    if (total < 0) break;
  }
  if (total != shape[d])
    ops::fail("split sizes " + shape_str(sizes) + " do not add up to dim " + std::to_string(dim) + " of size " +
              std::to_string(shape[d]));
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(ops::slice_view(x, d, start, start + s, 1));
    start += s;
  }
  return scope.finish(std::move(parts));
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  OpScope scope("split");
  ops::ViewsInside views;  // its result is the view an inner view op makes
  const Shape& shape = ops::impl_of(x).shape();
  if (shape.empty()) ops::fail("cannot split a 0-dim tensor");
  if (split_size <= 0) ops::fail("split_size must be positive, got " + std::to_string(split_size));
  int64_t size = shape[ops::normalize_dim(dim, shape.size())];
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += split_size) sizes.push_back(std::min(split_size, size - start));
  if (sizes.empty()) sizes.push_back(0);
  return scope.finish(split(x, sizes, dim));
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  OpScope scope("chunk");
  ops::ViewsInside views;  // its result is the view an inner view op makes
  const Shape& shape = ops::impl_of(x).shape();
  if (chunks <= 0) ops::fail("chunks must be positive, got " + std::to_string(chunks));
  if (shape.empty()) ops::fail("cannot chunk a 0-dim tensor");
  int64_t size = shape[ops::normalize_dim(dim, shape.size())];
  int64_t each = size == 0 ? 1 : (size - 1) / chunks + 1;  // rounds up without overflowing
  return scope.finish(split(x, each, dim));
}

namespace {
// The IR holds a pad value as a double of the tensor's dtype (bool 0 or 1): an integer a double would
// round is refused rather than changed, and the shape rule refuses what the dtype cannot hold.
double pad_value(Scalar value, DType dtype) {
  if (is_floating(dtype)) return value.to_double();
  if (dtype == DType::bool_) return value.to_double() != 0;
  if (value.is_floating()) return std::trunc(value.to_double());
  const int64_t i = value.to_int();
  const double v = static_cast<double>(i);
  if (static_cast<__int128>(v) != i)
    ops::fail("value " + std::to_string(i) + " is not exact as a double, which pad values are");
  return v;
}
}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, Scalar value) {
  OpScope scope("pad");
  const Shape& shape = ops::impl_of(x).shape();
  if (pads.size() % 2 != 0 || pads.size() / 2 > shape.size())
    ops::fail("pad " + shape_str(pads) + " must hold (before, after) pairs for at most " +
              std::to_string(shape.size()) + " dims");
  std::vector<int64_t> lo(shape.size(), 0), hi(shape.size(), 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    size_t d = shape.size() - 1 - i;
    lo[d] = pads[2 * i];
    hi[d] = pads[2 * i + 1];
    auto size = ir::checked_add(shape[d], lo[d]);
    if (size) size = ir::checked_add(*size, hi[d]);
    if (!size)
      ops::fail("padding " + shape_str(pads) + " of dim " + std::to_string(d) + " of size " + std::to_string(shape[d]) +
                " gives a size that does not fit in 64 bits");
    if (*size < 0) ops::fail("padding " + shape_str(pads) + " leaves a negative size for dim " + std::to_string(d));
    if (lo[d] < -shape[d] || hi[d] < -shape[d])  // PyTorch refuses these too
      ops::fail("padding " + shape_str(pads) + " crops more than dim " + std::to_string(d) + " of size " +
                std::to_string(shape[d]));
  }
  // Negative pads crop, so take them off first.
  Tensor r = ops::fresh_handle(x);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (lo[d] < 0 || hi[d] < 0) {
      int64_t start = lo[d] < 0 ? -lo[d] : 0, stop = shape[d] - (hi[d] < 0 ? -hi[d] : 0);
      r = ops::sliced(r, d, start, std::max(start, stop), 1);
      lo[d] = std::max<int64_t>(lo[d], 0);
      hi[d] = std::max<int64_t>(hi[d], 0);
    }
  }
  if (std::all_of(lo.begin(), lo.end(), [](int64_t v) { return v == 0; }) &&
      std::all_of(hi.begin(), hi.end(), [](int64_t v) { return v == 0; }))
    return scope.finish(r);
  const ir::PadAttrs attrs{.lo = lo, .hi = hi, .value = pad_value(value, x.dtype())};
  return scope.finish(ops::make(OpId::pad, {r}, attrs.to_attrs()));
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  OpScope scope("flip");
  std::vector<int64_t> normalized = ops::normalize_dims(dims, ops::impl_of(x).shape().size());
  if (normalized.empty()) return scope.finish(ops::fresh_handle(x));
  return scope.finish(ops::make(OpId::flip, {x}, ir::FlipAttrs{.dims = normalized}.to_attrs()));
}

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, diagonal, false); }

}  // namespace xlite
