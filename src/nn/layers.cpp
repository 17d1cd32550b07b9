// The layers without a file of their own: linear, embedding, layer norms, dropout, attention, activations and
// the containers.
#include <cmath>

#include "nn/layer_support.h"
#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/kernels.h"
#include "xlite/nn.h"
#include "xlite/ops.h"

namespace xlite::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", materialized(uniform({out_features, in_features}, bound)));
  if (with_bias) bias = register_parameter("bias", materialized(uniform({out_features}, bound)));
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, optional_bias(bias)); }

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

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p, is_training()); }

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
  // The fused kernel, as PyTorch's scaled_dot_product_attention: it skips the blocks the mask hides and never
  // holds the [B, H, T, T] scores, which the composite (matmul, where, softmax, matmul) computes in full.
  Tensor attended = kernels::flash_attention(q, k, v, /*causal=*/true, 1.0 / std::sqrt(static_cast<double>(dh)));
  Tensor y = reshape(transpose(attended, 1, 2), {b, t, d});
  return proj->forward(y);
}

Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor SiLU::forward(const Tensor& x) { return silu(x); }
Tensor Softmax::forward(const Tensor& x) { return softmax(x, dim); }

ModuleList::ModuleList(std::vector<std::shared_ptr<Module>> modules) {
  for (auto& m : modules) push_back(std::move(m));
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleList::operator[](size_t i) const {
  if (i >= modules_.size())
    throw Error("[ModuleList] index " + std::to_string(i) + " is out of range for " + std::to_string(modules_.size()) +
                " modules");
  return modules_[i];
}

void ModuleDict::insert(const std::string& name, std::shared_ptr<Module> module) {
  if (modules_.count(name)) throw Error("[ModuleDict] '" + name + "' is already there");
  register_module(name, module);
  modules_.emplace(name, std::move(module));
}

std::shared_ptr<Module> ModuleDict::operator[](const std::string& name) const {
  auto it = modules_.find(name);
  if (it == modules_.end()) throw Error("[ModuleDict] no module named '" + name + "'");
  return it->second;
}

}  // namespace xlite::nn
