// The xlite models of the training benchmarks (bench/train_bench.cpp, bench/peer_training.cpp), set to the
// weights every peer starts from (bench/train_common.h), so that losses and gradients compare across programs.
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <xlite/xlite.h>

#include "train_common.h"

namespace bench_train {

// Overwrites a parameter with host values (in place, so optimizers and modules keep their handles).
inline void assign(xlite::Tensor p, const std::vector<float>& values) {
  xlite::NoGradGuard no_grad;
  p.copy_(xlite::tensor(values, p.shape()));
}

// Sets each of a model's parameters to the peers' initial values for its name (param_init of `specs`); throws,
// naming the model, where the parameters' names or shapes differ from the specs.
inline void assign_all(const std::vector<std::pair<std::string, xlite::Tensor>>& named,
                       const std::vector<ParamSpec>& specs, const std::string& model) {
  if (named.size() != specs.size())
    throw std::runtime_error(model + ": the model has " + std::to_string(named.size()) + " parameters, expected " +
                             std::to_string(specs.size()));
  for (const auto& [name, p] : named) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == name; });
    if (it == specs.end() || it->shape != std::vector<int64_t>(p.shape().begin(), p.shape().end()))
      throw std::runtime_error(model + ": parameter " + name + " does not match the peer's");
    assign(p, param_init(specs, *it));
  }
  xlite::sync();
}

// MLP 784-1024-1024-10 with ReLU.
struct Mlp {
  std::vector<std::shared_ptr<xlite::nn::Linear>> layers;
  xlite::nn::Sequential net;
  std::vector<std::pair<std::string, xlite::Tensor>> named;  // l0.weight, l0.bias, ... (the peers' names)
  Mlp() {
    for (int i = 0; i < 3; ++i) {
      layers.push_back(std::make_shared<xlite::nn::Linear>(kMlpDims[i], kMlpDims[i + 1]));
      net.push_back(layers.back());
      if (i < 2) net.push_back(std::make_shared<xlite::nn::ReLU>());
      named.emplace_back("l" + std::to_string(i) + ".weight", layers.back()->weight);
      named.emplace_back("l" + std::to_string(i) + ".bias", layers.back()->bias);
    }
  }
  void reset() {
    for (int i = 0; i < 3; ++i) {
      std::string l = "l" + std::to_string(i);
      assign(layers[i]->weight, linear_init(l + ".weight", kMlpDims[i + 1], kMlpDims[i], false));
      assign(layers[i]->bias, linear_init(l + ".bias", kMlpDims[i + 1], kMlpDims[i], true));
    }
    xlite::sync();
  }
};

// One pre-LN transformer block: x + attn(ln1(x)), then h + mlp(ln2(h)) (4x hidden).
class Block : public xlite::nn::UnaryModule {
 public:
  explicit Block(int64_t d_model = kTfModel, int64_t heads = kTfHeads) {
    ln1 = register_module("ln1", std::make_shared<xlite::nn::LayerNorm>(d_model));
    attn = register_module("attn", std::make_shared<xlite::nn::CausalSelfAttention>(d_model, heads));
    ln2 = register_module("ln2", std::make_shared<xlite::nn::LayerNorm>(d_model));
    mlp = register_module("mlp", std::make_shared<xlite::nn::MLP>(d_model, 4 * d_model));
  }
  xlite::Tensor forward(const xlite::Tensor& x) override {
    xlite::Tensor h = x + attn->forward(ln1->forward(x));
    return h + mlp->forward(ln2->forward(h));
  }
  // Sets every parameter to the peers' initial values; throws if a name or shape differs from theirs.
  void reset() { assign_all(named_parameters(), block_params(), "transformer"); }
  std::shared_ptr<xlite::nn::LayerNorm> ln1, ln2;
  std::shared_ptr<xlite::nn::CausalSelfAttention> attn;
  std::shared_ptr<xlite::nn::MLP> mlp;
};

// chargpt's model (examples/chargpt.cpp) with the peers' names: token and position embeddings, kGptLayers
// blocks, a final layer norm and the head.
class Gpt : public xlite::nn::Module {
 public:
  Gpt() {
    tokens = register_module("tokens", std::make_shared<xlite::nn::Embedding>(kGptVocab, kGptModel));
    positions = register_module("positions", std::make_shared<xlite::nn::Embedding>(kGptContext, kGptModel));
    for (int64_t i = 0; i < kGptLayers; ++i)
      blocks.push_back(register_module("block" + std::to_string(i), std::make_shared<Block>(kGptModel, kGptHeads)));
    final_norm = register_module("final_norm", std::make_shared<xlite::nn::LayerNorm>(kGptModel));
    head = register_module("head", std::make_shared<xlite::nn::Linear>(kGptModel, kGptVocab));
    assign_all(named_parameters(), gpt_params(), "chargpt");
  }
  // idx [B, T] -> logits [B, T, vocab]
  xlite::Tensor forward(const xlite::Tensor& idx) {
    xlite::Tensor x = tokens->forward(idx) + positions->forward(xlite::arange(0, idx.shape()[1]));
    for (auto& block : blocks) x = block->forward(x);
    return head->forward(final_norm->forward(x));
  }
  std::shared_ptr<xlite::nn::Embedding> tokens, positions;
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<xlite::nn::LayerNorm> final_norm;
  std::shared_ptr<xlite::nn::Linear> head;
};

// Matmul FLOPs of one chargpt step (forward and backward): per token and layer qkv, proj and the 4x MLP
// (24 d^2 multiply-adds... 2 FLOPs each) and the attention products over the whole context; then the head.
inline double gpt_step_flops(int64_t batch) {
  const double tokens = static_cast<double>(batch) * kGptContext, d = kGptModel;
  return 3 * tokens * (kGptLayers * (2 * 12 * d * d + 2 * 2 * kGptContext * d) + 2 * d * kGptVocab);
}

// Matmul FLOPs of one MLP training step at `batch`: forward, weight gradients, and input gradients (not for
// the first layer's input).
inline double mlp_step_flops(int64_t batch) {
  double f = 0;
  for (int i = 0; i < 3; ++i) f += 2.0 * batch * kMlpDims[i] * kMlpDims[i + 1];
  return f * 3 - 2.0 * batch * kMlpDims[0] * kMlpDims[1];
}

// Matmul FLOPs of the block's forward + backward (3x the forward): qkv, scores, att@v, proj, fc, mlp proj;
// the attention products counted in full, causal mask or not.
inline double block_step_flops(int64_t batch, int64_t seq) {
  const double tokens = static_cast<double>(batch) * seq, d = kTfModel;
  return 3 * (2 * tokens * d * (3 * d + d + 2 * kTfHidden) + 2 * 2 * static_cast<double>(batch) * seq * seq * d);
}

}  // namespace bench_train
