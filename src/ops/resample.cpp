// Convolution and pooling in 1-D (as 2-D with a height of 1), the transposed convolution, adaptive average
// pooling and interpolation (along height, then width, with positions and weights computed on the host from
// the sizes alone).
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

void require_rank(const char* what, const Tensor& t, int64_t rank, const char* layout) {
  if (t.dim() != rank) ops::fail(std::string(what) + " must be " + layout + ", got " + shape_str(t.shape()));
}

// Two values for (height, width) from one or two.
std::vector<int64_t> pair(const std::vector<int64_t>& v, const char* what) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) ops::fail(std::string(what) + " takes one or two values, got " + std::to_string(v.size()));
  return v;
}

// x with (factor - 1) zeros after each element along dim (none after the last).
Tensor spread(const Tensor& x, int64_t dim, int64_t factor) {
  if (factor == 1 || x.shape()[dim] == 0) return x;
  std::vector<int64_t> pads(2 * (x.dim() + 1), 0);
  pads[2 * (x.dim() - dim - 1) + 1] = factor - 1;  // after the new dim dim + 1 (pad lists from the last dim)
  Tensor padded = pad(unsqueeze(x, dim + 1), pads);
  Shape merged = x.shape();
  merged[dim] *= factor;
  return slice(reshape(padded, merged), dim, 0, (x.shape()[dim] - 1) * factor + 1);
}

// Weights along dim of a 4-D tensor, shaped to broadcast against it.
Tensor along(const std::vector<double>& w, int64_t dim, const Tensor& like) {
  Shape shape(4, 1);
  shape[dim] = static_cast<int64_t>(w.size());
  return tensor(w, shape, like.device()).to(like.dtype());
}

Tensor require_image(const Tensor& x) {
  require_rank("input", x, 4, "[N, C, H, W]");
  if (!is_floating(x.dtype())) ops::fail("needs a floating tensor, got " + std::string(dtype_name(x.dtype())));
  return x;
}
}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  OpScope scope("conv1d");
  require_rank("input", x, 3, "[N, C, L]");
  require_rank("weight", w, 3, "[O, C / groups, K]");
  Tensor y = conv2d(unsqueeze(x, 2), unsqueeze(w, 2), bias, {1, stride}, {0, padding}, {1, dilation}, groups);
  return scope.finish(squeeze(y, 2));
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                        std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> output_padding,
                        int64_t groups, std::vector<int64_t> dilation) {
  OpScope scope("conv_transpose2d");
  require_rank("input", x, 4, "[N, C_in, H, W]");
  require_rank("weight", w, 4, "[C_in, C_out / groups, KH, KW]");
  stride = pair(stride, "stride");
  padding = pair(padding, "padding");
  output_padding = pair(output_padding, "output_padding");
  dilation = pair(dilation, "dilation");
  const Shape& ws = w.shape();
  if (groups < 1 || x.shape()[1] != ws[0] || ws[0] % groups != 0)
    ops::fail("input " + shape_str(x.shape()) + " and weight " + shape_str(ws) + " do not match groups " +
              std::to_string(groups));
  for (int k = 0; k < 2; ++k) {
    if (stride[k] < 1 || dilation[k] < 1 || padding[k] < 0 || output_padding[k] < 0)
      ops::fail("stride and dilation must be >= 1, padding and output_padding >= 0");
    if (output_padding[k] >= std::max(stride[k], dilation[k]))
      ops::fail("output_padding must be smaller than the stride or the dilation");
  }
  // The input spread by the stride, padded so that a stride-1 convolution with the kernel flipped (and its
  // channel roles swapped within each group) gives each output the sum of the inputs whose windows reach it.
  const int64_t in_per_group = ws[0] / groups, out_per_group = ws[1];
  Tensor kernel = flip(reshape(transpose(reshape(w, {groups, in_per_group, out_per_group, ws[2], ws[3]}), 1, 2),
                               {groups * out_per_group, in_per_group, ws[2], ws[3]}),
                       {2, 3});
  Tensor input = spread(spread(x, 2, stride[0]), 3, stride[1]);
  std::vector<int64_t> pads(4);  // pad() lists (before, after) from the last dim
  for (int k = 0; k < 2; ++k) {
    const int64_t edge = dilation[1 - k] * (ws[3 - k] - 1) - padding[1 - k];
    pads[2 * k] = edge;
    pads[2 * k + 1] = edge + output_padding[1 - k];
  }
  // Negative padding crops.
  for (int k = 0; k < 2; ++k) {
    const int64_t dim = 3 - k;
    int64_t& lo = pads[2 * k];
    int64_t& hi = pads[2 * k + 1];
    if (lo < 0) input = slice(input, dim, -lo), lo = 0;
    if (hi < 0) input = slice(input, dim, 0, input.shape()[dim] + hi), hi = 0;
  }
  input = pad(input, pads);
  return scope.finish(conv2d(input, kernel, bias, {1, 1}, {0, 0}, dilation, groups));
}

