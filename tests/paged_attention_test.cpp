// kernels::paged_attention against attention computed on the host over each sequence's own tokens, and
// kernels::paged_kv_append_: the rows land in their slots, in the cache's own buffer when it is donated,
// and bad lengths or page indices raise without touching the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "tensor/tensor_impl.h"
#include "test_support.h"

namespace xl = xlite;
namespace k = xlite::kernels;

namespace {

struct Cache {
  int64_t kv_heads, total_pages, page_size, d;
  std::vector<float> k, v;  // [Hkv, total_pages, page_size, D]
  xl::Shape shape() const { return {kv_heads, total_pages, page_size, d}; }
  const float* row(const std::vector<float>& pages, int64_t hk, int64_t page, int64_t slot) const {
    return pages.data() + ((hk * total_pages + page) * page_size + slot) * d;
  }
};

Cache RandomCache(int64_t kv_heads, int64_t total_pages, int64_t page_size, int64_t d, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  Cache cache{kv_heads, total_pages, page_size, d, {}, {}};
  cache.k.resize(static_cast<size_t>(kv_heads * total_pages * page_size * d));
  cache.v.resize(cache.k.size());
  for (float& x : cache.k) x = normal(rng);
  for (float& x : cache.v) x = normal(rng);
  return cache;
}

// Each sequence's pages: distinct pages of the cache in a shuffled order.
std::vector<int32_t> ShuffledPages(int64_t batch, int64_t pages_per_seq, int64_t total_pages, std::mt19937& rng) {
  std::vector<int32_t> all(static_cast<size_t>(total_pages));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  return {all.begin(), all.begin() + batch * pages_per_seq};
}

// softmax(q k^T * scale) v over sequence b's first lengths[b] tokens, in double.
std::vector<float> HostAttention(const std::vector<float>& q, int64_t heads, const Cache& cache,
                                 const std::vector<int32_t>& lengths, const std::vector<int32_t>& pages,
                                 int64_t pages_per_seq, double scale) {
  const int64_t batch = static_cast<int64_t>(lengths.size()), d = cache.d, group = heads / cache.kv_heads;
  std::vector<float> out(static_cast<size_t>(batch * heads * d), 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const float* qh = q.data() + (b * heads + h) * d;
      std::vector<double> scores;
      std::vector<const float*> values;
      for (int64_t t = 0; t < lengths[b]; ++t) {
        const int64_t page = pages[b * pages_per_seq + t / cache.page_size], slot = t % cache.page_size;
        const float* key = cache.row(cache.k, h / group, page, slot);
        double s = 0;
        for (int64_t j = 0; j < d; ++j) s += double{qh[j]} * key[j];
        scores.push_back(s * scale);
        values.push_back(cache.row(cache.v, h / group, page, slot));
      }
      if (scores.empty()) continue;
      const double top = *std::max_element(scores.begin(), scores.end());
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - top));
      for (size_t t = 0; t < scores.size(); ++t)
        for (int64_t j = 0; j < d; ++j)
          out[(b * heads + h) * d + j] += static_cast<float>(scores[t] / total * values[t][j]);
    }
  return out;
}

xl::Tensor Ints(const std::vector<int32_t>& v, const xl::Shape& shape) { return xl::tensor(v, shape); }

const void* Storage(const xl::Tensor& t) { return t.impl()->data()->data(); }

