#pragma once
// Neural-network building blocks, made only of public ops. Parameters are ordinary tensors that require
// grad; optimizers update them in place, so a synced training step donates their buffers.
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

  // Calls fn on every child (depth first) and then on this module, like PyTorch's apply (for init).
  void apply(const std::function<void(Module&)>& fn);
  // Converts every floating parameter and buffer to dtype in place (the module's fields and an optimizer made
  // afterwards see the new tensors); integer buffers keep theirs. Gradients are dropped.
  Module& to(DType dtype);
  // The number of parameter elements; trainable_only counts those that require grad.
  int64_t num_parameters(bool trainable_only = false) const;
  // The direct children, by name.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }

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

// Options of the convolution modules, with PyTorch's defaults; kernel, stride, padding and dilation give
// (height, width) for 2-D (one value stands for both).
struct ConvOptions {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> output_padding = {0};  // ConvTranspose2d only
  int64_t groups = 1;
  bool bias = true;
};

// 2-D convolution over [N, C, H, W]; weight [out, in / groups, kh, kw] initialised U(-1/sqrt(fan_in), +).
// Sizes out of range (a kernel of 0, a negative padding, three values) raise xlite::Error here.
class Conv2d : public UnaryModule {
 public:
  // kernel is (kh, kw) or one value for both.
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel, ConvOptions options = {});
  // A square kernel, with PyTorch's positional arguments.
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  std::vector<int64_t> kernel;  // (kh, kw)
  ConvOptions options;          // stride, padding and dilation as (height, width)
};

// Options of the pooling modules: stride (empty: the kernel size) and padding give (height, width), or one
// value for both. Padding is at most half the kernel, as in PyTorch.
struct PoolOptions {
  std::vector<int64_t> stride = {};
  std::vector<int64_t> padding = {0};
};

// Pooling over windows of [N, C, H, W]: padding counts as -inf for MaxPool2d and as zeros for AvgPool2d
// (PyTorch's count_include_pad). kernel is (kh, kw) or one value for both; the int forms take one value
// each, stride 0 standing for the kernel size. Sizes out of range raise xlite::Error here.
class Pool2d : public UnaryModule {
 public:
  std::vector<int64_t> kernel, stride, padding;  // (height, width)

 protected:
  Pool2d(const char* module, std::vector<int64_t> kernel, PoolOptions options);
};

class MaxPool2d : public Pool2d {
 public:
  explicit MaxPool2d(std::vector<int64_t> kernel, PoolOptions options = {});
  // MaxPool2d({2, 1}): a braced pair would fit the int form (kernel, stride) as well as the vector.
  explicit MaxPool2d(std::initializer_list<int64_t> kernel, PoolOptions options = {})
      : MaxPool2d(std::vector<int64_t>(kernel), std::move(options)) {}
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  Tensor forward(const Tensor& x) override;
};

class AvgPool2d : public Pool2d {
 public:
  explicit AvgPool2d(std::vector<int64_t> kernel, PoolOptions options = {});
  // AvgPool2d({2, 1}): a braced pair would fit the int form (kernel, stride) as well as the vector.
  explicit AvgPool2d(std::initializer_list<int64_t> kernel, PoolOptions options = {})
      : AvgPool2d(std::vector<int64_t>(kernel), std::move(options)) {}
  explicit AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  Tensor forward(const Tensor& x) override;
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

// Normalisation over the batch, per channel (dim 1) of [N, C] or [N, C, L] (BatchNorm1d) and [N, C, H, W]
// (BatchNorm2d). Training normalises with the batch statistics and updates running_mean and running_var
// (unbiased) in place by momentum; eval normalises with the running statistics.
class BatchNorm : public UnaryModule {
 public:
  BatchNorm(int64_t num_features, int64_t input_rank_low, int64_t input_rank_high, double eps = 1e-5,
            double momentum = 0.1, bool affine = true, bool track_running_stats = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
  double eps, momentum;

 private:
  int64_t rank_low_, rank_high_;
};
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm(num_features, 2, 3, eps, momentum, affine, track_running_stats) {}
};
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm(num_features, 4, 4, eps, momentum, affine, track_running_stats) {}
};

// Normalisation over groups of channels of [N, C, ...], per sample; weight and bias per channel.
class GroupNorm : public UnaryModule {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  int64_t num_groups;
  double eps;
};

