#include "ops/views.h"

#include <cstdint>
#include <numeric>

#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "lazy/sync.h"
#include "ops/op_support.h"
#include "tensor/grad_mode.h"
#include "xlite/autograd.h"
#include "xlite/factories.h"
#include "xlite/indexing.h"
#include "xlite/ops.h"

namespace xlite::ops {
namespace {
using ir::OpId;

// Lazy tensors may have shapes no buffer could hold (ir/sizes.h refuses to run them, not to trace them):
// their strides saturate instead of overflowing, and only decide what such a tensor's views would be.
int64_t saturating_mul(int64_t a, int64_t b) { return ir::checked_mul(a, b).value_or(INT64_MAX); }

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = saturating_mul(strides[d], std::max<int64_t>(shape[d], 1));
  return strides;
}

}  // namespace

Tensor reshaped(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return fresh_handle(x);
  return make(OpId::reshape, {x}, ir::ReshapeAttrs{.shape = shape}.to_attrs());
}

Tensor sliced(const Tensor& x, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  const Shape& shape = x.shape();
  if (start == 0 && stop == shape[dim] && step == 1) return fresh_handle(x);
  std::vector<int64_t> starts(shape.size(), 0), limits = shape, strides(shape.size(), 1);
  starts[dim] = start;
  limits[dim] = stop;
  strides[dim] = step;
  return make(OpId::slice, {x}, ir::SliceAttrs{.start = starts, .limit = limits, .stride = strides}.to_attrs());
}

namespace {
Tensor permuted(const Tensor& x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return fresh_handle(x);
  return make(OpId::transpose, {x}, ir::TransposeAttrs{.perm = perm}.to_attrs());
}

Tensor detached(const Tensor& x) {
  NoGradGuard no_grad;
  const TensorImpl& impl = impl_of(x);
  if (!impl.is_pending()) return Tensor(x.impl()->share_data());
  return wrap(ir::make_identity(impl.pending(), "detach", false));
}

// x's elements spread `step` apart along dim, zeros between: what x[start::step] = v writes, before the
// padding that moves it to start.
Tensor spread(const Tensor& x, int64_t dim, int64_t step) {
  if (step == 1 || x.shape()[dim] <= 1) return x;  // one element needs no room after it
  Shape wide = x.shape(), flat = x.shape();
  wide.insert(wide.begin() + dim + 1, 1);
  Tensor r = reshaped(x, wide);
  std::vector<int64_t> pads(2 * (wide.size() - dim - 2), 0);
  pads.insert(pads.end(), {0, step - 1});
  r = pad(r, pads);
  flat[dim] = x.shape()[dim] * step;
  return sliced(reshaped(r, flat), dim, 0, (x.shape()[dim] - 1) * step + 1, 1);
}

// source with value written over source[start:stop:step] along dim: pads and a select, which fuse with the
// op that made the value (a scatter would not).
Tensor slice_written(const Tensor& source, const Tensor& value, int64_t dim, int64_t start, int64_t step) {
  const int64_t size = source.shape()[dim], count = value.shape()[dim];
  const int64_t covered = count == 0 ? 0 : (count - 1) * step + 1;
  std::vector<int64_t> pads(2 * (source.dim() - dim - 1), 0);
  pads.insert(pads.end(), {start, size - start - covered});
  Tensor placed = pad(spread(value, dim, step), pads);
  Shape line(source.dim(), 1);
  line[dim] = count;
  Tensor inside = pad(spread(ones(line, DType::u8, source.device()), dim, step), pads) != 0;
  return where(inside, placed, source);
}

Tensor not_writable(const Tensor&, const Tensor&) {
  fail(
      "unsupported operation: more than one element of the written-to tensor refers to a single memory "
      "location (it is an expanded view); clone() it before writing to it");
}

thread_local bool views_inside = false;

// Makes result, which x's value gave by `step`, a view of x's base.
Tensor as_view(const Tensor& x, Tensor result, ViewStep step, ViewLayout layout, bool detach) {
  if (!in_user_call() && !views_inside) return result;
  const std::shared_ptr<TensorImpl>& source = x.impl();
  auto chain = std::make_shared<ViewChain>();
  std::shared_ptr<TensorImpl> base = source;
  if (const ViewLink* link = source->view()) {
    base = link->base;
    *chain = *link->chain;
  }
  chain->steps.push_back(std::move(step));
  chain->layout = std::move(layout);
  chain->detached = chain->detached || detach;
  const bool grad_flows = !chain->detached && autograd::is_grad_enabled() && base->requires_grad();
  const uint64_t version = base->version();
  result.impl()->make_view({std::move(base), std::move(chain), version, grad_flows});
  return result;
}
}  // namespace

ViewsInside::ViewsInside() : before_(views_inside) { views_inside = true; }
ViewsInside::~ViewsInside() { views_inside = before_; }

ViewLayout layout_of(const Tensor& x) {
  if (const ViewLink* link = impl_of(x).view()) return link->chain->layout;
  return {x.shape(), contiguous_strides(x.shape())};
}

bool is_contiguous(const ViewLayout& layout) {
  int64_t expected = 1;
  for (size_t d = layout.sizes.size(); d-- > 0;) {
    if (layout.sizes[d] == 0) return true;
    if (layout.sizes[d] == 1) continue;
    if (layout.strides[d] != expected) return false;
    expected = saturating_mul(expected, layout.sizes[d]);
  }
  return true;
}

