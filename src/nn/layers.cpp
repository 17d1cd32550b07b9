#include <cmath>

#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/lazy.h"
#include "xlite/factories.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {
namespace {
Tensor uniform(const Shape& shape, double bound) { return rand(shape) * (2 * bound) - bound; }

Tensor materialized(Tensor t) {
  sync({t});
  return t;
}
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", materialized(uniform({out_features, in_features}, bound)));
  if (with_bias) bias = register_parameter("bias", materialized(uniform({out_features}, bound)));
}

Tensor Linear::forward(const Tensor& x) {
  return linear(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride_, int64_t padding_,
               int64_t dilation_, int64_t groups_, bool with_bias)
    : stride(stride_), padding(padding_), dilation(dilation_), groups(groups_) {
  if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0)
    throw Error("[Conv2d] channels " + std::to_string(in_channels) + " -> " + std::to_string(out_channels) +
                " are not divisible by groups " + std::to_string(groups));
  double bound = 1.0 / std::sqrt(static_cast<double>(in_channels / groups * kernel * kernel));
  weight =
      register_parameter("weight", materialized(uniform({out_channels, in_channels / groups, kernel, kernel}, bound)));
  if (with_bias) bias = register_parameter("bias", materialized(uniform({out_channels}, bound)));
}

Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, {stride, stride},
                {padding, padding}, {dilation, dilation}, groups);
}

MaxPool2d::MaxPool2d(int64_t kernel_, int64_t stride_, int64_t padding_)
    : kernel(kernel_), stride(stride_ == 0 ? kernel_ : stride_), padding(padding_) {}
Tensor MaxPool2d::forward(const Tensor& x) {
  return max_pool2d(x, {kernel, kernel}, {stride, stride}, {padding, padding});
}

AvgPool2d::AvgPool2d(int64_t kernel_, int64_t stride_, int64_t padding_)
    : kernel(kernel_), stride(stride_ == 0 ? kernel_ : stride_), padding(padding_) {}
Tensor AvgPool2d::forward(const Tensor& x) {
  return avg_pool2d(x, {kernel, kernel}, {stride, stride}, {padding, padding});
}

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor Flatten::forward(const Tensor& x) { return flatten(x, start_dim); }

Embedding::Embedding(int64_t num_embeddings, int64_t dim) {
  weight = register_parameter("weight", materialized(randn({num_embeddings, dim})));
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(weight, indices); }

LayerNorm::LayerNorm(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", materialized(ones({dim})));
  bias = register_parameter("bias", materialized(zeros({dim})));
}

Tensor LayerNorm::forward(const Tensor& x) {
  Tensor mu = mean(x, {-1}, true);
  Tensor centered = x - mu;
  Tensor variance = mean(centered * centered, {-1}, true);
  return centered * rsqrt(variance + eps) * weight + bias;
}

RMSNorm::RMSNorm(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", materialized(ones({dim})));
}

Tensor RMSNorm::forward(const Tensor& x) { return x * rsqrt(mean(x * x, {-1}, true) + eps) * weight; }

Dropout::Dropout(double p_) : p(p_) {
  if (p < 0 || p >= 1) throw Error("[Dropout] p must be in [0, 1), got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!is_training() || p == 0) return x;
  Tensor keep = rand(x.shape(), DType::f32, x.device()) >= p;
  return where(keep, x / (1.0 - p), 0.0);
}

Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> layers) {
  for (auto& layer : layers) push_back(std::move(layer));
}

void Sequential::push_back(std::shared_ptr<UnaryModule> layer) {
  register_module(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& layer : layers_) y = layer->forward(y);
  return y;
}

MLP::MLP(int64_t dim, int64_t hidden) {
  fc = register_module("fc", std::make_shared<Linear>(dim, hidden));
  proj = register_module("proj", std::make_shared<Linear>(hidden, dim));
}

Tensor MLP::forward(const Tensor& x) { return proj->forward(gelu(fc->forward(x), "tanh")); }

