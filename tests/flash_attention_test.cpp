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
  int64_t segment_length = 24;  // of the queries; keys are split into as many segments
};

const Case kCases[] = {
    {2, 4, 2, 70, 150, 16, false, false},  // grouped-query, several blocks of each
    {2, 4, 2, 70, 150, 16, true, false},   // causal aligned to the end
    {1, 3, 1, 130, 40, 8, true, false},    // multi-query; Sq > Skv: the first rows see nothing
    {2, 2, 2, 64, 64, 32, false, true},    // packed sequences
    {1, 2, 1, 33, 200, 8, true, true},
    // Several blocks of keys (online softmax across them), a ragged last block, and blocks that the masks
    // leave wholly visible (the fast path) beside partial ones.
    {1, 2, 2, 65, 520, 8, false, false},
    {1, 2, 1, 100, 600, 16, true, true},
    {1, 2, 1, 300, 600, 8, false, true, 150},
};

std::vector<int32_t> Segments(int64_t b, int64_t s, int64_t length) {
  std::vector<int32_t> ids(static_cast<size_t>(b * s));
  for (int64_t i = 0; i < b * s; ++i) ids[i] = static_cast<int32_t>((i % s) / length + i / s);
  return ids;
}

// The kernel in `dtype` against the composite in f32 on the same (rounded) inputs, forward and gradients.
void CheckAgainstTheComposite(const Case& c, xl::DType dtype, double forward_tolerance, double gradient_tolerance) {
  const std::string what = std::string(xl::dtype_name(dtype)) + " B" + std::to_string(c.b) + " H" +
                           std::to_string(c.h) + "/" + std::to_string(c.hkv) + " S" + std::to_string(c.sq) + "x" +
                           std::to_string(c.skv) + (c.causal ? " causal" : "") + (c.segments ? " segments" : "");
  const xl::Tensor q = Data({c.b, c.h, c.sq, c.d}, 0.1).to(dtype), key = Data({c.b, c.hkv, c.skv, c.d}, 0.5).to(dtype),
                   value = Data({c.b, c.hkv, c.skv, c.d}, 0.9).to(dtype), weights = Data({c.b, c.h, c.sq, c.d}, 1.3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const std::vector<int32_t> qs = c.segments ? Segments(c.b, c.sq, c.segment_length) : std::vector<int32_t>{};
  const std::vector<int32_t> ks =
      c.segments ? Segments(c.b, c.skv, c.segment_length * c.skv / c.sq) : std::vector<int32_t>{};
  auto attention = [&](const std::vector<xl::Tensor>& in) {
    return c.segments ? k::flash_attention(in[0], in[1], in[2], c.causal, scale, xl::tensor(qs, {c.b, c.sq}),
                                           xl::tensor(ks, {c.b, c.skv}))
                      : k::flash_attention(in[0], in[1], in[2], c.causal, scale);
  };
  auto kernel = [&](const std::vector<xl::Tensor>& in) { return xl::sum(attention(in).to(xl::DType::f32) * weights); };
  auto composite = [&](const std::vector<xl::Tensor>& in) {
    return xl::sum(Composite(in[0], in[1], in[2], c.causal, scale, qs, ks) * weights);
  };
  const std::vector<xl::Tensor> wide = {q.to(xl::DType::f32), key.to(xl::DType::f32), value.to(xl::DType::f32)};
  const xl::Tensor out = attention({q, key, value});
  EXPECT_EQ(out.dtype(), dtype) << what;
  ExpectNear(out.to(xl::DType::f32), Composite(wide[0], wide[1], wide[2], c.causal, scale, qs, ks), forward_tolerance,
             what + " forward");
  const std::vector<xl::Tensor> got = xl::grad(kernel, {q, key, value});
  const std::vector<xl::Tensor> want = xl::grad(composite, wide);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].dtype(), dtype) << what;
    ExpectNear(got[i].to(xl::DType::f32), want[i], gradient_tolerance, what + " gradient " + std::to_string(i));
  }
}

TEST(FlashAttention, MatchesTheCompositeForwardAndBackward) {
  for (const Case& c : kCases) CheckAgainstTheComposite(c, xl::DType::f32, 1e-5, 1e-4);
}

// bf16 runs bf16 tile products (the probabilities rounded to bf16) accumulating in f32, as PyTorch's CPU
// kernel: within bf16's rounding of the composite in f32, on every masking case and ragged block.
TEST(FlashAttention, Bf16MatchesTheCompositeWithinItsRounding) {
  for (const Case& c : kCases) CheckAgainstTheComposite(c, xl::DType::bf16, 1e-2, 1e-2);
}

