// The libtorch (1.13 C++) models of the training benchmarks, for the two libtorch peers (bench/torch_train_peer.cpp
// of train_bench, bench/torch_training_peer.cpp of peer_training), from the weights every side starts from
// (bench/train_common.h), and what every libtorch peer program needs (threads, host data). libtorch 1.13 has no
// scaled_dot_product_attention: the block's attention is written from its ops (matmul, masked_fill with a causal mask,
// softmax), the computation of xlite's nn::CausalSelfAttention op for op.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "train_common.h"

namespace torch_models {

using bench_train::ParamSpec;

// libtorch's threads as every peer runs: OMP_NUM_THREADS (at least 1), or 2 where it is unset.
inline void set_threads_from_env() {
  const char* threads = std::getenv("OMP_NUM_THREADS");
  torch::set_num_threads(threads ? std::max(1, std::atoi(threads)) : 2);
}

inline torch::Tensor from_host(std::vector<float> values, at::IntArrayRef shape) {
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

inline torch::Tensor from_host(std::vector<int64_t> values, at::IntArrayRef shape) {
  return torch::from_blob(values.data(), shape, torch::kInt64).clone();
}

inline std::vector<float> to_host(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// Parameters by name, each set to the peers' initial values (bench_train::param_init) and requiring grad, plus
// the list an optimizer takes, in the order of the specs.
struct Params {
  std::map<std::string, torch::Tensor> by_name;
  std::vector<torch::Tensor> list;
  explicit Params(const std::vector<ParamSpec>& specs) {
    for (const ParamSpec& s : specs) {
      torch::Tensor t = from_host(bench_train::param_init(specs, s), s.shape).requires_grad_();
      by_name[s.name] = t;
      list.push_back(t);
    }
  }
  const torch::Tensor& operator[](const std::string& name) const { return by_name.at(name); }
  // Gradients undefined, as PyTorch 2's zero_grad(set_to_none=True): backward then writes them instead of
  // accumulating into zeros.
  void clear_grads() {
    for (torch::Tensor& p : list) p.mutable_grad() = torch::Tensor();
  }
  // The sum of the squared gradient norms, in double.
  double grad_sq() const {
    double sq = 0;
    for (const torch::Tensor& p : list) sq += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
    return sq;
  }
};

// True above the diagonal of a [t, t] matrix: the keys a query may not see. Made once per length.
inline const torch::Tensor& causal_mask(int64_t t) {
  static std::map<int64_t, torch::Tensor> masks;
  torch::Tensor& mask = masks[t];
  if (!mask.defined()) mask = torch::triu(torch::ones({t, t}, torch::kBool), 1);
  return mask;
}

// The pre-LN block of width d on x [B, T, d]: x + attn(ln1(x)), then h + mlp(ln2(h)) (4x hidden, tanh GELU),
// causal; its parameters p[prefix + name] (bench_train::block_params).
inline torch::Tensor block_forward(const Params& p, const std::string& prefix, int64_t heads, const torch::Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2), dh = d / heads;
  auto linear = [&](const torch::Tensor& in, const std::string& name) {
    return torch::linear(in, p[prefix + name + ".weight"], p[prefix + name + ".bias"]);
  };
  auto layer_norm = [&](const torch::Tensor& in, const std::string& name) {
    return torch::layer_norm(in, {d}, p[prefix + name + ".weight"], p[prefix + name + ".bias"], 1e-5);
  };
  std::vector<torch::Tensor> qkv = linear(layer_norm(x, "ln1"), "attn.qkv").split(d, -1);
  auto heads_first = [&](const torch::Tensor& z) { return z.view({b, t, heads, dh}).transpose(1, 2); };
  torch::Tensor q = heads_first(qkv[0]), k = heads_first(qkv[1]), v = heads_first(qkv[2]);
  torch::Tensor scores = torch::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(dh)));
  torch::Tensor att = torch::softmax(scores.masked_fill(causal_mask(t), -INFINITY), -1);
  torch::Tensor a = torch::matmul(att, v).transpose(1, 2).reshape({b, t, d});
  torch::Tensor h = x + linear(a, "attn.proj");
  return h + linear(torch::gelu(linear(layer_norm(h, "ln2"), "mlp.fc"), "tanh"), "mlp.proj");
}

// chargpt's model (bench_train::gpt_params) on token ids [B, T]: the mean cross-entropy against targets [B, T].
inline torch::Tensor gpt_loss(const Params& p, const torch::Tensor& idx, const torch::Tensor& targets) {
  using namespace bench_train;
  const int64_t t = idx.size(1);
  torch::Tensor h = torch::embedding(p["tokens.weight"], idx) + p["positions.weight"].slice(0, 0, t);
  for (int64_t i = 0; i < kGptLayers; ++i) h = block_forward(p, "block" + std::to_string(i) + ".", kGptHeads, h);
  h = torch::layer_norm(h, {kGptModel}, p["final_norm.weight"], p["final_norm.bias"], 1e-5);
  torch::Tensor logits = torch::linear(h, p["head.weight"], p["head.bias"]);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, kGptVocab}), targets.reshape({-1}));
}

}  // namespace torch_models
