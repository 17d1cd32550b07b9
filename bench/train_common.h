// What bench/train_bench.cpp (xlite) and bench/torch_train_peer.cpp (libtorch) share: the shapes of the
// training benchmarks and the deterministic host data both sides start from, so that their losses and
// gradients can be compared number for number. Standard library only (the peer does not link xlite).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bench_train {

// 1. MLP 784-1024-1024-10 with ReLU, batch 256, cross-entropy, SGD (lr 0.01, no momentum).
constexpr int64_t kMlpBatch = 256, kMlpIn = 784, kMlpHidden = 1024, kMlpClasses = 10;
constexpr double kMlpLr = 0.01;
inline const int64_t kMlpDims[4] = {kMlpIn, kMlpHidden, kMlpHidden, kMlpClasses};

// 2. One pre-LN transformer block: x + attn(ln1(x)), then h + mlp(ln2(h)) (4x hidden, tanh GELU), causal;
// loss = mean of the block's output; forward + backward.
constexpr int64_t kTfBatch = 8, kTfSeq = 256, kTfModel = 512, kTfHeads = 8, kTfHidden = 4 * kTfModel;

// 4. chargpt (examples/chargpt.cpp): 4 pre-LN blocks, 4 heads, d_model 128, context 64, batch 16, AdamW
// (lr 3e-3, betas 0.9 and 0.99, eps 1e-8, weight decay 0.01), on a vocabulary of 96 characters.
constexpr int64_t kGptLayers = 4, kGptHeads = 4, kGptModel = 128, kGptContext = 64, kGptBatch = 16, kGptVocab = 96;
constexpr double kGptLr = 3e-3, kGptBeta1 = 0.9, kGptBeta2 = 0.99, kGptEps = 1e-8, kGptWeightDecay = 0.01;

// 3. Host overhead: a chain of kOverheadIters x 4 elementwise ops on kOverheadElems-element tensors.
constexpr int64_t kOverheadElems = 4, kOverheadIters = 250;

// Deterministic uniform numbers in offset + scale * [-1, 1), from a 32-bit seed (a splitmix-style hash of
// the index, so any element can be produced independently and both programs get identical floats).
inline std::vector<float> uniform(size_t count, uint32_t seed, float scale, float offset = 0.0f) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = (static_cast<uint64_t>(seed) << 32) + i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    out[i] = offset + scale * (static_cast<float>(z >> 40) / 8388608.0f - 1.0f);  // 24 bits -> [-1, 1)
  }
  return out;
}

// A seed from a parameter's name, so both programs give the same parameter the same values.
inline uint32_t seed_of(const std::string& name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

// PyTorch's default Linear initialisation range, U(-1/sqrt(in), 1/sqrt(in)), for weight [out, in] and bias.
inline std::vector<float> linear_init(const std::string& name, int64_t out, int64_t in, bool bias) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  return uniform(static_cast<size_t>(bias ? out : out * in), seed_of(name), bound);
}

// LayerNorm parameters away from (1, 0), so that their gradients and the check mean something.
inline std::vector<float> norm_init(const std::string& name, int64_t dim, bool bias) {
  return uniform(static_cast<size_t>(dim), seed_of(name), 0.1f, bias ? 0.0f : 1.0f);
}

inline std::vector<int64_t> labels(size_t count, int64_t classes, uint32_t seed) {
  std::vector<float> u = uniform(count, seed, 0.5f, 0.5f);  // [0, 1)
  std::vector<int64_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = std::min<int64_t>(classes - 1, static_cast<int64_t>(u[i] * classes));
  return out;
}

