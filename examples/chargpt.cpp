// A character-level GPT trained on the license texts every Debian machine has, with AdamW, through
// compile(step): one fused program per training step. Prints loss, tokens/s and the compile counters,
// then generates text for a batch of prompts twice: without a cache (the whole window through the model for
// every token) and token by token through one compiled decode step over a paged KV cache
// (kernels::paged_attention). Usage: chargpt [steps] (default 300). Fails (exit 1) if the loss did not fall
// half a nat below the unigram entropy, which 300 steps do by far, if the two generations differ in one token,
// or if the decode step compiled more than once.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "text_corpus.h"

namespace xl = xlite;
namespace nn = xlite::nn;

namespace {
struct Config {
  int64_t layers = 4, heads = 4, d_model = 128, context = 64, batch = 16;
};

// Generation: prompts of the same length from the corpus, continued up to the context, the last position
// the position embedding knows, so that both paths see each token at the same position.
constexpr int64_t kPrompts = 4, kPromptLength = 16;
constexpr int64_t kPageSize = 8, kSparePages = 5, kPagesPerComputeBlock = 4;
constexpr uint64_t kSampleSeed = 2024;
constexpr double kTemperature = 0.8;

// A paged KV cache as serving systems keep one: the pages of all sequences in one pool per layer, and a
// table of which pages hold each sequence's tokens.
struct PagedCache {
  std::vector<xl::Tensor> k_pages, v_pages;  // per layer, f32 [heads, total_pages, page_size, head_dim]
  xl::Tensor page_indices;                   // i32 [B, pages_per_sequence]
};

class Block : public nn::UnaryModule {
 public:
  explicit Block(const Config& c) {
    ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(c.d_model));
    attention = register_module("attention", std::make_shared<nn::CausalSelfAttention>(c.d_model, c.heads));
    ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(c.d_model));
    mlp = register_module("mlp", std::make_shared<nn::MLP>(c.d_model, 4 * c.d_model));
  }
  xl::Tensor forward(const xl::Tensor& x) override {
    xl::Tensor h = x + attention->forward(ln1->forward(x));
    return h + mlp->forward(ln2->forward(h));
  }
  // One new token per sequence, x [B, d_model]: its key and value join the cache at slot lengths[b], and
  // its query attends over the sequence's lengths[b] + 1 cached tokens, which the causal mask of forward
  // lets it see.
  xl::Tensor decode(const xl::Tensor& x, xl::Tensor& k_pages, xl::Tensor& v_pages, const xl::Tensor& lengths,
                    const xl::Tensor& page_indices) {
    const int64_t b = x.shape()[0], d = x.shape()[1], head_dim = d / attention->heads;
    auto parts = xl::split(attention->qkv->forward(ln1->forward(x)), d, -1);
    auto per_head = [&](const xl::Tensor& p) { return xl::reshape(p, {b, attention->heads, head_dim}); };
    xl::kernels::paged_kv_append_(k_pages, v_pages, per_head(parts[1]), per_head(parts[2]), lengths, page_indices);
    xl::Tensor y = xl::kernels::paged_attention(per_head(parts[0]), k_pages, v_pages, lengths + 1, page_indices,
                                                kPagesPerComputeBlock, 1.0 / std::sqrt(static_cast<double>(head_dim)));
    xl::Tensor h = x + attention->proj->forward(xl::reshape(y, {b, d}));
    return h + mlp->forward(ln2->forward(h));
  }

 private:
  std::shared_ptr<nn::LayerNorm> ln1, ln2;
  std::shared_ptr<nn::CausalSelfAttention> attention;
  std::shared_ptr<nn::MLP> mlp;
};

