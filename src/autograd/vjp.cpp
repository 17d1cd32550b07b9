#include "autograd/vjp.h"

#include <algorithm>
#include <numeric>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite::autograd {
namespace {
using ir::AttrKey;
using ir::OpId;

Tensor make_op(OpId op, std::vector<Tensor> operands, ir::Attrs attrs) { return ops::make(op, operands, std::move(attrs)); }

// g of a reduced value, reshaped with the reduced dims kept as 1 and expanded back to the input shape.
Tensor expand_reduced(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims) {
  Shape kept = in_shape;
  for (int64_t d : dims) kept[d] = 1;
  return expand(reshape(g, kept), in_shape);
}

Tensor unbroadcast(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims) {
  const Shape& out = g.shape();
  std::vector<int64_t> summed;
  for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end()) summed.push_back(d);
    else if (in_shape[it - dims.begin()] == 1 && out[d] != 1) summed.push_back(d);
  }
  Tensor r = summed.empty() ? g : sum(g, summed, true);
  return reshape(r, in_shape);
}

// The input-shaped gradient of a strided slice: the slice's elements spread back with zeros between.
Tensor unslice(Tensor g, const Shape& in_shape, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
               const std::vector<int64_t>& stride) {
  const size_t rank = in_shape.size();
  std::vector<int64_t> lo(rank), hi(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (stride[d] > 1 && g.shape()[d] > 0) {
      int64_t n = g.shape()[d];
      g = unsqueeze(g, static_cast<int64_t>(d) + 1);
      std::vector<int64_t> pad_lo(rank + 1, 0), pad_hi(rank + 1, 0);
      pad_hi[d + 1] = stride[d] - 1;
      ir::Attrs attrs;
      attrs.set_ints(AttrKey::lo, pad_lo).set_ints(AttrKey::hi, pad_hi).set_float(AttrKey::value, 0.0);
      g = make_op(OpId::pad, {g}, std::move(attrs));
      Shape merged = g.shape();
      merged[d] = n * stride[d];
      merged.erase(merged.begin() + d + 1);
      g = reshape(g, merged);
      g = slice(g, static_cast<int64_t>(d), 0, limit[d] - start[d]);
    }
    lo[d] = start[d];
    hi[d] = in_shape[d] - start[d] - g.shape()[d];
  }
  ir::Attrs attrs;
  attrs.set_ints(AttrKey::lo, lo).set_ints(AttrKey::hi, hi).set_float(AttrKey::value, 0.0);
  return make_op(OpId::pad, {g}, std::move(attrs));
}

Tensor swap_last_two(const Tensor& t) { return transpose(t, -1, -2); }
}  // namespace

std::vector<Tensor> vjp(const ir::NodePtr& node, const Tensor& g) {
  std::vector<Tensor> in;
  for (const auto& operand : node->operands) in.push_back(ops::wrap(operand));
  const Tensor y = ops::wrap(node);
  const Tensor& x = in.empty() ? y : in[0];
  const ir::Attrs& attrs = node->attrs;
  switch (node->op) {
    case OpId::convert:
      return {is_floating(x.dtype()) ? g.to(x.dtype()) : Tensor()};
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
    case OpId::tanh: return {g * (1.0 - y * y)};
    case OpId::sigmoid: return {g * y * (1.0 - y)};
    case OpId::relu: return {where(x > 0, g, 0.0)};
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
    case OpId::reduce_sum:
      return {expand_reduced(g, x.shape(), attrs.get_ints(AttrKey::dims))};
    case OpId::reduce_prod: {
      const auto& dims = attrs.get_ints(AttrKey::dims);
      return {expand_reduced(g * y, x.shape(), dims) / x};
    }
    case OpId::reduce_max:
    case OpId::reduce_min: {
      const auto& dims = attrs.get_ints(AttrKey::dims);
      Tensor mask = eq(x, expand_reduced(y, x.shape(), dims));
      Tensor count = sum(mask.to(x.dtype()), dims, true);
      return {where(mask, expand(reshape(g, count.shape()) / count, x.shape()), 0.0)};
    }
    case OpId::reshape: return {reshape(g, x.shape())};
    case OpId::transpose: {
      const auto& perm = attrs.get_ints(AttrKey::perm);
      std::vector<int64_t> inverse(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<int64_t>(k);
      return {permute(g, inverse)};
    }
    case OpId::broadcast: return {unbroadcast(g, x.shape(), attrs.get_ints(AttrKey::dims))};
    case OpId::slice:
      return {unslice(g, x.shape(), attrs.get_ints(AttrKey::start), attrs.get_ints(AttrKey::limit), attrs.get_ints(AttrKey::stride))};
    case OpId::concat: {
      int64_t dim = attrs.get_int(AttrKey::dim);
      std::vector<int64_t> sizes;
      for (const Tensor& t : in) sizes.push_back(t.shape()[dim]);
      return split(g, sizes, dim);
    }
    case OpId::pad: {
      const auto& lo = attrs.get_ints(AttrKey::lo);
      Tensor r = g;
      for (size_t d = 0; d < lo.size(); ++d) r = slice(r, static_cast<int64_t>(d), lo[d], lo[d] + x.shape()[d]);
      return {r};
    }
    case OpId::flip: return {flip(g, attrs.get_ints(AttrKey::dims))};
    case OpId::gather: {
      int64_t dim = attrs.get_int(AttrKey::dim);
      return {scatter_add(zeros_like(x), dim, in[1], g), Tensor()};
    }
    case OpId::index_select: {
      int64_t dim = attrs.get_int(AttrKey::dim);
      Shape along(g.dim(), 1);
      along[dim] = in[1].numel();
      Tensor index = expand(reshape(in[1], along), g.shape());
      return {scatter_add(zeros_like(x), dim, index, g), Tensor()};
    }
    case OpId::scatter_add: {
      int64_t dim = attrs.get_int(AttrKey::dim);
      return {g, Tensor(), gather(g, dim, in[1])};
    }
    case OpId::dot: return {matmul(g, swap_last_two(in[1])), matmul(swap_last_two(in[0]), g)};
    default:
      ops::fail("no gradient for " + std::string(ir::op_name(node->op)) + " yet");
  }
}

}  // namespace xlite::autograd