// The parameters of a pre-LN block of width d (kTfModel for the block benchmark), each name after `prefix`, in
// this order on every side: name, shape.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
};
inline std::vector<ParamSpec> block_params(int64_t d = kTfModel, const std::string& prefix = "") {
  return {{prefix + "ln1.weight", {d}},
          {prefix + "ln1.bias", {d}},
          {prefix + "attn.qkv.weight", {3 * d, d}},
          {prefix + "attn.qkv.bias", {3 * d}},
          {prefix + "attn.proj.weight", {d, d}},
          {prefix + "attn.proj.bias", {d}},
          {prefix + "ln2.weight", {d}},
          {prefix + "ln2.bias", {d}},
          {prefix + "mlp.fc.weight", {4 * d, d}},
          {prefix + "mlp.fc.bias", {4 * d}},
          {prefix + "mlp.proj.weight", {d, 4 * d}},
          {prefix + "mlp.proj.bias", {d}}};
}

// chargpt's parameters (bench/train_models.h's Gpt names them the same): token and position embeddings, the
// blocks "block0." to "block3.", the final layer norm and the head.
inline std::vector<ParamSpec> gpt_params() {
  std::vector<ParamSpec> specs = {{"tokens.weight", {kGptVocab, kGptModel}},
                                  {"positions.weight", {kGptContext, kGptModel}}};
  for (int64_t i = 0; i < kGptLayers; ++i)
    for (ParamSpec& p : block_params(kGptModel, "block" + std::to_string(i) + ".")) specs.push_back(std::move(p));
  specs.push_back({"final_norm.weight", {kGptModel}});
  specs.push_back({"final_norm.bias", {kGptModel}});
  specs.push_back({"head.weight", {kGptVocab, kGptModel}});
  specs.push_back({"head.bias", {kGptVocab}});
  return specs;
}

// Initial values of any parameter of the models here, from its name and shape alone (so that the peers can
// make them without the model): layer norms as norm_init, embeddings ("tokens.weight", "positions.weight")
// uniform in [-0.1, 0.1), linear layers as PyTorch initialises them (a bias with its weight's fan-in,
// `bias_fan_in`).
inline std::vector<float> named_param_init(const std::string& name, const std::vector<int64_t>& shape,
                                           int64_t bias_fan_in) {
  const bool is_bias = name.size() > 5 && name.substr(name.size() - 5) == ".bias";
  auto contains = [&](const char* part) { return name.find(part) != std::string::npos; };
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  if (contains("ln1.") || contains("ln2.") || contains("final_norm.")) return norm_init(name, shape[0], is_bias);
  if (contains("tokens.") || contains("positions.")) return uniform(count, seed_of(name), 0.1f);
  return is_bias ? linear_init(name, shape[0], bias_fan_in, true) : linear_init(name, shape[0], shape[1], false);
}

// named_param_init of one of `specs`, a bias taking the fan-in of its weight among them.
inline std::vector<float> param_init(const std::vector<ParamSpec>& specs, const ParamSpec& p) {
  int64_t bias_fan_in = 0;
  const bool is_bias = p.name.size() > 5 && p.name.substr(p.name.size() - 5) == ".bias";
  for (const ParamSpec& q : specs)
    if (is_bias && q.name == p.name.substr(0, p.name.size() - 4) + "weight") bias_fan_in = q.shape[1];
  return named_param_init(p.name, p.shape, bias_fan_in);
}

// Two numbers that summarise a gradient for comparing the two programs: its squared L2 norm, and its
// projection on a fixed pseudo-random probe vector, as a cosine times sqrt(elements) (so that it is of
// order 1 whatever the size; it catches permuted or misplaced elements that the norm alone would not).
// Computed in double on the host.
struct GradStats {
  double sq = 0, probe = 0;
};
inline GradStats grad_stats(const std::string& name, const std::vector<float>& g) {
  std::vector<float> r = uniform(g.size(), seed_of("probe:" + name), 1.0f);
  double sq = 0, rr = 0, dot = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    sq += static_cast<double>(g[i]) * g[i];
    rr += static_cast<double>(r[i]) * r[i];
    dot += static_cast<double>(g[i]) * r[i];
  }
  return {sq, sq > 0 && rr > 0 ? dot / std::sqrt(sq * rr) * std::sqrt(static_cast<double>(g.size())) : 0.0};
}

}  // namespace bench_train
