// Indexing ops. Index values are checked where they are computed (by the backend).
#include <cmath>
#include <optional>

#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "ops/op_support.h"
#include "xlite/autocast.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::AttrKey;
using ir::OpId;
using ops::OpScope;

void require_index(const Tensor& index, const char* what) {
  DType d = ops::impl_of(index).dtype();
  if (d != DType::i32 && d != DType::i64)
    ops::fail(std::string(what) + " must be an i32 or i64 tensor, got " + std::string(dtype_name(d)));
}

// Gather-like ops want the input to have rank >= 1; a 0-dim input acts as a 1-element vector.
Tensor at_least_1d(const Tensor& x) { return x.dim() == 0 ? reshape(x, {1}) : x; }

// Spatial dim k of an [N, C, H, W] input with padding[k] on both sides.
int64_t padded_extent(const Shape& xs, int k, const std::vector<int64_t>& padding) {
  auto twice = ir::checked_mul(padding[k], 2);
  auto padded = twice ? ir::checked_add(xs[2 + k], *twice) : std::nullopt;
  if (!padded)
    ops::fail("input " + shape_str(xs) + " padded by " + shape_str(padding) + " does not fit in 64-bit sizes");
  return *padded;
}
}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  OpScope scope("index_select");
  const TensorImpl& impl = ops::impl_of(x);
  require_index(index, "index");
  if (index.dim() > 1) ops::fail("index must be 0-D or 1-D, got " + shape_str(index.shape()));
  int64_t d = ops::normalize_dim(dim, impl.shape().size());
  Tensor r = ops::make(OpId::index_select, {at_least_1d(x), reshape(index, {-1})}, ir::DimAttrs{.dim = d}.to_attrs());
  if (impl.shape().empty()) r = reshape(r, {});
  return scope.finish(r);
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  OpScope scope("gather");
  const TensorImpl& impl = ops::impl_of(x);
  require_index(index, "index");
  int64_t d = ops::normalize_dim(dim, impl.shape().size());
  if (index.dim() != x.dim())
    ops::fail("index " + shape_str(index.shape()) + " must have the rank of the input " + shape_str(x.shape()));
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != d && index.shape()[i] > x.shape()[i])
      ops::fail("index " + shape_str(index.shape()) + " is larger than the input " + shape_str(x.shape()) +
                " outside dim " + std::to_string(dim));
  if (x.dim() == 0)
    return scope.finish(reshape(
        ops::make(OpId::gather, {reshape(x, {1}), reshape(index, {1})}, ir::DimAttrs{.dim = 0}.to_attrs()), {}));
  return scope.finish(ops::make(OpId::gather, {x, index}, ir::DimAttrs{.dim = d}.to_attrs()));
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  OpScope scope("scatter_add");
  const TensorImpl& impl = ops::impl_of(x);
  require_index(index, "index");
  int64_t d = ops::normalize_dim(dim, impl.shape().size());
  if (index.dim() != x.dim() || ops::impl_of(src).shape().size() != impl.shape().size())
    ops::fail("index " + shape_str(index.shape()) + " and src " + shape_str(src.shape()) +
              " must have the rank of the input " + shape_str(x.shape()));
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (index.shape()[i] > src.shape()[i] || (i != d && index.shape()[i] > x.shape()[i]))
      ops::fail("index " + shape_str(index.shape()) + " does not fit input " + shape_str(x.shape()) + " and src " +
                shape_str(src.shape()));
  }
  if (x.dim() == 0) ops::fail("0-dim inputs are not supported");
  // Only the part of src that index covers takes part, like PyTorch.
  Tensor s = ops::convert_to(src, x.dtype());
  if (src.shape() != index.shape()) {
    for (int64_t i = 0; i < x.dim(); ++i) s = slice(s, i, 0, index.shape()[i]);
  }
  return scope.finish(ops::make(OpId::scatter_add, {x, index, s}, ir::DimAttrs{.dim = d}.to_attrs()));
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  OpScope scope("embedding");
  if (ops::impl_of(weight).shape().size() != 2) ops::fail("weight must be 2-D, got " + shape_str(weight.shape()));
  require_index(indices, "indices");
  Shape out = indices.shape();
  out.push_back(weight.shape()[1]);
  Tensor rows = ops::make(OpId::index_select, {weight, reshape(indices, {-1})}, ir::DimAttrs{.dim = 0}.to_attrs());
  return scope.finish(reshape(rows, out));
}