std::optional<std::vector<int64_t>> view_strides(const ViewLayout& from, const Shape& shape) {
  const Shape& sizes = from.sizes;
  if (sizes.empty()) return std::vector<int64_t>(shape.size(), 1);
  if (numel(sizes) == 0) return contiguous_strides(shape);
  // Walk both shapes from the last dim, a chunk at a time: a chunk is a run of dims that storage holds
  // contiguously (each stride the next one's times its size); the new dims must exactly tile each chunk.
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_stride = from.strides.back(), chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    chunk_numel = saturating_mul(chunk_numel, sizes[d]);
    const bool chunk_ends =
        d == 0 || (sizes[d - 1] != 1 && from.strides[d - 1] != saturating_mul(chunk_numel, chunk_stride));
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || shape[view_d] == 1)) {
      strides[view_d] = saturating_mul(view_numel, chunk_stride);
      view_numel = saturating_mul(view_numel, shape[view_d]);
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = from.strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Tensor reshape_view(const Tensor& x, const Shape& shape, std::vector<int64_t> strides) {
  ViewLayout layout{shape, std::move(strides)};
  ViewStep step{[shape](const Tensor& s) { return reshaped(s, shape); },
                [](const Tensor& s, const Tensor& v) { return reshaped(v, s.shape()); }};
  return as_view(x, reshaped(x, shape), std::move(step), std::move(layout), false);
}

Tensor slice_view(const Tensor& x, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  ViewLayout layout = layout_of(x);
  layout.sizes[dim] = stop <= start ? 0 : (stop - start - 1) / step + 1;
  if (layout.sizes[dim] > 1) layout.strides[dim] = saturating_mul(layout.strides[dim], step);
  ViewStep view_step{[=](const Tensor& s) { return sliced(s, dim, start, stop, step); },
                     [=](const Tensor& s, const Tensor& v) { return slice_written(s, v, dim, start, step); }};
  return as_view(x, sliced(x, dim, start, stop, step), std::move(view_step), std::move(layout), false);
}

Tensor permute_view(const Tensor& x, const std::vector<int64_t>& perm) {
  const ViewLayout from = layout_of(x);
  ViewLayout layout;
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    layout.sizes.push_back(from.sizes[perm[i]]);
    layout.strides.push_back(from.strides[perm[i]]);
    inverse[perm[i]] = static_cast<int64_t>(i);
  }
  ViewStep step{[perm](const Tensor& s) { return permuted(s, perm); },
                [inverse](const Tensor&, const Tensor& v) { return permuted(v, inverse); }};
  return as_view(x, permuted(x, perm), std::move(step), std::move(layout), false);
}

Tensor expand_view(const Tensor& x, const Shape& shape) {
  const ViewLayout from = layout_of(x);
  const size_t lead = shape.size() - from.sizes.size();
  ViewLayout layout{shape, std::vector<int64_t>(shape.size(), 0)};
  for (size_t d = lead; d < shape.size(); ++d)
    layout.strides[d] = from.sizes[d - lead] == shape[d] ? from.strides[d - lead] : 0;
  ViewStep step{[shape](const Tensor& s) { return broadcast_to_shape(fresh_handle(s), shape); }, not_writable};
  return as_view(x, broadcast_to_shape(fresh_handle(x), shape), std::move(step), std::move(layout), false);
}

Tensor alias_view(const Tensor& x, bool detach) {
  ViewStep step{[detach](const Tensor& s) { return detach ? detached(s) : fresh_handle(s); },
                [](const Tensor&, const Tensor& v) { return v; }};
  return as_view(x, detach ? detached(x) : fresh_handle(x), std::move(step), layout_of(x), detach);
}

void write_through_view(const Tensor& view, const Tensor& value) {
  const ViewLink& link = *view.impl()->view();
  const ViewChain& chain = *link.chain;
  for (size_t d = 0; d < chain.layout.sizes.size(); ++d)
    if (chain.layout.strides[d] == 0 && chain.layout.sizes[d] > 1) not_writable(view, value);
  if (!chain.detached && link.base->is_grad_leaf() && autograd::is_grad_enabled())
    fail(
        "a view of a leaf tensor that requires grad cannot be updated in place while grad mode is on (its "
        "gradient would be lost); update it inside a NoGradGuard, or update a detach()ed view");
  // The value of each step's source, from the base down; then the new values back up to the base.
  Tensor base(link.base);
  std::vector<Tensor> sources{base};
  for (size_t i = 0; i + 1 < chain.steps.size(); ++i) sources.push_back(chain.steps[i].apply(sources.back()));
  Tensor written = value;
  for (size_t i = chain.steps.size(); i-- > 0;) written = chain.steps[i].write_back(sources[i], written);
  {
    std::optional<NoGradGuard> no_grad;
    if (chain.detached) no_grad.emplace();  // the write is a change of data that autograd does not see
    base.copy_(written);
  }
  if (lazy::eager()) {
    TensorImpl* impl = link.base.get();
    lazy::sync_tensors({&impl, 1}, lazy::SyncCause::eager_op);
  }
  view.impl()->bind_view_value(value);
}

}  // namespace xlite::ops