// Normalisation of each channel of each sample of [N, C, H, W] (no running statistics, like PyTorch's
// default).
class InstanceNorm2d : public UnaryModule {
 public:
  explicit InstanceNorm2d(int64_t num_features, double eps = 1e-5, bool affine = false);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  double eps;
};

// 1-D convolution over [N, C, L]; weight [out, in / groups, k].
class Conv1d : public UnaryModule {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, ConvOptions options = {});
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  ConvOptions options;
};

// Transposed 2-D convolution over [N, C, H, W]; weight [in, out / groups, kh, kw]; kernel is (kh, kw) or one
// value for both.
class ConvTranspose2d : public UnaryModule {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel, ConvOptions options = {});
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  ConvOptions options;
};

// Activations as modules, and a module around any function of one tensor.
class Lambda : public UnaryModule {
 public:
  explicit Lambda(std::function<Tensor(const Tensor&)> fn) : fn_(std::move(fn)) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }

 private:
  std::function<Tensor(const Tensor&)> fn_;
};
class Identity : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return x; }
};
class GELU : public UnaryModule {
 public:
  explicit GELU(std::string approximate = "none") : approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& x) override;
  std::string approximate;
};
class Tanh : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};
class Sigmoid : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};
class SiLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
};
class Softmax : public UnaryModule {
 public:
  explicit Softmax(int64_t dim = -1) : dim(dim) {}
  Tensor forward(const Tensor& x) override;
  int64_t dim;
};

// Containers whose children are registered (their parameters are the container's, named "0.weight" or
// "name.weight").
class ModuleList : public Module {
 public:
  ModuleList() = default;
  explicit ModuleList(std::vector<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  void insert(const std::string& name, std::shared_ptr<Module> module);
  bool contains(const std::string& name) const { return modules_.count(name) > 0; }
  std::shared_ptr<Module> operator[](const std::string& name) const;  // raises for an unknown name
  size_t size() const { return modules_.size(); }

 private:
  std::map<std::string, std::shared_ptr<Module>> modules_;
};

// Initialisers (torch.nn.init): each fills a tensor in place with values from the global generator.
// fan_in and fan_out are PyTorch's: dims 1 and 0 times the product of the dims after 1.
namespace init {
void uniform_(Tensor& t, double a = 0, double b = 1);
void normal_(Tensor& t, double mean = 0, double std = 1);
void zeros_(Tensor& t);
void ones_(Tensor& t);
void constant_(Tensor& t, double value);
void xavier_uniform_(Tensor& t, double gain = 1);
void xavier_normal_(Tensor& t, double gain = 1);
// mode "fan_in" or "fan_out"; nonlinearity "relu", "leaky_relu" (slope a), "linear", "tanh" or "sigmoid".
void kaiming_uniform_(Tensor& t, double a = 0, std::string_view mode = "fan_in",
                      std::string_view nonlinearity = "leaky_relu");
void kaiming_normal_(Tensor& t, double a = 0, std::string_view mode = "fan_in",
                     std::string_view nonlinearity = "leaky_relu");
// A (semi-)orthogonal matrix of the tensor flattened to [dim 0, rest], scaled by gain.
void orthogonal_(Tensor& t, double gain = 1);
}  // namespace init

// Losses. reduction is "mean" (the default), "sum" or "none" (kl_div also takes "batchmean"), as PyTorch's.
// Class losses take scores [N, C, d1, ...] with integer targets [N, d1, ...]; targets equal to ignore_index
// do not count, and the mean divides by the (class-weighted) targets that count.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100,
                     double label_smoothing = 0.0, const std::optional<Tensor>& weight = std::nullopt,
                     std::string_view reduction = "mean");
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, int64_t ignore_index = -100,
                const std::optional<Tensor>& weight = std::nullopt, std::string_view reduction = "mean");
Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
// Squared below beta (scaled by 1 / beta), absolute above; huber_loss is smooth_l1_loss times delta.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, double beta = 1.0,
                      std::string_view reduction = "mean");
Tensor huber_loss(const Tensor& input, const Tensor& target, double delta = 1.0, std::string_view reduction = "mean");
// input holds probabilities; the logs are clamped at -100 like PyTorch's.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = std::nullopt, std::string_view reduction = "mean");
// Sigmoid and binary cross entropy in one, stable for any logit; pos_weight scales the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        std::string_view reduction = "mean");
// input holds log-probabilities; target probabilities (or log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction = "mean", bool log_target = false);
Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t dim = 1, double eps = 1e-8);

}  // namespace xlite::nn