TEST(PagedAttention, MatchesAttentionOverEachSequencesOwnTokens) {
  std::mt19937 rng(7);
  const int64_t batch = 4, heads = 8, kv_heads = 2, page_size = 16, d = 40, pages_per_seq = 5, total_pages = 23;
  const Cache cache = RandomCache(kv_heads, total_pages, page_size, d, rng);
  const std::vector<int32_t> pages = ShuffledPages(batch, pages_per_seq, total_pages, rng);
  // An empty sequence, one shorter than a page, one ending inside a page and a full one.
  const std::vector<int32_t> lengths = {0, 7, 37, 80};
  std::vector<float> q(static_cast<size_t>(batch * heads * d));
  std::normal_distribution<float> normal;
  for (float& x : q) x = normal(rng);
  const double scale = 1 / std::sqrt(40.0);
  const std::vector<float> want = HostAttention(q, heads, cache, lengths, pages, pages_per_seq, scale);
  const xl::Tensor kp = xl::tensor(cache.k, cache.shape()), vp = xl::tensor(cache.v, cache.shape());
  for (int64_t block : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{8}, int64_t{1} << 60}) {
    const std::vector<float> got = k::paged_attention(xl::tensor(q, {batch, heads, d}), kp, vp, Ints(lengths, {batch}),
                                                      Ints(pages, {batch, pages_per_seq}), block, scale)
                                       .to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 2e-5 * (1 + std::fabs(want[i])))
          << "pages_per_compute_block " << block << " at " << i;
  }
}

TEST(PagedAttention, BadPagesAndLengthsRaiseNamingTheKernelAndTheRuntimeGoesOn) {
  const xl::Tensor q = xl::zeros({2, 4, 8}), pages = xl::zeros({2, 6, 4, 8});
  const xl::Tensor table = Ints({0, 1, 2, 3, 4, 5}, {2, 3});
  auto run = [&](const std::vector<int32_t>& lengths, const xl::Tensor& page_indices) {
    return xlite_test::ErrorMessage(
        [&] { k::paged_attention(q, pages, pages, Ints(lengths, {2}), page_indices, 2).to_vector<float>(); });
  };
  EXPECT_EQ(run({3, 13}, table),
            "[paged_attention_check] sequence 1 has length 13, outside [0, 12], what its 3 pages of 4 hold");
  EXPECT_EQ(run({-1, 2}, table),
            "[paged_attention_check] sequence 0 has length -1, outside [0, 12], what its 3 pages of 4 hold");
  EXPECT_EQ(run({9, 2}, Ints({0, 1, 6, 3, 4, 5}, {2, 3})),
            "[paged_attention_check] page_indices[0, 2] = 6 is outside the 6 pages");
  EXPECT_EQ(run({8, 2}, Ints({0, 1, 6, 3, 4, -5}, {2, 3})), "no exception") << "pages past a length are never read";
  EXPECT_NE(xlite_test::ErrorMessage([&] {
              k::paged_attention(xl::zeros({2, 3, 8}), pages, pages, Ints({1, 1}, {2}), table);
            }).find("[paged_attention] q's 3 heads are not a multiple of the pages' 2 kv heads"),
            std::string::npos);
  xl::Tensor k_pages = pages, v_pages = xl::zeros({2, 5, 4, 8});
  EXPECT_NE(xlite_test::ErrorMessage([&] {
              k::paged_kv_append_(k_pages, v_pages, xl::zeros({2, 2, 8}), xl::zeros({2, 2, 8}), Ints({0, 0}, {2}),
                                  table);
            }).find("[paged_kv_append_] k_pages and v_pages, and k and v, must have one type each"),
            std::string::npos);
  EXPECT_NE(xlite_test::ErrorMessage([&] {
              k::paged_attention(q, pages, pages, Ints({1, 1}, {2}), table, 0);
            }).find("pages_per_compute_block must be at least 1"),
            std::string::npos);
}

