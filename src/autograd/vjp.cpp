#include "autograd/vjp.h"

#include <algorithm>
#include <numeric>

#include "ir/no_gradient.h"
#include "ir/op_attrs.h"
#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite::autograd {
namespace {
using ir::AttrKey;
using ir::OpId;

Tensor make_op(OpId op, std::vector<Tensor> operands, ir::Attrs attrs) {
  return ops::make(op, operands, std::move(attrs));
}

// g of a reduced value, reshaped with the reduced dims kept as 1 and expanded back to the input shape.
Tensor expand_reduced(const Tensor& g, const Shape& in_shape, std::span<const int64_t> dims) {
  Shape kept = in_shape;
  for (int64_t d : dims) kept[d] = 1;
  return expand(reshape(g, kept), in_shape);
}

// The gradient of gather(x, dim, index). With one index per row along `dim` (a loss's target class),
// each input element gets g where its position along `dim` is the row's index and 0 elsewhere: a select
// that fuses into the loop reading it, where a scatter into zeros writes a buffer of x's size and reads it
// back. The index is read through a gather of the positions themselves (which gives it back), so that an
// index out of range raises here too: the forward gather may never run when only the gradient is read.
Tensor gather_grad(const Tensor& g, const Tensor& x, int64_t dim, const Tensor& index) {
  Shape rows = x.shape();
  rows[dim] = 1;
  if (index.shape() != rows) return scatter_add(zeros_like(x), dim, index, g);
  Tensor position = ops::iota_along(x.shape(), dim, index.dtype(), x.device());
  Tensor checked = gather(position, dim, index);
  return where(position == expand(checked, x.shape()), expand(g, x.shape()), 0.0);
}

Tensor unbroadcast(const Tensor& g, const Shape& in_shape, std::span<const int64_t> dims) {
  const Shape& out = g.shape();
  std::vector<int64_t> summed;
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end())
      summed.push_back(d);
    else if (in_shape[it - dims.begin()] == 1 && out[d] != 1)
      summed.push_back(d);
  }
  Tensor r = summed.empty() ? g : sum(g, summed, true);
  return reshape(r, in_shape);
}

// The input-shaped gradient of a strided slice: the slice's elements spread back with zeros between.
Tensor unslice(Tensor g, const Shape& in_shape, const ir::SliceAttrs& slice_attrs) {
  const auto& [start, limit, stride] = slice_attrs;
  const size_t rank = in_shape.size();
  std::vector<int64_t> lo(rank), hi(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (stride[d] > 1 && g.shape()[d] > 0) {
      int64_t n = g.shape()[d];
      g = unsqueeze(g, static_cast<int64_t>(d) + 1);
      std::vector<int64_t> pad_lo(rank + 1, 0), pad_hi(rank + 1, 0);
      pad_hi[d + 1] = stride[d] - 1;
      g = make_op(OpId::pad, {g}, ir::PadAttrs{.lo = pad_lo, .hi = pad_hi, .value = 0.0}.to_attrs());
      Shape merged = g.shape();
      merged[d] = n * stride[d];
      merged.erase(merged.begin() + d + 1);
      g = reshape(g, merged);
      g = slice(g, static_cast<int64_t>(d), 0, limit[d] - start[d]);
    }
    lo[d] = start[d];
    hi[d] = in_shape[d] - start[d] - g.shape()[d];
  }
  return make_op(OpId::pad, {g}, ir::PadAttrs{.lo = lo, .hi = hi, .value = 0.0}.to_attrs());
}

Tensor swap_last_two(const Tensor& t) { return transpose(t, -1, -2); }

Tensor conv(const Tensor& x, const Tensor& w, const ir::ConvAttrs& attrs) {
  return make_op(OpId::conv2d, {x, w}, attrs.to_attrs());
}