class CharGPT : public nn::Module {
 public:
  CharGPT(const Config& c, int64_t vocab) : config(c) {
    tokens = register_module("tokens", std::make_shared<nn::Embedding>(vocab, c.d_model));
    positions = register_module("positions", std::make_shared<nn::Embedding>(c.context, c.d_model));
    for (int64_t i = 0; i < c.layers; ++i)
      blocks.push_back(register_module("block" + std::to_string(i), std::make_shared<Block>(c)));
    final_norm = register_module("final_norm", std::make_shared<nn::LayerNorm>(c.d_model));
    head = register_module("head", std::make_shared<nn::Linear>(c.d_model, vocab));
    // Small initial embeddings keep the first logits near uniform.
    xl::NoGradGuard no_grad;
    tokens->weight.mul_(0.1);
    positions->weight.mul_(0.1);
  }
  // idx [B, T] -> logits [B, T, vocab]
  xl::Tensor forward(const xl::Tensor& idx) {
    xl::Tensor x = tokens->forward(idx) + positions->forward(xl::arange(0, idx.shape()[1]));
    for (auto& block : blocks) x = block->forward(x);
    return head->forward(final_norm->forward(x));
  }
  // ids [B], each sequence's next token, at position lengths[b] (i32 [B], the tokens cached before it)
  // -> logits [B, vocab]. The position is a tensor, not a host int, so that one compiled step serves them all.
  xl::Tensor decode(const xl::Tensor& ids, PagedCache& cache, const xl::Tensor& lengths) {
    xl::Tensor x = tokens->forward(ids) + positions->forward(lengths.to(xl::DType::i64));
    for (size_t l = 0; l < blocks.size(); ++l)
      x = blocks[l]->decode(x, cache.k_pages[l], cache.v_pages[l], lengths, cache.page_indices);
    return head->forward(final_norm->forward(x));
  }
  Config config;

 private:
  std::shared_ptr<nn::Embedding> tokens, positions;
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<nn::LayerNorm> final_norm;
  std::shared_ptr<nn::Linear> head;
};

using Sequences = std::vector<std::vector<int64_t>>;  // tokens, one vector per sequence

// Prompts from spread-out places in the text, each starting at the first word of a line.
Sequences corpus_prompts(const text_corpus::Corpus& corpus) {
  Sequences prompts;
  for (int64_t b = 0; b < kPrompts; ++b) {
    size_t start = corpus.text.find('\n', corpus.text.size() * (2 * b + 1) / (2 * kPrompts));
    start = corpus.text.find_first_not_of(" \t\n", start);
    prompts.emplace_back(corpus.data.begin() + start, corpus.data.begin() + start + kPromptLength);
  }
  return prompts;
}

// One token drawn from softmax(logits / temperature), on the host, so that both generations draw alike.
int64_t sample(const float* logits, int64_t vocab, std::mt19937_64& rng) {
  const float top = *std::max_element(logits, logits + vocab);
  std::vector<double> weights(vocab);
  for (int64_t i = 0; i < vocab; ++i) weights[i] = std::exp((logits[i] - top) / kTemperature);
  std::discrete_distribution<int64_t> pick(weights.begin(), weights.end());
  return pick(rng);
}