Tensor one_hot(const Tensor& x, int64_t num_classes) {
  OpScope scope("one_hot");
  require_index(x, "input");
  if (num_classes < -1) ops::fail("num_classes must be -1 or >= 0, got " + std::to_string(num_classes));
  // PyTorch's rules: an empty input cannot tell the class count, and with no classes every value is out of range.
  if (x.numel() == 0 && num_classes <= 0)
    ops::fail("cannot infer the number of classes from an empty tensor " + shape_str(x.shape()) +
              "; give num_classes > 0");
  if (num_classes == -1) {
    // Like PyTorch, the class count comes from the data: a value read.
    const int64_t top = max(x).item<int64_t>();
    if (top < 0) ops::fail("class values must be non-negative, got a largest value of " + std::to_string(top));
    num_classes = ir::checked_add(top, 1).value_or(-1);
    if (num_classes < 0)
      ops::fail("class value " + std::to_string(top) + " leaves no class count that fits in 64 bits");
  }
  if (num_classes == 0)
    ops::fail("class values must be smaller than num_classes 0, and the input " + shape_str(x.shape()) + " has values");
  Shape out = x.shape();
  out.push_back(num_classes);
  ir::require_addressable(ops::current_op(), out, DType::i64);
  // The classes pass through an index_select of [0, num_classes), which computes nothing but raises for a
  // class out of range when the value is computed (instead of giving a silent all-zero row), and nothing
  // is read back to check them. Then each class is compared with every class number.
  Tensor classes = ops::iota_along({num_classes}, 0, DType::i64, x.device());
  Tensor checked = ops::make(OpId::index_select, {classes, reshape(x, {-1})}, ir::DimAttrs{.dim = 0}.to_attrs());
  Shape column = x.shape();
  column.push_back(1);
  return scope.finish(ops::convert_to(eq(reshape(checked, column), classes), DType::i64));
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  OpScope scope("matmul");
  const Tensor a = autocast_for_product(a_in), b = autocast_for_product(b_in);
  const Shape& sa = ops::impl_of(a).shape();
  const Shape& sb = ops::impl_of(b).shape();
  if (sa.empty() || sb.empty())
    ops::fail("both operands need at least one dim, got " + shape_str(sa) + " and " + shape_str(sb));
  const Tensor* operands[] = {&a, &b};
  DType dtype = ops::result_type(operands, {});
  if (dtype == DType::bool_) ops::fail("bool operands are not supported");
  // 1-D operands become matrices and the added dim is dropped from the result, like torch.matmul.
  Tensor x = sa.size() == 1 ? reshape(a, {1, sa[0]}) : a;
  Tensor y = sb.size() == 1 ? reshape(b, {sb[0], 1}) : b;
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  int64_t m = xs[xs.size() - 2], k = xs.back(), k2 = ys[ys.size() - 2], n = ys.back();
  if (k != k2) ops::fail("shapes " + shape_str(sa) + " and " + shape_str(sb) + " cannot be multiplied");
  Shape out(xs.begin(), xs.end() - 2);
  if (ys.size() == 2 && xs.size() > 2 && k > 0) {
    // A batch of matrices times one matrix (a Linear layer on [B, T, D]) is one GEMM of all rows: no
    // copy of the weight per batch, and its gradient is one GEMM instead of a batch of them and a sum.
    Tensor rows = reshape(ops::convert_to(x, dtype), {numel(xs) / k, k});
    Tensor r = ops::make(OpId::dot, {rows, ops::convert_to(y, dtype)});
    out.push_back(m);
    if (sb.size() > 1) out.push_back(n);
    return scope.finish(reshape(r, out));
  }
  Shape batch = ops::broadcast_shapes(Shape(xs.begin(), xs.end() - 2), Shape(ys.begin(), ys.end() - 2));
  Shape xt = batch, yt = batch;
  xt.insert(xt.end(), {m, k});
  yt.insert(yt.end(), {k, n});
  Tensor r = ops::make(OpId::dot, {ops::broadcast_to_shape(ops::convert_to(x, dtype), xt),
                                   ops::broadcast_to_shape(ops::convert_to(y, dtype), yt)});
  out = batch;
  if (sa.size() > 1) out.push_back(m);
  if (sb.size() > 1) out.push_back(n);
  return scope.finish(reshape(r, out));
}