// In f64, central differences are accurate to about 1e-10 here, so the gradients are checked tightly:
// causal, grouped-query, several blocks of keys, through a tanh so that the gradient is not linear.
TEST(FlashAttention, GradientsMatchFiniteDifferencesInF64) {
  auto f64 = [](const xl::Shape& shape, double phase) { return Data(shape, phase).to(xl::DType::f64); };
  const xl::Tensor q = f64({1, 2, 5, 4}, 0.2), key = f64({1, 1, 300, 4}, 0.6), value = f64({1, 1, 300, 4}, 1.0);
  const xl::Tensor weights = f64({1, 2, 5, 4}, 1.7);
  auto loss = [&](const std::vector<xl::Tensor>& in) {
    return xl::sum(xl::tanh(k::flash_attention(in[0], in[1], in[2], true, 0.5)) * weights);
  };
  const std::vector<xl::Tensor> inputs = {q, key, value}, grads = xl::grad(loss, inputs);
  for (int which = 0; which < 3; ++which) {
    EXPECT_EQ(grads[which].dtype(), xl::DType::f64);
    const std::vector<double> values = inputs[which].to_vector<double>(), got = grads[which].to_vector<double>();
    for (size_t i = 0; i < values.size(); i += which == 0 ? 1 : 37) {  // every q, a sample of k and v
      auto at = [&](double delta) {
        std::vector<double> moved = values;
        moved[i] += delta;
        std::vector<xl::Tensor> in = inputs;
        in[which] = xl::tensor(moved, inputs[which].shape());
        return loss(in).item<double>();
      };
      EXPECT_NEAR(got[i], (at(1e-6) - at(-1e-6)) / 2e-6, 1e-8) << "input " << which << " element " << i;
    }
  }
  // And the forward against the composite in f64.
  const xl::Tensor out = k::flash_attention(q, key, value, true, 0.5);
  const std::vector<double> a = out.to_vector<double>(), b = Composite(q, key, value, true, 0.5).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-12) << i;
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

// f16 runs through the f32 kernel; bf16 keeps its log-sum-exp and gradients' sums in f32.
TEST(FlashAttention, HalfPrecisionKeepsItsStatisticsInF32) {
  const xl::Tensor q = Data({1, 2, 40, 16}, 0.1), key = Data({1, 1, 300, 16}, 0.5), value = Data({1, 1, 300, 16}, 0.9);
  const xl::Tensor qh = q.to(xl::DType::f16), kh = key.to(xl::DType::f16), vh = value.to(xl::DType::f16);
  const xl::Tensor out = k::flash_attention(qh, kh, vh, true, 0.25);
  EXPECT_EQ(out.dtype(), xl::DType::f16);
  // The same kernel on the rounded inputs in f32, rounded once at the end.
  const xl::Tensor want =
      k::flash_attention(qh.to(xl::DType::f32), kh.to(xl::DType::f32), vh.to(xl::DType::f32), true, 0.25)
          .to(xl::DType::f16);
  EXPECT_EQ(out.to(xl::DType::f32).to_vector<float>(), want.to(xl::DType::f32).to_vector<float>());
  ExpectNear(out.to(xl::DType::f32), Composite(q, key, value, true, 0.25), 4e-3, "f16 against f32");
  const std::vector<xl::Tensor> grads = xl::grad(
      [&](const std::vector<xl::Tensor>& in) {
        return xl::sum(k::flash_attention(in[0], in[1], in[2], true, 0.25).to(xl::DType::f32));
      },
      {qh, kh, vh});
  for (const xl::Tensor& g : grads) EXPECT_EQ(g.dtype(), xl::DType::f16);

  const std::vector<xl::Tensor> bf16 = {q.to(xl::DType::bf16), key.to(xl::DType::bf16), value.to(xl::DType::bf16)};
  const std::vector<xl::Tensor> outputs =
      k::call("flash_attention", bf16, {{"causal", int64_t{1}}, {"sm_scale", 0.25}, {"segments", int64_t{0}}});
  EXPECT_EQ(outputs[0].dtype(), xl::DType::bf16);
  EXPECT_EQ(outputs[1].dtype(), xl::DType::f32) << "the log-sum-exp";
  // bf16's lse is f32's to within the rounding of the inputs, not rounded to bf16's 8 bits.
  const std::vector<xl::Tensor> wide =
      k::call("flash_attention", {bf16[0].to(xl::DType::f32), bf16[1].to(xl::DType::f32), bf16[2].to(xl::DType::f32)},
              {{"causal", int64_t{1}}, {"sm_scale", 0.25}, {"segments", int64_t{0}}});
  ExpectNear(outputs[1], wide[1], 1e-5, "bf16's log-sum-exp");
  const std::vector<xl::Tensor> backward =
      k::call("flash_attention_backward", {bf16[0], bf16[1], bf16[2], outputs[0], outputs[1], outputs[0]},
              {{"causal", int64_t{1}}, {"sm_scale", 0.25}, {"segments", int64_t{0}}});
  for (const xl::Tensor& g : backward) EXPECT_EQ(g.dtype(), xl::DType::f32) << "bf16's backward sums";
  EXPECT_NE(xlite_test::ErrorMessage([&] {
              k::flash_attention(q.to(xl::DType::bf16), key, value);
            }).find("[flash_attention] q, k and v must be f32, bf16 (or f64)"),
            std::string::npos);
}

