// Normalisation layers over channels: BatchNorm (batch statistics with running estimates), GroupNorm and
// InstanceNorm2d (per-sample statistics).
#include <string>

#include "nn/layer_support.h"
#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {
namespace {
// [C] per-channel values shaped to broadcast over [N, C, ...] of the given rank.
Tensor per_channel(const Tensor& v, int64_t rank) {
  Shape shape(static_cast<size_t>(rank), 1);
  shape[1] = v.shape()[0];
  return reshape(v, shape);
}

std::vector<int64_t> all_but_channels(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}

// (x - mean) / sqrt(var + eps) over `dims`, then the per-channel affine transform when given.
Tensor normalized(const Tensor& x, const std::vector<int64_t>& dims, double eps) {
  Tensor mu = mean(x, dims, true);
  Tensor centered = x - mu;
  return centered * rsqrt(mean(centered * centered, dims, true) + eps);
}

Tensor affine(const Tensor& y, const Tensor& weight, const Tensor& bias) {
  if (!weight.defined()) return y;
  return y * per_channel(weight, y.dim()) + per_channel(bias, y.dim());
}

void check_channels(const char* op, const Tensor& x, int64_t channels, int64_t rank_low, int64_t rank_high) {
  if (x.dim() < rank_low || x.dim() > rank_high || x.shape()[1] != channels)
    throw Error("[" + std::string(op) + "] expects " + std::to_string(channels) + " channels in dim 1 of a " +
                std::to_string(rank_low) + (rank_low == rank_high ? "" : " or " + std::to_string(rank_high)) +
                "-D input, got " + shape_str(x.shape()));
}
}  // namespace

BatchNorm::BatchNorm(int64_t num_features, int64_t rank_low, int64_t rank_high, double eps_, double momentum_,
                     bool with_affine, bool track_running_stats)
    : eps(eps_), momentum(momentum_), rank_low_(rank_low), rank_high_(rank_high) {
  if (num_features < 1) throw Error("[BatchNorm] num_features must be >= 1, got " + std::to_string(num_features));
  if (with_affine) {
    weight = register_parameter("weight", materialized(ones({num_features})));
    bias = register_parameter("bias", materialized(zeros({num_features})));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", materialized(zeros({num_features})));
    running_var = register_buffer("running_var", materialized(ones({num_features})));
    num_batches_tracked = register_buffer("num_batches_tracked", materialized(zeros({}, DType::i64)));
  }
}

Tensor BatchNorm::forward(const Tensor& x) {
  const int64_t channels = running_mean.defined() ? running_mean.shape()[0] : weight.shape()[0];
  check_channels("BatchNorm", x, channels, rank_low_, rank_high_);
  const std::vector<int64_t> dims = all_but_channels(x.dim());
  if (!is_training() && running_mean.defined()) {
    Tensor y = (x - per_channel(running_mean, x.dim())) * per_channel(rsqrt(running_var + eps), x.dim());
    return affine(y, weight, bias);
  }
  if (running_mean.defined()) {
    // The running variance is the unbiased estimate, as PyTorch keeps it.
    NoGradGuard no_grad;
    const Tensor batch = x.detach();
    const double count = static_cast<double>(x.numel() / channels);
    if (count < 2)
      throw Error("[BatchNorm] needs more than one value per channel to train, got " + shape_str(x.shape()));
    running_mean.mul_(1.0 - momentum).add_(mean(batch, dims) * momentum);
    running_var.mul_(1.0 - momentum).add_(var(batch, dims, 1) * momentum);
    num_batches_tracked.add_(1);
  }
  return affine(normalized(x, dims, eps), weight, bias);
}

GroupNorm::GroupNorm(int64_t num_groups_, int64_t num_channels, double eps_, bool with_affine)
    : num_groups(num_groups_), eps(eps_) {
  if (num_groups < 1 || num_channels % num_groups != 0)
    throw Error("[GroupNorm] num_channels " + std::to_string(num_channels) + " must be divisible by num_groups " +
                std::to_string(num_groups));
  if (with_affine) {
    weight = register_parameter("weight", materialized(ones({num_channels})));
    bias = register_parameter("bias", materialized(zeros({num_channels})));
  }
}

Tensor GroupNorm::forward(const Tensor& x) {
  if (x.dim() < 2 || x.shape()[1] % num_groups != 0)
    throw Error("[GroupNorm] expects [N, C, ...] with C divisible by " + std::to_string(num_groups) + ", got " +
                shape_str(x.shape()));
  Tensor grouped = reshape(x, {x.shape()[0], num_groups, -1});
  return affine(reshape(normalized(grouped, {2}, eps), x.shape()), weight, bias);
}

InstanceNorm2d::InstanceNorm2d(int64_t num_features, double eps_, bool with_affine) : eps(eps_) {
  if (with_affine) {
    weight = register_parameter("weight", materialized(ones({num_features})));
    bias = register_parameter("bias", materialized(zeros({num_features})));
  }
}

Tensor InstanceNorm2d::forward(const Tensor& x) {
  if (x.dim() != 4) throw Error("[InstanceNorm2d] expects [N, C, H, W], got " + shape_str(x.shape()));
  return affine(normalized(x, {2, 3}, eps), weight, bias);
}

}  // namespace xlite::nn