struct Generation {
  Sequences sequences;
  double tokens_per_second = 0;  // once compiled: calls after the tracing ones
  int traced_late = 0;           // calls after the first two that traced instead of replaying
  int64_t compiles = 0;          // programs compiled during the generation
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Without a cache: every token runs the whole window through the model. The window is right-padded, not
// left-padded, so that each token keeps its position; the causal mask keeps the padding out of the logits
// read, and one program of shape [B, context] serves every step.
Generation generate_uncached(CharGPT& model, Sequences sequences, int64_t vocab) {
  const int64_t batch = static_cast<int64_t>(sequences.size()), context = model.config.context;
  std::mt19937_64 rng(kSampleSeed);
  Generation result;
  auto started = std::chrono::steady_clock::now();
  for (int64_t length = kPromptLength; length < context; ++length) {
    if (length == kPromptLength + 1) started = std::chrono::steady_clock::now();  // after the compile
    std::vector<int64_t> window(batch * context, 0);
    for (int64_t b = 0; b < batch; ++b)
      std::copy(sequences[b].begin(), sequences[b].end(), window.begin() + b * context);
    const std::vector<float> logits = model.forward(xl::tensor(window, {batch, context})).to_vector<float>();
    for (int64_t b = 0; b < batch; ++b)
      sequences[b].push_back(sample(logits.data() + (b * context + length - 1) * vocab, vocab, rng));
  }
  result.tokens_per_second = batch * (context - kPromptLength - 1) / seconds_since(started);
  result.sequences = std::move(sequences);
  return result;
}

// Each sequence gets pages_per_sequence pages of a pool with a few spare ones, in shuffled order, so that
// no sequence's tokens lie in consecutive pages: the page table is what finds them.
PagedCache make_cache(const Config& c, int64_t batch) {
  const int64_t pages_per_sequence = c.context / kPageSize, total_pages = batch * pages_per_sequence + kSparePages;
  std::vector<int32_t> pages(total_pages);
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937 rng(5);
  std::shuffle(pages.begin(), pages.end(), rng);
  pages.resize(batch * pages_per_sequence);
  PagedCache cache;
  cache.page_indices = xl::tensor(pages, {batch, pages_per_sequence});
  // From host data, not xl::zeros: equal pending tensors synced together come back sharing one buffer,
  // and the compiled step would then trace a third time once its updates had split them.
  const xl::Shape shape = {c.heads, total_pages, kPageSize, c.d_model / c.heads};
  const std::vector<float> empty(static_cast<size_t>(xl::numel(shape)), 0.0f);
  for (int64_t l = 0; l < c.layers; ++l) {
    cache.k_pages.push_back(xl::tensor(empty, shape));
    cache.v_pages.push_back(xl::tensor(empty, shape));
  }
  return cache;
}

// With the paged cache: the prompt goes in token by token through the same decode step as the generated
// tokens, one compiled program for every call.
Generation generate_paged(CharGPT& model, Sequences sequences, int64_t vocab) {
  const int64_t batch = static_cast<int64_t>(sequences.size()), context = model.config.context;
  PagedCache cache = make_cache(model.config, batch);
  auto step =
      xl::compile([&](const xl::Tensor& ids, const xl::Tensor& lengths) { return model.decode(ids, cache, lengths); });
  std::mt19937_64 rng(kSampleSeed);
  Generation result;
  const int64_t compiles_before = xl::metrics::counter_value("UncachedCompile");
  auto started = std::chrono::steady_clock::now();
  for (int64_t position = 0; position + 1 < context; ++position) {
    if (position == 2) started = std::chrono::steady_clock::now();  // after the two tracing calls
    std::vector<int64_t> ids;
    for (const auto& tokens : sequences) ids.push_back(tokens[position]);
    const std::vector<float> logits =
        step(xl::tensor(ids, {batch}), xl::tensor(std::vector<int32_t>(batch, static_cast<int32_t>(position)), {batch}))
            .to_vector<float>();
    if (position >= 2 && !step.last_call().replayed) {
      if (++result.traced_late == 1)
        std::printf("decode step traced again at position %lld: %s\n", static_cast<long long>(position),
                    step.last_call().trace_reason.c_str());
    }
    if (position + 1 < kPromptLength) continue;  // still reading the prompt
    for (int64_t b = 0; b < batch; ++b) sequences[b].push_back(sample(logits.data() + b * vocab, vocab, rng));
  }
  result.tokens_per_second = batch * (context - 3) / seconds_since(started);
  result.compiles = xl::metrics::counter_value("UncachedCompile") - compiles_before;
  result.sequences = std::move(sequences);
  return result;
}

std::string text_of(const text_corpus::Corpus& corpus, const std::vector<int64_t>& tokens, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < end; ++i) text.push_back(static_cast<char>(corpus.chars[tokens[i]]));
  return text;
}