// d conv2d / d input: the output gradient, spread by the stride, convolved with the flipped kernel whose
// input and output channels swap within each group.
Tensor conv_input_grad(const Tensor& g, const Tensor& x, const Tensor& w, const ir::ConvAttrs& attrs) {
  const auto& [stride, lo, hi, dilation, groups] = attrs;
  const Shape& ws = w.shape();
  const int64_t og = ws[0] / groups, cg = ws[1];
  Tensor flipped = flip(
      reshape(transpose(reshape(w, {groups, og, cg, ws[2], ws[3]}), 1, 2), {groups * cg, og, ws[2], ws[3]}), {2, 3});
  Tensor spread = g;
  std::vector<int64_t> new_lo(2), new_hi(2);
  for (int k = 0; k < 2; ++k) {
    const int64_t dim = 2 + k, out = g.shape()[dim], span = dilation[k] * (ws[2 + k] - 1);
    Shape full = spread.shape();
    full[dim] = (out - 1) * stride[k] + 1;
    std::vector<int64_t> start(4, 0), limit = full, step(4, 1);
    step[dim] = stride[k];
    spread = unslice(spread, full, {.start = start, .limit = limit, .stride = step});
    // Padding that makes the stride-1 convolution of the spread gradient exactly input-sized; negative
    // padding crops instead (input rows that no output window reached get a zero gradient).
    new_lo[k] = span - lo[k];
    new_hi[k] = x.shape()[dim] + span - full[dim] - new_lo[k];
    if (new_lo[k] < 0) {
      spread = slice(spread, dim, -new_lo[k]);
      new_lo[k] = 0;
    }
    if (new_hi[k] < 0) {
      spread = slice(spread, dim, 0, spread.shape()[dim] + new_hi[k]);
      new_hi[k] = 0;
    }
  }
  const std::vector<int64_t> unit{1, 1};
  return conv(spread, flipped, {.stride = unit, .lo = new_lo, .hi = new_hi, .dilation = dilation, .groups = groups});
}

// d conv2d / d weight: per group, the input (batch as channels) convolved with the output gradient
// (batch as channels), stride and dilation exchanged.
Tensor conv_weight_grad(const Tensor& g, const Tensor& x, const Tensor& w, const ir::ConvAttrs& attrs) {
  const auto& [stride, lo, hi, dilation, groups] = attrs;
  const Shape& ws = w.shape();
  const int64_t og = ws[0] / groups, cg = ws[1];
  std::vector<Tensor> parts;
  for (int64_t gi = 0; gi < groups; ++gi) {
    Tensor xg = transpose(slice(x, 1, gi * cg, (gi + 1) * cg), 0, 1);  // [cg, N, H, W]
    Tensor gg = transpose(slice(g, 1, gi * og, (gi + 1) * og), 0, 1);  // [og, N, OH, OW]
    Tensor r = conv(xg, gg,
                    {.stride = dilation, .lo = lo, .hi = hi, .dilation = stride, .groups = 1});  // [cg, og, >=KH, >=KW]
    r = slice(slice(r, 2, 0, ws[2]), 3, 0, ws[3]);
    parts.push_back(transpose(r, 0, 1));  // [og, cg, KH, KW]
  }
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

// d cumprod / d x without dividing by x, so exact where x has zeros: dy_i / dx_j is the product of x over
// k <= i, k != j, which is (product over k < j) * (product over j < k <= i). The second factor for every
// (j, i) is one cumprod over an [n, n] matrix, so this costs n^2 per row: cumprod along long dims is rare.
Tensor cumprod_grad(const Tensor& g, const Tensor& x, const Tensor& y, int64_t dim) {
  const int64_t n = x.shape()[dim];
  if (n == 0) return zeros_like(x);
  Tensor xl = transpose(x, dim, -1), gl = transpose(g, dim, -1), yl = transpose(y, dim, -1);
  Tensor k = arange(n, x.device()), j = reshape(k, {n, 1});
  Tensor after_j = where(k > j, unsqueeze(xl, -2), 1.0);      // [..., j, k]: x_k for k > j, else 1
  Tensor partial = cumprod(after_j, -1);                      // [..., j, i]: product over j < k <= i
  Tensor weights = where(k >= j, unsqueeze(gl, -2), 0.0);     // [..., j, i]: g_i for i >= j
  Tensor before = pad(slice(yl, -1, 0, n - 1), {1, 0}, 1.0);  // product over k < j
  return transpose(before * sum(partial * weights, {-1}), dim, -1);
}
}  // namespace

