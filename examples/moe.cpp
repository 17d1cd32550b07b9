// A mixture-of-experts transformer on chargpt's text (examples/text_corpus.h). In each block a router
// picks two of four experts per token (top-2, their softmax weights renormalised to sum to 1); the
// (token, expert) pairs are sorted by expert on the device, and each expert's rows go through one grouped
// matmul (kernels::gmm) per layer of the expert MLP. Nothing about the routing is read on the host, so the
// compiled training step keeps one graph whatever the router decides.
//
// Two checks; exit 1 if either fails:
//  1. The gmm path matches a dense loop over the experts (each expert runs on every token with plain
//     matmuls, weighted by the router's weight for it, zero where it was not picked) on the same inputs:
//     the output and the gradients of the input, the router and the experts, each within 1e-4 of its
//     largest magnitude.
//  2. Trained with compile(step) for the same steps on the same batches from the same seed, the MoE
//     model's loss (cross-entropy, mean of the last 20 steps) is below a dense model's or at most 0.05
//     nats above it. The dense model's MLP has hidden 2H where an expert has H: per token it does the
//     work of the two experts the router picks. Each compiled step traces at most 3 times.
// Usage: moe [steps] (default 300).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include <xlite/xlite.h>

#include "text_corpus.h"

namespace xl = xlite;
namespace nn = xlite::nn;
namespace k = xlite::kernels;

