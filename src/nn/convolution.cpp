// The convolution layers. Weights and biases start U(-1/sqrt(fan_in), 1/sqrt(fan_in)) like PyTorch's.
#include <cmath>
#include <string>

#include "nn/layer_support.h"
#include "xlite/error.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {
namespace {
void check_groups(const char* module, int64_t in_channels, int64_t out_channels, int64_t groups) {
  if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0)
    throw Error("[" + std::string(module) + "] channels " + std::to_string(in_channels) + " -> " +
                std::to_string(out_channels) + " are not divisible by groups " + std::to_string(groups));
}
}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_, ConvOptions options_)
    : kernel(height_width("Conv2d", "kernel_size", std::move(kernel_), 1)), options(std::move(options_)) {
  check_groups("Conv2d", in_channels, out_channels, options.groups);
  options.stride = height_width("Conv2d", "stride", options.stride, 1);
  options.padding = height_width("Conv2d", "padding", options.padding, 0);
  options.dilation = height_width("Conv2d", "dilation", options.dilation, 1);
  for (int64_t p : options.output_padding)
    if (p != 0) throw Error("[Conv2d] output_padding " + shape_str(options.output_padding) + " is ConvTranspose2d's");
  const int64_t fan_in = in_channels / options.groups * kernel[0] * kernel[1];
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight = register_parameter(
      "weight", materialized(uniform({out_channels, in_channels / options.groups, kernel[0], kernel[1]}, bound)));
  if (options.bias) bias = register_parameter("bias", materialized(uniform({out_channels}, bound)));
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
               int64_t dilation, int64_t groups, bool with_bias)
    : Conv2d(in_channels, out_channels, std::vector<int64_t>{kernel},
             {.stride = {stride}, .padding = {padding}, .dilation = {dilation}, .groups = groups, .bias = with_bias}) {}

Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight, optional_bias(bias), options.stride, options.padding, options.dilation, options.groups);
}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, ConvOptions options_)
    : options(std::move(options_)) {
  check_groups("Conv1d", in_channels, out_channels, options.groups);
  double bound = 1.0 / std::sqrt(static_cast<double>(in_channels / options.groups * kernel));
  weight =
      register_parameter("weight", materialized(uniform({out_channels, in_channels / options.groups, kernel}, bound)));
  if (options.bias) bias = register_parameter("bias", materialized(uniform({out_channels}, bound)));
}

Tensor Conv1d::forward(const Tensor& x) {
  return conv1d(x, weight, optional_bias(bias), options.stride.at(0), options.padding.at(0), options.dilation.at(0),
                options.groups);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel,
                                 ConvOptions options_)
    : options(std::move(options_)) {
  check_groups("ConvTranspose2d", in_channels, out_channels, options.groups);
  kernel = height_width("ConvTranspose2d", "kernel_size", std::move(kernel), 1);
  // PyTorch's fan_in for a transposed convolution: the weight's dim 1 times the kernel area.
  double bound = 1.0 / std::sqrt(static_cast<double>(out_channels / options.groups * kernel[0] * kernel[1]));
  weight = register_parameter(
      "weight", materialized(uniform({in_channels, out_channels / options.groups, kernel[0], kernel[1]}, bound)));
  if (options.bias) bias = register_parameter("bias", materialized(uniform({out_channels}, bound)));
}

Tensor ConvTranspose2d::forward(const Tensor& x) {
  auto two = [](const std::vector<int64_t>& v) { return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v; };
  return conv_transpose2d(x, weight, optional_bias(bias), two(options.stride), two(options.padding),
                          two(options.output_padding), options.groups, two(options.dilation));
}

}  // namespace xlite::nn
