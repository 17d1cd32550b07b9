#pragma once
// The text the character-level examples (chargpt, moe) train on: every license text a Debian machine has
// in /usr/share/common-licenses, one token per byte value that occurs, and batches of random windows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include <xlite/xlite.h>

namespace text_corpus {

struct Corpus {
  std::string text;
  std::vector<unsigned char> chars;     // the distinct bytes, sorted: token i is chars[i]
  std::map<unsigned char, int64_t> id;  // byte -> token
  std::vector<int64_t> data;            // the text as tokens
  int64_t vocab() const { return static_cast<int64_t>(chars.size()); }

  // The entropy of single-character frequencies in nats: a model must beat it to have learned anything.
  double unigram_entropy() const {
    std::vector<double> counts(chars.size(), 0);
    for (int64_t t : data) counts[t] += 1;
    double entropy = 0;
    for (double c : counts)
      if (c > 0) entropy -= c / data.size() * std::log(c / data.size());
    return entropy;
  }
};

// The files in name order, so that every run sees the same text.
inline Corpus load_licenses() {
  Corpus corpus;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/share/common-licenses"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    corpus.text.append(std::istreambuf_iterator<char>(in), {});
  }
  corpus.chars.assign(corpus.text.begin(), corpus.text.end());
  std::sort(corpus.chars.begin(), corpus.chars.end());
  corpus.chars.erase(std::unique(corpus.chars.begin(), corpus.chars.end()), corpus.chars.end());
  for (size_t i = 0; i < corpus.chars.size(); ++i) corpus.id[corpus.chars[i]] = static_cast<int64_t>(i);
  for (unsigned char c : corpus.text) corpus.data.push_back(corpus.id[c]);
  return corpus;
}

// Random windows of the text: inputs x [batch, context] and next-character targets y [batch * context].
// The caller owns the generator, so that it can draw from the same sequence for other things (sampling).
class Batches {
 public:
  Batches(const Corpus& corpus, int64_t batch, int64_t context)
      : data_(corpus.data), batch_(batch), context_(context), start_(0, corpus.data.size() - context - 2) {}

  std::pair<xlite::Tensor, xlite::Tensor> next(std::mt19937_64& rng) {
    std::vector<int64_t> x, y;
    for (int64_t b = 0; b < batch_; ++b) {
      size_t s = start_(rng);
      x.insert(x.end(), data_.begin() + s, data_.begin() + s + context_);
      y.insert(y.end(), data_.begin() + s + 1, data_.begin() + s + 1 + context_);
    }
    return {xlite::tensor(x, {batch_, context_}), xlite::tensor(y, {batch_ * context_})};
  }

 private:
  const std::vector<int64_t>& data_;
  int64_t batch_, context_;
  std::uniform_int_distribution<size_t> start_;
};

}  // namespace text_corpus
