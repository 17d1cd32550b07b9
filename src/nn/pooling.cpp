// The pooling layers: sizes checked when the layer is made, windows of (height, width).
#include <string>

#include "nn/layer_support.h"
#include "xlite/error.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {
namespace {
// The int forms' options: stride 0 stands for the kernel size.
PoolOptions square_options(int64_t stride, int64_t padding) {
  return {.stride = stride == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{stride}, .padding = {padding}};
}
}  // namespace

Pool2d::Pool2d(const char* module, std::vector<int64_t> kernel_, PoolOptions options)
    : kernel(height_width(module, "kernel_size", std::move(kernel_), 1)),
      stride(options.stride.empty() ? kernel : height_width(module, "stride", std::move(options.stride), 1)),
      padding(height_width(module, "padding", std::move(options.padding), 0)) {
  // PyTorch's rule: every window holds at least one element of the input.
  if (padding[0] > kernel[0] / 2 || padding[1] > kernel[1] / 2)
    throw Error("[" + std::string(module) + "] padding " + shape_str(padding) +
                " must be at most half the kernel_size " + shape_str(kernel));
}

MaxPool2d::MaxPool2d(std::vector<int64_t> kernel, PoolOptions options)
    : Pool2d("MaxPool2d", std::move(kernel), std::move(options)) {}
MaxPool2d::MaxPool2d(int64_t kernel, int64_t stride, int64_t padding)
    : MaxPool2d(std::vector<int64_t>{kernel}, square_options(stride, padding)) {}
Tensor MaxPool2d::forward(const Tensor& x) { return max_pool2d(x, kernel, stride, padding); }

AvgPool2d::AvgPool2d(std::vector<int64_t> kernel, PoolOptions options)
    : Pool2d("AvgPool2d", std::move(kernel), std::move(options)) {}
AvgPool2d::AvgPool2d(int64_t kernel, int64_t stride, int64_t padding)
    : AvgPool2d(std::vector<int64_t>{kernel}, square_options(stride, padding)) {}
Tensor AvgPool2d::forward(const Tensor& x) { return avg_pool2d(x, kernel, stride, padding); }

}  // namespace xlite::nn