namespace {
struct Config {
  int64_t layers = 2, heads = 4, d_model = 64, context = 64, batch = 16;
  int64_t experts = 4, expert_hidden = 128;  // the dense model's MLP: hidden 2 * expert_hidden
};
constexpr double kBalanceWeight = 0.01;  // of the load-balancing loss, as in the Switch Transformer
constexpr double kLossMargin = 0.05;     // nats the MoE model may stay above the dense one
constexpr double kTolerance = 1e-4;      // gmm path against the dense loop, relative to the largest value
constexpr int kMaxTraces = 3;            // compile(step) traces twice, then replays

struct Routing {
  xl::Tensor expert;   // [N, 2] i64: each token's two experts, best first
  xl::Tensor weight;   // [N, 2]: their router probabilities, renormalised to sum to 1
  xl::Tensor balance;  // scalar load-balancing loss
};

// Top-2 routing of x [N, D] with router weight [E, D].
Routing route(const xl::Tensor& x, const xl::Tensor& router) {
  const int64_t experts = router.shape()[0];
  xl::Tensor probs = xl::softmax(xl::linear(x, router), -1);
  xl::Tensor first = xl::argmax(probs, -1);
  // Probabilities are positive, so with the winner set to -1 the argmax is the runner-up.
  xl::Tensor second = xl::argmax(xl::where(xl::eq(xl::one_hot(first, experts), 1), -1.0, probs), -1);
  xl::Tensor expert = xl::stack({first, second}, 1);
  xl::Tensor top = xl::gather(probs, 1, expert);
  // The Switch Transformer's auxiliary loss, E * sum_e (share of the assignments to e) * (mean probability
  // of e): 1 for an even load, larger when a few experts take most tokens, which they would otherwise do.
  xl::Tensor share = xl::mean(xl::one_hot(expert, experts).to(xl::DType::f32), {0, 1});
  xl::Tensor balance = xl::sum(share * xl::mean(probs, {0})) * static_cast<double>(experts);
  return {expert, top / xl::sum(top, {1}, true), balance};
}

// The experts' MLPs (w1 [E, D, H], w2 [E, H, D]) on the routed tokens of x [N, D], through gmm.
xl::Tensor experts_grouped(const xl::Tensor& x, const Routing& r, const xl::Tensor& w1, const xl::Tensor& w2) {
  const int64_t tokens = x.shape()[0], pairs = 2 * tokens, experts = w1.shape()[0];
  xl::Tensor expert = xl::reshape(r.expert, {pairs});  // pair p is token p / 2, its choice p % 2
  // Where each pair lands in a stable sort by expert: the number of pairs with a smaller key (expert, p).
  // Counting is quadratic in the pairs, a few million comparisons here; there is no argsort op.
  xl::Tensor key = expert * pairs + xl::arange(pairs);
  xl::Tensor dest = xl::sum(xl::lt(xl::unsqueeze(key, 0), xl::unsqueeze(key, 1)), {1});
  // The inverse permutation, as the token each sorted row reads: dest is one-to-one, so the sum is a copy.
  xl::Tensor token = xl::reshape(xl::expand(xl::unsqueeze(xl::arange(tokens), 1), {tokens, 2}), {pairs});
  xl::Tensor source = xl::scatter_add(xl::zeros({pairs}, xl::DType::i64), 0, dest, token);
  // Computed on the device: reading them on the host would make them guards that retrace every step.
  xl::Tensor sizes = xl::sum(xl::one_hot(expert, experts), {0}).to(xl::DType::i32);
  xl::Tensor hidden = xl::gelu(k::gmm(xl::index_select(x, 0, source), w1, sizes), "tanh");
  xl::Tensor out = k::gmm(hidden, w2, sizes);  // [pairs, D], sorted by expert
  // Back in pair order, each token's two outputs weighted and summed (the gradient scatter-adds them).
  xl::Tensor per_pair = xl::reshape(xl::index_select(out, 0, dest), {tokens, 2, -1});
  return xl::sum(per_pair * xl::unsqueeze(r.weight, 2), {1});
}

// The same with plain matmuls: every expert on every token, masked by its routing weight. E times the work.
xl::Tensor experts_dense(const xl::Tensor& x, const Routing& r, const xl::Tensor& w1, const xl::Tensor& w2) {
  xl::Tensor out = xl::zeros_like(x);
  for (int64_t e = 0; e < w1.shape()[0]; ++e) {
    xl::Tensor gate = xl::sum(xl::where(xl::eq(r.expert, e), r.weight, 0.0), {1}, true);  // [N, 1]
    xl::Tensor hidden = xl::gelu(xl::matmul(x, xl::squeeze(xl::slice(w1, 0, e, e + 1), 0)), "tanh");
    out = out + gate * xl::matmul(hidden, xl::squeeze(xl::slice(w2, 0, e, e + 1), 0));
  }
  return out;
}

// Uniform in +-1/sqrt(fan_in), like nn::Linear.
xl::Tensor uniform(const xl::Shape& shape, int64_t fan_in) {
  const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
  xl::Tensor t = xl::rand(shape) * (2 * bound) - bound;
  xl::sync({t});
  return t;
}

class MoE : public nn::Module {
 public:
  MoE(int64_t d_model, int64_t hidden, int64_t experts) {
    router = register_parameter("router", uniform({experts, d_model}, d_model));
    w1 = register_parameter("w1", uniform({experts, d_model, hidden}, d_model));
    w2 = register_parameter("w2", uniform({experts, hidden, d_model}, hidden));
  }
  // x [..., D] -> the output and the load-balancing loss.
  std::pair<xl::Tensor, xl::Tensor> forward(const xl::Tensor& x) {
    xl::Tensor rows = xl::reshape(x, {-1, x.shape().back()});
    Routing r = route(rows, router);
    return {xl::reshape(experts_grouped(rows, r, w1, w2), x.shape()), r.balance};
  }
  xl::Tensor router, w1, w2;
};

// A pre-norm transformer block whose MLP is either dense or the mixture of experts.
class Block : public nn::Module {
 public:
  Block(const Config& c, bool moe) {
    ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(c.d_model));
    attention = register_module("attention", std::make_shared<nn::CausalSelfAttention>(c.d_model, c.heads));
    ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(c.d_model));
    if (moe)
      experts = register_module("moe", std::make_shared<MoE>(c.d_model, c.expert_hidden, c.experts));
    else
      mlp = register_module("mlp", std::make_shared<nn::MLP>(c.d_model, 2 * c.expert_hidden));
  }
  // Adds the block's load-balancing loss to `balance` (an undefined tensor counts as none yet).
  xl::Tensor forward(const xl::Tensor& x, xl::Tensor& balance) {
    xl::Tensor h = x + attention->forward(ln1->forward(x));
    if (mlp) return h + mlp->forward(ln2->forward(h));
    auto [y, b] = experts->forward(ln2->forward(h));
    balance = balance.defined() ? balance + b : b;
    return h + y;
  }

 private:
  std::shared_ptr<nn::LayerNorm> ln1, ln2;
  std::shared_ptr<nn::CausalSelfAttention> attention;
  std::shared_ptr<nn::MLP> mlp;
  std::shared_ptr<MoE> experts;
};