// Eager training steps through the kernel, with q, k and v computed from a weight, each end holding no more
// than the first did, and the later ones the same: the kernel's backward rule (and with it the step's graph
// and buffers) dies with the step. (The first may hold a little more: its buffers come from an emptier cache,
// some in a larger size class.)
TEST(FlashAttention, EagerStepsHoldNoMoreMemoryThanTheFirst) {
  xl::EagerModeGuard eager(true);
  const int64_t b = 2, h = 4, s = 128, d = 32;
  const xl::Tensor x = Data({b, s, h * d}, 0.3);
  xl::Tensor w = Data({h * d, 3 * h * d}, 0.7).requires_grad_();
  std::vector<int64_t> used;
  for (int step = 0; step < 4; ++step) {
    w.reset_grad();
    const std::vector<xl::Tensor> qkv = xl::split(xl::matmul(x, w) * 0.1, h * d, -1);
    auto heads = [&](const xl::Tensor& t) { return xl::transpose(xl::reshape(t, {b, s, h, d}), 1, 2); };
    xl::Tensor loss = xl::mean(k::flash_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), true, 0.125));
    loss.backward();
    xl::sync({loss, w.grad()});
    used.push_back(xl::get_memory_info(xl::device()).bytes_used);
  }
  EXPECT_LE(used[3], used[0]) << used[1] << " " << used[2];
  EXPECT_EQ(used[3], used[1]) << used[0] << " " << used[2];
}

// At S = 8192 the composite holds an S x S matrix of scores (and the backward another of probabilities);
// the kernel holds blocks of them per thread, which its scratch rule declares to the memory plan.
TEST(FlashAttention, TheMemoryPlanAtS8192IsATenthOfTheComposites) {
  const int64_t s = 8192, d = 64;
  const xl::Tensor q = xl::randn({1, 1, s, d}), key = xl::randn({1, 1, s, d}), value = xl::randn({1, 1, s, d});
  const double scale = 0.125;
  auto flash = [&](const std::vector<xl::Tensor>& in) {
    return xl::sum(k::flash_attention(in[0], in[1], in[2], false, scale));
  };
  auto composite = [&](const std::vector<xl::Tensor>& in) {
    const xl::Tensor scores = xl::matmul(in[0], xl::transpose(in[1], 2, 3)) * scale;
    return xl::sum(xl::matmul(xl::softmax(scores, -1), in[2]));
  };
  const xl::debug::MemoryStats flash_forward = xl::debug::memory_stats({k::flash_attention(q, key, value)});
  const xl::debug::MemoryStats composite_forward = xl::debug::memory_stats({composite({q, key, value})});
  EXPECT_GT(flash_forward.scratch_bytes, 0);
  EXPECT_GE(flash_forward.temp_bytes, flash_forward.scratch_bytes);
  EXPECT_GE(composite_forward.temp_bytes, 2 * s * s * 4) << "two S x S matrices";
  EXPECT_LT(flash_forward.temp_bytes, composite_forward.temp_bytes / 10);
  const xl::debug::MemoryStats flash_training = xl::debug::memory_stats(xl::grad(flash, {q, key, value}));
  const xl::debug::MemoryStats composite_training = xl::debug::memory_stats(xl::grad(composite, {q, key, value}));
  EXPECT_GT(flash_training.scratch_bytes, 0);
  EXPECT_LT(flash_training.temp_bytes, composite_training.temp_bytes / 10)
      << flash_training.temp_bytes << " against " << composite_training.temp_bytes;
}