namespace {
// A 2-D pooling over [N, C, L] as [N, C, 1, L].
template <class Pool2d>
Tensor pool1d(const char* name, Pool2d pool, const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
  OpScope scope(name);
  require_rank("input", x, 3, "[N, C, L]");
  return scope.finish(squeeze(pool(unsqueeze(x, 2), {1, kernel}, {1, stride < 0 ? kernel : stride}, {0, padding}), 2));
}
}  // namespace

Tensor avg_pool1d(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
  return pool1d("avg_pool1d", &avg_pool2d, x, kernel, stride, padding);
}

Tensor max_pool1d(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding) {
  return pool1d("max_pool1d", &max_pool2d, x, kernel, stride, padding);
}

namespace {
// x [N, C, H, W] resized along height, then width, to `size` by resize(r, dim, out, in).
template <class Resize>
Tensor resized(const Tensor& x, std::vector<int64_t> size, Resize resize) {
  require_image(x);
  size = pair(size, "size");
  Tensor r = x;
  for (int64_t dim : {2, 3}) {
    if (size[dim - 2] < 1) ops::fail("output size must be >= 1, got " + shape_str(size));
    r = resize(r, dim, size[dim - 2], x.shape()[dim]);
  }
  return r;
}
}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> size) {
  OpScope scope("adaptive_avg_pool2d");
  return scope.finish(resized(x, size, [](const Tensor& r, int64_t dim, int64_t out, int64_t in) {
    // Output i averages inputs floor(i in / out) .. ceil((i + 1) in / out) - 1, as PyTorch picks them.
    std::vector<Tensor> windows;
    for (int64_t i = 0; i < out; ++i)
      windows.push_back(mean(slice(r, dim, (i * in) / out, ((i + 1) * in + out - 1) / out), {dim}, true));
    return concat(windows, dim);
  }));
}

Tensor interpolate(const Tensor& x, std::vector<int64_t> size, std::string_view mode, bool align_corners) {
  OpScope scope("interpolate");
  if (mode != "nearest" && mode != "bilinear")
    ops::fail("mode must be \"nearest\" or \"bilinear\", got \"" + std::string(mode) + "\"");
  const bool nearest = mode == "nearest";
  return scope.finish(resized(x, size, [&](const Tensor& r, int64_t dim, int64_t out, int64_t in) {
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    std::vector<int64_t> lo(out), hi(out);
    std::vector<double> w_lo(out), w_hi(out);
    for (int64_t i = 0; i < out; ++i) {
      const double at = static_cast<double>(i);
      if (nearest) {
        lo[i] = std::min(static_cast<int64_t>(std::floor(at * scale)), in - 1);
        continue;
      }
      const double source = align_corners
                                ? (out > 1 ? at * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                                : std::max(0.0, (at + 0.5) * scale - 0.5);
      lo[i] = std::min(static_cast<int64_t>(std::floor(source)), in - 1);
      hi[i] = std::min(lo[i] + 1, in - 1);
      w_hi[i] = source - static_cast<double>(lo[i]);
      w_lo[i] = 1.0 - w_hi[i];
    }
    // Each output reads its one or two nearest inputs, so a NaN or infinity stays where it was.
    Tensor near = index_select(r, dim, tensor(lo, x.device()));
    if (nearest) return near;
    return near * along(w_lo, dim, x) + index_select(r, dim, tensor(hi, x.device())) * along(w_hi, dim, x);
  }));
}

}  // namespace xlite