class GPT : public nn::Module {
 public:
  GPT(const Config& c, int64_t vocab, bool moe) {
    tokens = register_module("tokens", std::make_shared<nn::Embedding>(vocab, c.d_model));
    positions = register_module("positions", std::make_shared<nn::Embedding>(c.context, c.d_model));
    for (int64_t i = 0; i < c.layers; ++i)
      blocks.push_back(register_module("block" + std::to_string(i), std::make_shared<Block>(c, moe)));
    final_norm = register_module("final_norm", std::make_shared<nn::LayerNorm>(c.d_model));
    head = register_module("head", std::make_shared<nn::Linear>(c.d_model, vocab));
    // Small initial embeddings keep the first logits near uniform.
    xl::NoGradGuard no_grad;
    tokens->weight.mul_(0.1);
    positions->weight.mul_(0.1);
  }
  // idx [B, T] -> logits [B, T, vocab]; balance: the blocks' load-balancing losses (undefined for dense).
  xl::Tensor forward(const xl::Tensor& idx, xl::Tensor& balance) {
    xl::Tensor x = tokens->forward(idx) + positions->forward(xl::arange(0, idx.shape()[1]));
    for (auto& block : blocks) x = block->forward(x, balance);
    return head->forward(final_norm->forward(x));
  }

 private:
  std::shared_ptr<nn::Embedding> tokens, positions;
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<nn::LayerNorm> final_norm;
  std::shared_ptr<nn::Linear> head;
};