Tensor conv2d(const Tensor& x_in, const Tensor& w_in, const std::optional<Tensor>& bias_in, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  OpScope scope("conv2d");
  const Tensor x = autocast_for_product(x_in), w = autocast_for_product(w_in);
  const std::optional<Tensor> bias = bias_in ? std::optional(autocast_for_product(*bias_in)) : std::nullopt;
  const Shape& xs = ops::impl_of(x).shape();
  const Shape& ws = ops::impl_of(w).shape();
  if (xs.size() != 4) ops::fail("input must be [N, C, H, W], got " + shape_str(xs));
  if (ws.size() != 4) ops::fail("weight must be [O, C / groups, KH, KW], got " + shape_str(ws));
  for (auto* list : {&stride, &padding, &dilation})
    if (list->size() == 1) list->push_back(list->front());
  if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2)
    ops::fail("stride, padding and dilation take one or two values");
  if (groups < 1 || xs[1] % groups != 0 || ws[0] % groups != 0 || xs[1] / groups != ws[1])
    ops::fail("input " + shape_str(xs) + " and weight " + shape_str(ws) + " do not match groups " +
              std::to_string(groups));
  for (int k = 0; k < 2; ++k) {
    if (stride[k] < 1 || dilation[k] < 1 || padding[k] < 0)
      ops::fail("stride and dilation must be >= 1 and padding >= 0");
    const int64_t padded = padded_extent(xs, k, padding);
    auto span = ir::checked_mul(dilation[k], ws[2 + k] - 1);
    if (span) span = ir::checked_add(*span, 1);
    if (!span)
      ops::fail("kernel " + shape_str(ws) + " dilated by " + shape_str(dilation) +
                " spans more than 64-bit sizes count");
    if (padded < *span)
      ops::fail("kernel " + shape_str(ws) + " dilated by " + shape_str(dilation) + " spans " + std::to_string(*span) +
                ", more than the input " + shape_str(xs) + " padded by " + shape_str(padding) + " (" +
                std::to_string(padded) + ")");
  }
  const Tensor* operands[] = {&x, &w};
  DType dtype = ops::result_type(operands, {});
  if (!is_floating(dtype)) ops::fail("needs floating tensors, got " + std::string(dtype_name(dtype)));
  const ir::ConvAttrs attrs{.stride = stride, .lo = padding, .hi = padding, .dilation = dilation, .groups = groups};
  Tensor y = ops::make(OpId::conv2d, {ops::convert_to(x, dtype), ops::convert_to(w, dtype)}, attrs.to_attrs());
  if (bias) {
    if (ops::impl_of(*bias).shape() != Shape{ws[0]})
      ops::fail("bias must be [" + std::to_string(ws[0]) + "], got " + shape_str(bias->shape()));
    y = y + reshape(*bias, {1, ws[0], 1, 1});
  }
  return scope.finish(y);
}

namespace {
// The windows of a pooling as a new leading dim: one strided slice of the padded input per kernel offset.
Tensor pooling_windows(const Tensor& x, std::vector<int64_t>& kernel, std::vector<int64_t>& stride,
                       std::vector<int64_t>& padding, double pad_value) {
  const Shape& xs = ops::impl_of(x).shape();
  if (xs.size() != 4) ops::fail("input must be [N, C, H, W], got " + shape_str(xs));
  if (!is_floating(x.dtype())) ops::fail("needs a floating tensor, got " + std::string(dtype_name(x.dtype())));
  if (stride.empty()) stride = kernel;
  for (auto* list : {&kernel, &stride, &padding})
    if (list->size() == 1) list->push_back(list->front());
  if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2)
    ops::fail("kernel, stride and padding take one or two values");
  Shape out = xs;
  for (int k = 0; k < 2; ++k) {
    if (kernel[k] < 1 || stride[k] < 1 || padding[k] < 0 || padding[k] > kernel[k] / 2)
      ops::fail("kernel and stride must be >= 1 and padding at most half the kernel");
    const int64_t padded = padded_extent(xs, k, padding);
    if (padded < kernel[k])
      ops::fail("kernel " + shape_str(kernel) + " is larger than the input " + shape_str(xs) + " padded by " +
                shape_str(padding) + " (" + std::to_string(padded) + ")");
    out[2 + k] = (padded - kernel[k]) / stride[k] + 1;
  }
  Tensor padded = pad(x, {padding[1], padding[1], padding[0], padding[0]}, pad_value);
  std::vector<Tensor> windows;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j)
      windows.push_back(slice(slice(padded, 2, i, i + (out[2] - 1) * stride[0] + 1, stride[0]), 3, j,
                              j + (out[3] - 1) * stride[1] + 1, stride[1]));
  return stack(windows, 0);
}
}  // namespace

Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding) {
  OpScope scope("max_pool2d");
  return scope.finish(amax(pooling_windows(x, kernel, stride, padding, -INFINITY), {0}));
}

Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding) {
  OpScope scope("avg_pool2d");
  return scope.finish(mean(pooling_windows(x, kernel, stride, padding, 0.0), {0}));
}

Tensor linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias) {
  OpScope scope("linear");
  if (ops::impl_of(w).shape().size() != 2) ops::fail("weight must be 2-D [out, in], got " + shape_str(w.shape()));
  if (ops::impl_of(x).shape().empty() || x.shape().back() != w.shape()[1])
    ops::fail("input " + shape_str(x.shape()) + " does not match weight " + shape_str(w.shape()));
  // Under autocast the weight is cast in its own layout and then transposed, so that the GEMM reads the cast
  // copy through its transpose flag: cast after the transpose, the copy was a strided transposing loop
  // (1.8 ms for a [2048, 512] weight, where a contiguous cast takes 0.2).
  Tensor y = matmul(x, transpose(autocast_for_product(w), 0, 1));
  if (bias) y = y + autocast_for_product(*bias);
  return scope.finish(y);
}

}  // namespace xlite
