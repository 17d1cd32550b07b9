// kernels::flash_attention against attention written in ops (scores, mask, softmax, weighted sum), and its
// gradients against autodiff of that composite and finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "test_support.h"

namespace xl = xlite;
namespace k = xlite::kernels;

namespace {

xl::Tensor Data(const xl::Shape& shape, double phase) {
  std::vector<float> v(static_cast<size_t>(xl::numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.37 + phase));
  return xl::tensor(v, shape);
}

// The composite: k and v repeated over the query heads of their group, masked scores, softmax (a row that
// sees nothing gives zeros), then the weighted sum.
xl::Tensor Composite(const xl::Tensor& q, const xl::Tensor& key, const xl::Tensor& value, bool causal, double scale,
                     const std::vector<int32_t>& q_seg = {}, const std::vector<int32_t>& kv_seg = {}) {
  const int64_t b = q.shape()[0], h = q.shape()[1], sq = q.shape()[2], d = q.shape()[3];
  const int64_t hkv = key.shape()[1], skv = key.shape()[2];
  auto repeat = [&](const xl::Tensor& t) {
    return xl::reshape(xl::expand(xl::unsqueeze(t, 2), {b, hkv, h / hkv, skv, d}), {b, h, skv, d});
  };
  xl::Tensor scores = xl::matmul(q, xl::transpose(repeat(key), 2, 3)) * scale;
  std::vector<bool> visible(static_cast<size_t>(b * sq * skv));
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < skv; ++j)
        visible[(bb * sq + i) * skv + j] =
            (!causal || j <= i + skv - sq) && (q_seg.empty() || q_seg[bb * sq + i] == kv_seg[bb * skv + j]);
  const xl::Tensor mask = xl::unsqueeze(xl::tensor(visible, {b, sq, skv}), 1);
  const xl::Tensor probabilities = xl::softmax(xl::where(mask, scores, -1e30), -1);
  return xl::matmul(xl::where(mask, probabilities, 0.0), repeat(value));
}

}  // namespace

void ExpectNear(const xl::Tensor& got, const xl::Tensor& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> a = got.to_vector<float>(), b = want.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], tolerance * (1 + std::fabs(b[i]))) << what << " at " << i;
}

struct Case {
  int64_t b, h, hkv, sq, skv, d;
  bool causal;
  bool segments;
};

const Case kCases[] = {
    {2, 4, 2, 70, 150, 16, false, false},  // grouped-query, several blocks of each
    {2, 4, 2, 70, 150, 16, true, false},   // causal aligned to the end
    {1, 3, 1, 130, 40, 8, true, false},    // multi-query; Sq > Skv: the first rows see nothing
    {2, 2, 2, 64, 64, 32, false, true},    // packed sequences
    {1, 2, 1, 33, 200, 8, true, true},
};

std::vector<int32_t> Segments(int64_t b, int64_t s, int64_t length) {
  std::vector<int32_t> ids(static_cast<size_t>(b * s));
  for (int64_t i = 0; i < b * s; ++i) ids[i] = static_cast<int32_t>((i % s) / length + i / s);
  return ids;
}

TEST(FlashAttention, MatchesTheCompositeForwardAndBackward) {
  for (const Case& c : kCases) {
    const std::string what = "B" + std::to_string(c.b) + " H" + std::to_string(c.h) + "/" + std::to_string(c.hkv) +
                             " S" + std::to_string(c.sq) + "x" + std::to_string(c.skv) + (c.causal ? " causal" : "") +
                             (c.segments ? " segments" : "");
    const xl::Tensor q = Data({c.b, c.h, c.sq, c.d}, 0.1), key = Data({c.b, c.hkv, c.skv, c.d}, 0.5),
                     value = Data({c.b, c.hkv, c.skv, c.d}, 0.9), weights = Data({c.b, c.h, c.sq, c.d}, 1.3);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
    const std::vector<int32_t> qs = c.segments ? Segments(c.b, c.sq, 24) : std::vector<int32_t>{};
    const std::vector<int32_t> ks = c.segments ? Segments(c.b, c.skv, 24 * c.skv / c.sq) : std::vector<int32_t>{};
    auto kernel = [&](const std::vector<xl::Tensor>& in) {
      const xl::Tensor out = c.segments ? k::flash_attention(in[0], in[1], in[2], c.causal, scale,
                                                             xl::tensor(qs, {c.b, c.sq}), xl::tensor(ks, {c.b, c.skv}))
                                        : k::flash_attention(in[0], in[1], in[2], c.causal, scale);
      return xl::sum(out * weights);
    };
    auto composite = [&](const std::vector<xl::Tensor>& in) {
      return xl::sum(Composite(in[0], in[1], in[2], c.causal, scale, qs, ks) * weights);
    };
    const xl::Tensor out = c.segments ? k::flash_attention(q, key, value, c.causal, scale, xl::tensor(qs, {c.b, c.sq}),
                                                           xl::tensor(ks, {c.b, c.skv}))
                                      : k::flash_attention(q, key, value, c.causal, scale);
    ExpectNear(out, Composite(q, key, value, c.causal, scale, qs, ks), 1e-5, what + " forward");
    const std::vector<xl::Tensor> got = xl::grad(kernel, {q, key, value});
    const std::vector<xl::Tensor> want = xl::grad(composite, {q, key, value});
    for (int i = 0; i < 3; ++i) ExpectNear(got[i], want[i], 1e-4, what + " gradient " + std::to_string(i));
  }
}

TEST(FlashAttention, GradientsMatchFiniteDifferences) {
  const xl::Tensor q = Data({1, 2, 5, 4}, 0.2), key = Data({1, 1, 7, 4}, 0.6), value = Data({1, 1, 7, 4}, 1.0);
  const xl::Tensor weights = Data({1, 2, 5, 4}, 1.7);
  auto loss = [&](const std::vector<xl::Tensor>& in) {
    return xl::sum(xl::tanh(k::flash_attention(in[0], in[1], in[2], true, 0.5)) * weights);
  };
  const std::vector<xl::Tensor> inputs = {q, key, value}, grads = xl::grad(loss, inputs);
  for (int which = 0; which < 3; ++which) {
    const std::vector<float> values = inputs[which].to_vector<float>(), got = grads[which].to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i) {
      auto at = [&](float delta) {
        std::vector<float> moved = values;
        moved[i] += delta;
        std::vector<xl::Tensor> in = inputs;
        in[which] = xl::tensor(moved, inputs[which].shape());
        return static_cast<double>(loss(in).item<float>());
      };
      EXPECT_NEAR(got[i], (at(1e-2f) - at(-1e-2f)) / 2e-2, 3e-3) << "input " << which << " element " << i;
    }
  }
}

TEST(FlashAttention, BadInputsAreRefusedNamingTheKernel) {
  const xl::Tensor q = Data({1, 3, 4, 8}, 0), kv = Data({1, 2, 4, 8}, 0);
  EXPECT_NE(xlite_test::ErrorMessage([&] { k::flash_attention(q, kv, kv); }).find("[flash_attention] q's 3 heads"),
            std::string::npos);
  EXPECT_NE(xlite_test::ErrorMessage([&] {
              k::flash_attention(q, q, q, false, 1.0, xl::tensor(std::vector<int32_t>{1}));
            }).find("give both"),
            std::string::npos);
}