// max |a - b| / max |b|.
double relative_error(const xl::Tensor& a, const xl::Tensor& b) {
  const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    diff = std::max(diff, std::abs(double(va[i]) - vb[i]));
    scale = std::max(scale, std::abs(double(vb[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// Check 1: the largest relative error of the gmm path against the dense loop, output and gradients.
double gmm_against_dense_loop(const Config& c) {
  xl::manual_seed(99);
  MoE layer(c.d_model, c.expert_hidden, c.experts);
  xl::Tensor x = xl::randn({c.batch * c.context, c.d_model});
  xl::Tensor probe = xl::randn({c.batch * c.context, c.d_model});  // a loss that weighs every output
  xl::sync({x, probe});
  auto loss = [&](bool grouped) {
    return [&, grouped](const std::vector<xl::Tensor>& in) {
      Routing r = route(in[0], in[1]);
      xl::Tensor y = grouped ? experts_grouped(in[0], r, in[2], in[3]) : experts_dense(in[0], r, in[2], in[3]);
      return xl::sum(y * probe);
    };
  };
  const std::vector<xl::Tensor> inputs = {x, layer.router, layer.w1, layer.w2};
  const char* names[] = {"x", "router", "w1", "w2"};
  Routing r = route(x, layer.router);
  double worst = relative_error(experts_grouped(x, r, layer.w1, layer.w2), experts_dense(x, r, layer.w1, layer.w2));
  std::printf("gmm path vs dense per-expert loop: output %.2e", worst);
  std::vector<xl::Tensor> grouped = xl::grad(loss(true), inputs), dense = xl::grad(loss(false), inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double error = relative_error(grouped[i], dense[i]);
    std::printf(", grad %s %.2e", names[i], error);
    worst = std::max(worst, error);
  }
  std::printf(" (max relative error %.2e, tolerance %.0e)\n", worst, kTolerance);
  return worst;
}

struct Trained {
  double loss = 0;  // mean cross-entropy of the last 20 steps
  int traces = 0;   // calls of the compiled step that traced instead of replaying
  double seconds = 0;
};

// Check 2: trains one model with compile(step), AdamW and chargpt's schedule on chargpt's batches.
Trained train(const char* name, bool moe, const Config& c, const text_corpus::Corpus& corpus, int steps) {
  xl::manual_seed(1234);
  GPT model(c, corpus.vocab(), moe);
  int64_t parameters = 0;
  for (const auto& p : model.parameters()) parameters += p.numel();
  xl::optim::AdamW optimizer(model.parameters(), 3e-3, {0.9, 0.99, 1e-8, 0.01});
  std::mt19937_64 rng(7);
  text_corpus::Batches batches(corpus, c.batch, c.context);
  const int64_t vocab = corpus.vocab();
  auto train_step = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) {
    optimizer.zero_grad();
    xl::Tensor balance;
    xl::Tensor logits = model.forward(x, balance);
    xl::Tensor cross_entropy = nn::cross_entropy(xl::reshape(logits, {-1, vocab}), y);
    (balance.defined() ? cross_entropy + kBalanceWeight * balance : cross_entropy).backward();
    xl::optim::clip_grad_norm_(model.parameters(), 1.0);
    optimizer.step();
    return cross_entropy;
  });
  std::printf("%s: %lld parameters\n", name, static_cast<long long>(parameters));
  const int64_t compiles_before = xl::metrics::counter_value("UncachedCompile");
  const int window = std::min(20, steps);
  Trained result;
  auto started = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    optimizer.set_lr(xl::optim::warmup_cosine_lr(step, 20, steps, 3e-3, 3e-4));
    auto [x, y] = batches.next(rng);
    const float loss = train_step(x, y).item<float>();
    if (!train_step.last_call().replayed && ++result.traces == kMaxTraces + 1)
      std::printf("%s step %d traced again: %s\n", name, step, train_step.last_call().trace_reason.c_str());
    if (step >= steps - window) result.loss += loss / window;
    if (step % 50 == 0 || step == steps - 1) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::printf("%s step %4d  loss %.3f  %5.1f s  traced %d times, %lld programs compiled\n", name, step, loss,
                  seconds, result.traces,
                  static_cast<long long>(xl::metrics::counter_value("UncachedCompile") - compiles_before));
      std::fflush(stdout);
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  if (steps < 1) {
    std::cerr << "usage: moe [steps >= 1]\n";
    return 2;
  }
  text_corpus::Corpus corpus = text_corpus::load_licenses();
  if (corpus.text.size() < 10000) {
    std::cerr << "moe: /usr/share/common-licenses holds too little text\n";
    return 1;
  }
  Config c;
  std::printf("moe: %zu characters, vocab %lld, %d steps of %lld x %lld tokens; %lld experts of hidden %lld, top 2\n",
              corpus.text.size(), static_cast<long long>(corpus.vocab()), steps, static_cast<long long>(c.batch),
              static_cast<long long>(c.context), static_cast<long long>(c.experts),
              static_cast<long long>(c.expert_hidden));

  bool ok = true;
  if (gmm_against_dense_loop(c) > kTolerance) {
    std::fprintf(stderr, "moe: the gmm path differs from the dense per-expert loop\n");
    ok = false;
  }

  const Trained moe = train("moe", true, c, corpus, steps);
  const Trained dense = train("dense", false, c, corpus, steps);
  std::printf("final loss (mean of the last %d steps): moe %.3f in %.1f s, dense %.3f in %.1f s; margin %.2f nats\n",
              std::min(20, steps), moe.loss, moe.seconds, dense.loss, dense.seconds, kLossMargin);
  if (moe.loss > dense.loss + kLossMargin) {
    std::fprintf(stderr, "moe: the MoE model's loss is more than %.2f nats above the dense model's\n", kLossMargin);
    ok = false;
  }
  if (moe.traces > kMaxTraces || dense.traces > kMaxTraces) {
    std::fprintf(stderr, "moe: a compiled step traced more than %d times (moe %d, dense %d)\n", kMaxTraces, moe.traces,
                 dense.traces);
    ok = false;
  }
  if (ok) std::printf("moe: all checks passed\n");
  return ok ? 0 : 1;
}