// Generates with and without the cache and checks that they agree token for token and that the decode step
// compiled once. Returns whether both held.
bool paged_generation(CharGPT& model, const text_corpus::Corpus& corpus) {
  xl::NoGradGuard no_grad;
  model.eval();
  const Sequences prompts = corpus_prompts(corpus);
  const Generation uncached = generate_uncached(model, prompts, corpus.vocab());
  const Generation paged = generate_paged(model, prompts, corpus.vocab());
  bool ok = true;
  for (size_t b = 0; b < prompts.size(); ++b) {
    const auto& want = uncached.sequences[b];
    const auto& got = paged.sequences[b];
    const auto differ = std::mismatch(want.begin(), want.end(), got.begin(), got.end());
    if (differ.first != want.end() || differ.second != got.end()) {
      const size_t at = differ.first - want.begin();
      std::fprintf(stderr, "chargpt: sequence %zu: the paged generation differs from the uncached one at token %zu\n",
                   b, at);
      std::fprintf(stderr, "  uncached: %s\n  paged:    %s\n", text_of(corpus, want, 0, want.size()).c_str(),
                   text_of(corpus, got, 0, got.size()).c_str());
      ok = false;
    }
  }
  // What "compiled once" means: the first two calls trace (compile(fn) replays only once two traces agree),
  // and every later call replays; the first trace compiles the one program for batch shape [B] and the
  // second finds it in the executable cache, so the generation compiles at most one program.
  if (paged.traced_late > 0 || paged.compiles > 1) {
    std::fprintf(stderr,
                 "chargpt: the decode step traced %d times after its first two calls and compiled %lld programs\n",
                 paged.traced_late, static_cast<long long>(paged.compiles));
    ok = false;
  }
  const int64_t generated = model.config.context - kPromptLength;
  if (ok)
    std::printf(
        "paged generation: %lld tokens x %zu sequences identical to uncached generation, decode step compiled once, "
        "%.0f tokens/s (uncached: %.0f tokens/s)\n",
        static_cast<long long>(generated), prompts.size(), paged.tokens_per_second, uncached.tokens_per_second);
  const auto& first = paged.sequences[0];
  std::printf("sample:\n[%s]%s\n", text_of(corpus, first, 0, kPromptLength).c_str(),
              text_of(corpus, first, kPromptLength, first.size()).c_str());
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  text_corpus::Corpus corpus = text_corpus::load_licenses();
  if (corpus.text.size() < 10000) {
    std::cerr << "chargpt: /usr/share/common-licenses holds too little text\n";
    return 1;
  }
  const int64_t vocab = corpus.vocab();
  const double unigram = corpus.unigram_entropy();

  Config config;
  xl::manual_seed(1234);
  CharGPT model(config, vocab);
  int64_t parameters = 0;
  for (const auto& p : model.parameters()) parameters += p.numel();
  xl::optim::AdamW optimizer(model.parameters(), 3e-3, {0.9, 0.99, 1e-8, 0.01});
  std::printf("chargpt: %zu characters, vocab %lld, %lld parameters, %d steps of %lld x %lld tokens\n",
              corpus.text.size(), static_cast<long long>(vocab), static_cast<long long>(parameters), steps,
              static_cast<long long>(config.batch), static_cast<long long>(config.context));
  std::printf("unigram entropy: %.3f nats per character\n", unigram);

  std::mt19937_64 rng(7);
  text_corpus::Batches batches(corpus, config.batch, config.context);

  auto train_step = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) {
    optimizer.zero_grad();
    xl::Tensor logits = model.forward(x);
    xl::Tensor loss = nn::cross_entropy(xl::reshape(logits, {-1, vocab}), y);
    loss.backward();
    xl::optim::clip_grad_norm_(model.parameters(), 1.0);
    optimizer.step();
    return loss;
  });

  auto started = std::chrono::steady_clock::now();
  float loss_value = 0, smoothed = 0;
  for (int step = 0; step < steps; ++step) {
    optimizer.set_lr(xl::optim::warmup_cosine_lr(step, 20, steps, 3e-3, 3e-4));
    auto [x, y] = batches.next(rng);
    loss_value = train_step(x, y).item<float>();
    smoothed = step == 0 ? loss_value : 0.9f * smoothed + 0.1f * loss_value;
    if (step == 0) {  // what bench/persistent_cache.sh compares, cold against warm (XLITE_CACHE_DIR)
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
      std::printf(
          "first step: %.1f ms, compiling %.1f ms so far (set-up included); persistent cache: %lld kernels "
          "loaded, %lld compiled\n",
          ms, xl::metrics::metric_data("CompileTime").total * 1e-6,
          static_cast<long long>(xl::metrics::counter_value("PersistentCacheHit")),
          static_cast<long long>(xl::metrics::counter_value("PersistentCacheMiss")));
    }
    if (step % 25 == 0 || step == steps - 1) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::printf("step %4d  loss %.3f (avg %.3f)  %.0f tokens/s  compiles: %lld new, %lld cached\n", step, loss_value,
                  smoothed, (step + 1) * config.batch * config.context / seconds,
                  static_cast<long long>(xl::metrics::counter_value("UncachedCompile")),
                  static_cast<long long>(xl::metrics::counter_value("CachedCompile")));
      std::fflush(stdout);
    }
  }
  const bool learned = smoothed < unigram - 0.5;
  std::printf("final loss %.3f nats vs unigram entropy %.3f: %s\n", smoothed, unigram,
              learned ? "learned well beyond character frequencies" : "not yet below the unigram entropy");

  const bool generated = paged_generation(model, corpus);
  if (!learned) std::fprintf(stderr, "chargpt: the loss is not half a nat below the unigram entropy\n");
  return learned && generated ? 0 : 1;
}