std::vector<Tensor> vjp(const ir::NodePtr& node, const Tensor& g) {
  std::vector<Tensor> in;
  for (const auto& operand : node->operands) in.push_back(ops::wrap(operand));
  const Tensor y = ops::wrap(node);
  const Tensor& x = in.empty() ? y : in[0];
  const ir::Attrs& attrs = node->attrs;
  switch (node->op) {
    case OpId::convert: return {is_floating(x.dtype()) ? g.to(x.dtype()) : Tensor()};
    case OpId::neg: return {-g};
    case OpId::abs: return {g * sign(x)};
    case OpId::exp: return {g * y};
    case OpId::expm1: return {g * (y + 1.0)};
    case OpId::log: return {g / x};
    case OpId::log1p: return {g / (x + 1.0)};
    case OpId::sqrt: return {g * 0.5 / y};
    case OpId::rsqrt: return {g * -0.5 * y * y * y};
    case OpId::sin: return {g * cos(x)};
    case OpId::cos: return {-g * sin(x)};
    case OpId::tan: return {g * (y * y + 1.0)};
    case OpId::atan: return {g / (x * x + 1.0)};
    case OpId::tanh: return {g * (1.0 - y * y)};
    case OpId::sigmoid: return {g * y * (1.0 - y)};
    // The mask from the output (y > 0 exactly where x > 0, NaN included), as PyTorch's threshold_backward:
    // a relu fused behind a GEMM and its bias then leaves nothing of the pre-activation for backward to keep.
    case OpId::relu: return {where(y > 0, g, 0.0)};
    case OpId::silu: {
      Tensor s = sigmoid(x);
      return {g * s * (x * (1.0 - s) + 1.0)};
    }
    case OpId::erf: return {g * 1.1283791670955126 * exp(-(x * x))};
    case OpId::gelu: {
      Tensor cdf = (erf(x * 0.7071067811865476) + 1.0) * 0.5;
      Tensor pdf = exp(x * x * -0.5) * 0.3989422804014327;
      return {g * (cdf + x * pdf)};
    }
    case OpId::gelu_tanh: {
      Tensor inner = (x + x * x * x * 0.044715) * 0.7978845608028654;
      Tensor t = tanh(inner);
      Tensor d_inner = (x * x * 0.134145 + 1.0) * 0.7978845608028654;
      return {g * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * d_inner)};
    }
    case OpId::reciprocal: return {-g * y * y};
    case OpId::add: return {g, g};
    case OpId::sub: return {g, -g};
    case OpId::mul: return {g * in[1], g * in[0]};
    case OpId::div: return {g / in[1], -g * y / in[1]};
    case OpId::pow: {
      Tensor a = in[0], b = in[1];
      return {g * b * pow(a, b - 1.0), where(a > 0, g * y * log(where(a > 0, a, 1.0)), 0.0)};
    }
    case OpId::maximum:
    case OpId::minimum: {
      // Ties split the gradient evenly, like PyTorch.
      Tensor first = node->op == OpId::maximum ? in[0] > in[1] : in[0] < in[1];
      Tensor tie = eq(in[0], in[1]);
      Tensor half = g * 0.5;
      return {where(first, g, where(tie, half, 0.0)), where(first | tie, where(tie, half, 0.0), g)};
    }
    case OpId::remainder: return {g, -g * floor(in[0] / in[1])};
    case OpId::select: return {Tensor(), where(in[0], g, 0.0), where(in[0], 0.0, g)};
    case OpId::reduce_sum: return {expand_reduced(g, x.shape(), ir::ReduceAttrs::of(attrs).dims)};
    case OpId::reduce_prod: {
      const auto dims = ir::ReduceAttrs::of(attrs).dims;
      return {expand_reduced(g * y, x.shape(), dims) / x};
    }
    case OpId::reduce_max:
    case OpId::reduce_min: {
      const auto dims = ir::ReduceAttrs::of(attrs).dims;
      Tensor mask = eq(x, expand_reduced(y, x.shape(), dims));
      Tensor count = sum(mask.to(x.dtype()), std::vector<int64_t>(dims.begin(), dims.end()), true);
      return {where(mask, expand(reshape(g, count.shape()) / count, x.shape()), 0.0)};
    }
    case OpId::reshape: return {reshape(g, x.shape())};
    case OpId::transpose: {
      const auto perm = ir::TransposeAttrs::of(attrs).perm;
      std::vector<int64_t> inverse(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<int64_t>(k);
      return {permute(g, inverse)};
    }
    case OpId::broadcast: return {unbroadcast(g, x.shape(), ir::BroadcastAttrs::of(attrs).dims)};
    case OpId::slice: return {unslice(g, x.shape(), ir::SliceAttrs::of(attrs))};
    case OpId::concat: {
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      std::vector<int64_t> sizes;
      for (const Tensor& t : in) sizes.push_back(t.shape()[dim]);
      return split(g, sizes, dim);
    }
    case OpId::pad: {
      const auto lo = ir::PadAttrs::of(attrs).lo;
      Tensor r = g;
      for (size_t d = 0; d < lo.size(); ++d) r = slice(r, static_cast<int64_t>(d), lo[d], lo[d] + x.shape()[d]);
      return {r};
    }
    case OpId::flip: {
      const auto dims = ir::FlipAttrs::of(attrs).dims;
      return {flip(g, std::vector<int64_t>(dims.begin(), dims.end()))};
    }
    case OpId::gather: {
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      return {gather_grad(g, x, dim, in[1]), Tensor()};
    }
    case OpId::index_select: {
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      Shape along(g.dim(), 1);
      along[dim] = in[1].numel();
      Tensor index = expand(reshape(in[1], along), g.shape());
      return {scatter_add(zeros_like(x), dim, index, g), Tensor()};
    }
    case OpId::scatter_add: {
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      return {g, Tensor(), gather(g, dim, in[1])};
    }
    case OpId::cumsum: {
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      return {flip(cumsum(flip(g, {dim}), dim), {dim})};
    }
    case OpId::cumprod: return {cumprod_grad(g, x, y, ir::DimAttrs::of(attrs).dim)};
    case OpId::cummax:
    case OpId::cummin: {
      // Each output is one input element (the latest extreme so far): its gradient goes back there.
      const int64_t dim = ir::DimAttrs::of(attrs).dim;
      Tensor index = (node->op == OpId::cummax ? cummax(x, dim) : cummin(x, dim)).indices;
      return {scatter_add(zeros_like(x), dim, index, g)};
    }
    case OpId::dot: return {matmul(g, swap_last_two(in[1])), matmul(swap_last_two(in[0]), g)};
    case OpId::transfer: return {ops::transfer_to(g, x.device())};
    case OpId::opt_barrier: return {g};
    case OpId::conv2d:
      return {conv_input_grad(g, in[0], in[1], ir::ConvAttrs::of(attrs)),
              conv_weight_grad(g, in[0], in[1], ir::ConvAttrs::of(attrs))};
    // Their results never require grad, so backward does not reach them.
    XLITE_CASES_WITHOUT_GRADIENT:
    case OpId::count_: break;
  }
  ops::fail("no gradient for " + std::string(ir::op_name(node->op)));
}

}  // namespace xlite::autograd
