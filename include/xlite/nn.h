#pragma once
// Neural-network building blocks, made only of public ops. Parameters are ordinary tensors that require
// grad; optimizers update them in place, so a synced training step donates their buffers.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xlite/autograd.h"
#include "xlite/tensor.h"
#include "xlite/traced_flag.h"

namespace xlite::nn {

class Module {
 public:
  virtual ~Module() = default;

  // Own and children's, depth first, in registration order; names are dotted paths ("0.weight").
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  // Parameters and buffers by name. load_state_dict copies values in place (shapes must match); with
  // strict, missing or unexpected names raise xlite::Error.
  std::map<std::string, Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

  // The mode is a TracedFlag: a compiled step that read it traces again after train() or eval().
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_.get(); }

 protected:
  Tensor register_parameter(const std::string& name, Tensor value);  // makes it require grad
  Tensor register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void collect(const std::string& prefix, bool parameters, std::vector<std::pair<std::string, Tensor>>& out) const;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  TracedFlag training_{true, "a module's training mode (train() or eval())"};
};

// A module with one input and one output, so that it can sit in a Sequential.
class UnaryModule : public Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
};

// y = x W^T + b, W of shape [out, in], initialised U(-1/sqrt(in), 1/sqrt(in)) like PyTorch.
class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
};

class Embedding : public UnaryModule {
 public:
  Embedding(int64_t num_embeddings, int64_t dim);  // weight N(0, 1)
  Tensor forward(const Tensor& indices) override;
  Tensor weight;
};

// 2-D convolution over [N, C, H, W]; weight [out, in / groups, k, k] initialised U(-1/sqrt(fan_in), +).
class Conv2d : public UnaryModule {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  int64_t stride, padding, dilation, groups;
};

class MaxPool2d : public UnaryModule {
 public:
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);  // stride 0: the kernel size
  Tensor forward(const Tensor& x) override;
  int64_t kernel, stride, padding;
};

class AvgPool2d : public UnaryModule {
 public:
  explicit AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  Tensor forward(const Tensor& x) override;
  int64_t kernel, stride, padding;
};

class ReLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};

// Flattens every dim from start_dim on.
class Flatten : public UnaryModule {
 public:
  explicit Flatten(int64_t start_dim = 1) : start_dim(start_dim) {}
  Tensor forward(const Tensor& x) override;
  int64_t start_dim;
};

// Normalises the last dim: (x - mean) / sqrt(var + eps) * weight + bias.
class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  double eps;
};

// x / sqrt(mean(x^2) + eps) * weight over the last dim.
class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  double eps;
};

// Zeroes elements with probability p in training and scales the rest by 1 / (1 - p); identity in eval.
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  double p;
};

class Sequential : public UnaryModule {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<UnaryModule>> layers);
  void push_back(std::shared_ptr<UnaryModule> layer);
  Tensor forward(const Tensor& x) override;

 private:
  std::vector<std::shared_ptr<UnaryModule>> layers_;
};

// Linear -> GELU -> Linear.
class MLP : public UnaryModule {
 public:
  MLP(int64_t dim, int64_t hidden);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Linear> fc, proj;
};

// Multi-head self-attention with a causal mask, on x of shape [B, T, d_model].
class CausalSelfAttention : public UnaryModule {
 public:
  CausalSelfAttention(int64_t d_model, int64_t heads);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Linear> qkv, proj;
  int64_t heads;
};

// Losses, averaged over the elements (targets equal to ignore_index do not count).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& input, const Tensor& target);

}  // namespace xlite::nn