CausalSelfAttention::CausalSelfAttention(int64_t d_model, int64_t heads_) : heads(heads_) {
  if (heads < 1 || d_model % heads != 0)
    throw Error("[CausalSelfAttention] d_model " + std::to_string(d_model) + " is not divisible by " +
                std::to_string(heads) + " heads");
  qkv = register_module("qkv", std::make_shared<Linear>(d_model, 3 * d_model));
  proj = register_module("proj", std::make_shared<Linear>(d_model, d_model));
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  if (x.dim() != 3) throw Error("[CausalSelfAttention] expects [B, T, d_model], got " + shape_str(x.shape()));
  const int64_t b = x.shape()[0], t = x.shape()[1], d = x.shape()[2], dh = d / heads;
  auto parts = split(qkv->forward(x), d, -1);
  auto heads_first = [&](const Tensor& p) { return transpose(reshape(p, {b, t, heads, dh}), 1, 2); };  // [B, H, T, dh]
  Tensor q = heads_first(parts[0]), k = heads_first(parts[1]), v = heads_first(parts[2]);
  Tensor scores = matmul(q, transpose(k, -1, -2)) * (1.0 / std::sqrt(static_cast<double>(dh)));
  Tensor causal = tril(ones({t, t}, DType::bool_, x.device()));
  Tensor attention = softmax(where(causal, scores, -INFINITY), -1);
  Tensor y = reshape(transpose(matmul(attention, v), 1, 2), {b, t, d});
  return proj->forward(y);
}

namespace {

// Class-index targets, as PyTorch takes them: a float target would be truncated to a class silently.
void check_class_targets(const char* op, const char* scores_name, const Tensor& scores, const Tensor& target) {
  if (scores.dim() != 2 || target.dim() != 1 || target.shape()[0] != scores.shape()[0])
    throw Error("[" + std::string(op) + "] expects " + scores_name + " [N, C] and target [N], got " +
                shape_str(scores.shape()) + " and " + shape_str(target.shape()));
  if (is_floating(target.dtype()) || target.dtype() == DType::bool_)
    throw Error("[" + std::string(op) + "] target must hold class indices (an integer dtype), got " +
                std::string(dtype_name(target.dtype())));
}

// What a loss's mean divides by: the targets not ignored. An empty batch gives 0 (a nan loss, like
// PyTorch); a batch whose targets are all ignored gives 1 (a loss of 0 where PyTorch gives nan).
Tensor target_count(const Tensor& valid, DType dtype) {
  Tensor counted = sum(valid.to(dtype));
  return valid.shape()[0] == 0 ? counted : maximum(counted, 1.0);
}

Tensor nll_loss_of_checked(const Tensor& log_probs, const Tensor& target, int64_t ignore_index) {
  Tensor valid = target != ignore_index;
  Tensor index = unsqueeze(where(valid, target, 0), 1);
  Tensor picked = squeeze(gather(log_probs, 1, index.to(DType::i64)), 1);
  return -sum(where(valid, picked, 0.0)) / target_count(valid, log_probs.dtype());
}

}  // namespace

// Each loss is one op to its errors: an out-of-range target names the loss, not the gather inside it.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, int64_t ignore_index) {
  return composite_op("nll_loss", [&] {
    check_class_targets("nll_loss", "log_probs", log_probs, target);
    return nll_loss_of_checked(log_probs, target, ignore_index);
  });
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index, double label_smoothing) {
  return composite_op("cross_entropy", [&] {
    if (label_smoothing < 0 || label_smoothing > 1)
      throw Error("[cross_entropy] label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
    check_class_targets("cross_entropy", "logits", logits, target);
    Tensor log_probs = log_softmax(logits, -1);
    Tensor loss = nll_loss_of_checked(log_probs, target, ignore_index);
    if (label_smoothing == 0) return loss;
    // The smoothed target puts label_smoothing / C on every class, like PyTorch.
    Tensor valid = target != ignore_index;
    Tensor uniform_term = -mean(log_probs, {-1});
    Tensor smooth = sum(where(valid, uniform_term, 0.0)) / target_count(valid, logits.dtype());
    return loss * (1.0 - label_smoothing) + smooth * label_smoothing;
  });
}

Tensor mse_loss(const Tensor& input, const Tensor& target) {
  return composite_op("mse_loss", [&] {
    if (input.shape() != target.shape())
      throw Error("[mse_loss] shapes " + shape_str(input.shape()) + " and " + shape_str(target.shape()) + " differ");
    Tensor d = input - target;
    return mean(d * d);
  });
}

}  // namespace xlite::nn