// Decoding token by token: each step appends its rows and attends over the cache, and the cache is
// written in place (its buffer never changes) when the step is replayed or synced.
TEST(PagedAttention, AppendWritesEachTokenInPlaceAndAttentionSeesIt) {
  std::mt19937 rng(11);
  const int64_t batch = 2, heads = 4, kv_heads = 2, page_size = 4, d = 8, pages_per_seq = 3, total_pages = 6;
  Cache cache = RandomCache(kv_heads, total_pages, page_size, d, rng);
  const std::vector<int32_t> pages = ShuffledPages(batch, pages_per_seq, total_pages, rng);
  std::vector<int32_t> lengths = {0, 5};
  xl::Tensor kp = xl::tensor(cache.k, cache.shape()), vp = xl::tensor(cache.v, cache.shape());
  const xl::Tensor page_indices = Ints(pages, {batch, pages_per_seq});
  auto decode =
      xl::compile([&](const xl::Tensor& q, const xl::Tensor& kn, const xl::Tensor& vn, const xl::Tensor& length) {
        k::paged_kv_append_(kp, vp, kn, vn, length, page_indices);
        return k::paged_attention(q, kp, vp, length + 1, page_indices, 2, 0.5);
      });
  const void* k_storage = nullptr;
  std::normal_distribution<float> normal;
  for (int step = 0; step < 5; ++step) {
    std::vector<float> q(static_cast<size_t>(batch * heads * d)), kn(static_cast<size_t>(batch * kv_heads * d)),
        vn(kn.size());
    for (float& x : q) x = normal(rng);
    for (float& x : kn) x = normal(rng);
    for (float& x : vn) x = normal(rng);
    const std::vector<float> got = decode(xl::tensor(q, {batch, heads, d}), xl::tensor(kn, {batch, kv_heads, d}),
                                          xl::tensor(vn, {batch, kv_heads, d}), Ints(lengths, {batch}))
                                       .to_vector<float>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t hk = 0; hk < kv_heads; ++hk) {
        const int64_t t = lengths[b], page = pages[b * pages_per_seq + t / page_size];
        float* key = const_cast<float*>(cache.row(cache.k, hk, page, t % page_size));
        float* value = const_cast<float*>(cache.row(cache.v, hk, page, t % page_size));
        std::copy_n(kn.data() + (b * kv_heads + hk) * d, d, key);
        std::copy_n(vn.data() + (b * kv_heads + hk) * d, d, value);
      }
    for (int32_t& length : lengths) ++length;
    const std::vector<float> want = HostAttention(q, heads, cache, lengths, pages, pages_per_seq, 0.5);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5 * (1 + std::fabs(want[i]))) << step;
    EXPECT_EQ(kp.to_vector<float>(), cache.k) << "step " << step;
    EXPECT_EQ(vp.to_vector<float>(), cache.v) << "step " << step;
    // The first two calls trace; from then on the compiled step replays and writes into the cache.
    if (step > 2) {
      EXPECT_EQ(Storage(kp), k_storage) << "step " << step << ": the cache was copied, not updated in place";
    }
    k_storage = Storage(kp);
  }
  EXPECT_TRUE(decode.last_call().replayed) << decode.last_call().trace_reason;

  // Sequence 1 now holds 10 of its 12 slots; appending three more fails on the third, naming the kernel,
  // and leaves the cache as it was.
  k_storage = Storage(kp);
  for (int more = 0; more < 2; ++more) {
    k::paged_kv_append_(kp, vp, xl::zeros({batch, kv_heads, d}), xl::zeros({batch, kv_heads, d}),
                        Ints({0, lengths[1] + more}, {batch}), page_indices);
    xl::sync({kp, vp});
    EXPECT_EQ(Storage(kp), k_storage) << "a synced in-place update writes into the cache's own buffer";
  }
  // The cache's buffer, read directly after the failure: the failed step leaves kp pending on it.
  const std::vector<float> before = kp.to_vector<float>();
  const float* raw = static_cast<const float*>(Storage(kp));
  EXPECT_EQ(xlite_test::ErrorMessage([&] {
              k::paged_kv_append_(kp, vp, xl::ones({batch, kv_heads, d}), xl::ones({batch, kv_heads, d}),
                                  Ints({0, 12}, {batch}), page_indices);
              xl::sync({kp, vp});
            }),
            "[paged_kv_append_check] sequence 1 has length 12 and no free slot in its 3 pages of 4");
  EXPECT_EQ(std::vector<float>(raw, raw + before.size()), before);
}

}  // namespace
