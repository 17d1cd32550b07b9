// checkpoint(fn, inputs): the same gradients as without it (finite differences, parameters fn captures,
// random draws), half the temporary memory of a 12-layer MLP, compile(fn) replays, and the optimization
// barrier it recomputes behind in the IR, the CPU backend and StableHLO.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "gradient_check.h"
#include "test_support.h"

namespace xl = xlite;
using xlite_test::check_gradients;

namespace {
// Residual MLP blocks as in a transformer, h + tanh(h W1_i + b_i) W2_i with a hidden width four times h's,
// with parameters the function captures.
struct Mlp {
  std::vector<xl::Tensor> weights, biases, outs;
  Mlp(int layers, int64_t width, xl::DType dtype, uint64_t seed) {
    xl::manual_seed(seed);
    for (int i = 0; i < layers; ++i) {
      weights.push_back((xl::randn({width, 4 * width}, dtype) / std::sqrt(double(width))).requires_grad_());
      biases.push_back((xl::randn({4 * width}, dtype) * 0.1).requires_grad_());
      outs.push_back((xl::randn({4 * width, width}, dtype) / std::sqrt(double(8 * width))).requires_grad_());
    }
    xl::sync();
  }
  xl::Tensor layers(const xl::Tensor& x, size_t from, size_t to) const {
    xl::Tensor h = x;
    for (size_t i = from; i < to; ++i) h = h + xl::matmul(xl::tanh(xl::matmul(h, weights[i]) + biases[i]), outs[i]);
    return h;
  }
  // Segments of `per` layers, each checkpointed when `checkpointed`.
  xl::Tensor forward(const xl::Tensor& x, size_t per, bool checkpointed) const {
    xl::Tensor h = x;
    for (size_t from = 0; from < weights.size(); from += per) {
      const size_t to = std::min(weights.size(), from + per);
      auto segment = [this, from, to](const std::vector<xl::Tensor>& in) { return layers(in[0], from, to); };
      h = checkpointed ? xl::checkpoint(segment, {h}) : segment({h});
    }
    return h;
  }
  std::vector<xl::Tensor> grads() const {
    std::vector<xl::Tensor> out;
    for (size_t i = 0; i < weights.size(); ++i)
      out.insert(out.end(), {weights[i].grad(), biases[i].grad(), outs[i].grad()});
    return out;
  }
  void reset_grads() {
    for (size_t i = 0; i < weights.size(); ++i) weights[i].reset_grad(), biases[i].reset_grad(), outs[i].reset_grad();
  }
};

void expect_near(const std::vector<xl::Tensor>& got, const std::vector<xl::Tensor>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_TRUE(got[k].defined()) << k;
    std::vector<double> g = got[k].to(xl::DType::f64).to_vector<double>();
    std::vector<double> w = want[k].to(xl::DType::f64).to_vector<double>();
    ASSERT_EQ(g.size(), w.size()) << k;
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tolerance * (1 + std::fabs(w[i]))) << k << ", " << i;
  }
}
}  // namespace

TEST(GradientCheckpoint, GradientsMatchFiniteDifferences) {
  check_gradients(
      [](const std::vector<xl::Tensor>& in) {
        auto fn = [](const std::vector<xl::Tensor>& v) { return xl::sin(v[0] * v[1]).exp() + v[1]; };
        return xl::checkpoint(fn, {in[0] * 2.0, in[1]}) * in[0];
      },
      {xlite_test::input({3, 4}, 1), xlite_test::input({4}, 2)});
}

TEST(GradientCheckpoint, CapturedParametersGetTheSameGradientsAsWithout) {
  Mlp mlp(6, 8, xl::DType::f64, 5);
  xl::Tensor x = xlite_test::input({4, 8}, 6).requires_grad_();
  mlp.forward(x, 2, false).square().sum().backward();
  std::vector<xl::Tensor> want = mlp.grads();
  want.push_back(x.grad());
  mlp.reset_grads();
  x.reset_grad();
  mlp.forward(x, 2, true).square().sum().backward();
  std::vector<xl::Tensor> got = mlp.grads();
  got.push_back(x.grad());
  expect_near(got, want, 1e-12);
}

TEST(GradientCheckpoint, TheRecomputationDrawsTheSameRandomNumbers) {
  xl::Tensor w = xlite_test::input({64}, 7).requires_grad_();
  auto fn = [&](const std::vector<xl::Tensor>& in) { return xl::dropout(in[0] * w, 0.5) * 3.0; };
  xl::manual_seed(11);
  xl::Tensor x = xlite_test::input({64}, 8);
  xl::manual_seed(12);
  fn({x}).sum().backward();
  xl::Tensor want = w.grad();
  w.reset_grad();
  xl::manual_seed(12);
  xl::checkpoint(fn, {x}).sum().backward();
  expect_near({w.grad()}, {want}, 0);
  std::vector<double> g = want.to_vector<double>();
  EXPECT_GT(std::count(g.begin(), g.end(), 0.0), 8);  // dropout did drop
}

TEST(GradientCheckpoint, HalvesTheTemporaryMemoryOfATwelveLayerMlp) {
  // The test: peak temporary memory of the backward program, the activations of every block against
  // the inputs of every block plus one block's recomputation.
  Mlp mlp(12, 64, xl::DType::f32, 9);
  xl::Tensor x = xl::randn({128, 64});
  xl::sync();
  auto temp_bytes = [&](bool checkpointed) {
    mlp.reset_grads();
    mlp.forward(x, 1, checkpointed).square().mean().backward();
    // In the order a sync lists them: by creation, the last layer's first, as backward made them.
    std::vector<xl::Tensor> grads = mlp.grads();
    std::reverse(grads.begin(), grads.end());
    const int64_t bytes = xl::debug::memory_stats(grads).temp_bytes;
    xl::sync();
    return bytes;
  };
  const int64_t plain = temp_bytes(false), checkpointed = temp_bytes(true);
  EXPECT_LE(checkpointed * 2, plain) << "plain " << plain << " bytes, checkpointed " << checkpointed;
  std::cout << "temporary memory: " << plain << " bytes plain, " << checkpointed << " checkpointed\n";
  EXPECT_GT(checkpointed, 0);
}

TEST(GradientCheckpoint, ACompiledTrainingStepReplaysWithTheSameResults) {
  Mlp eager_mlp(4, 16, xl::DType::f32, 13), compiled_mlp(4, 16, xl::DType::f32, 13);
  xl::Tensor x = xl::randn({8, 16});
  xl::sync();
  auto train = [&x](Mlp& mlp) {
    mlp.reset_grads();
    xl::Tensor loss = mlp.forward(x, 2, true).square().mean();
    loss.backward();
    xl::NoGradGuard no_grad;
    for (size_t i = 0; i < mlp.weights.size(); ++i) {
      mlp.weights[i].sub_(mlp.weights[i].grad() * 0.5);
      mlp.biases[i].sub_(mlp.biases[i].grad() * 0.5);
      mlp.outs[i].sub_(mlp.outs[i].grad() * 0.5);
    }
    return loss;
  };
  auto step = xl::compile([&]() { return train(compiled_mlp); });
  for (int i = 0; i < 4; ++i) {
    const float want = train(eager_mlp).item<float>();
    EXPECT_NEAR(step().item<float>(), want, 1e-6) << "step " << i;
  }
  EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
  expect_near(compiled_mlp.weights, eager_mlp.weights, 1e-5);
}

TEST(GradientCheckpoint, TheRecomputationRunsBehindABarrierInEveryBackend) {
  xl::Tensor w = xl::ones({4}).requires_grad_();
  xl::Tensor y =
      xl::checkpoint([&](const std::vector<xl::Tensor>& in) { return xl::exp(in[0] * w); }, {xl::arange(4.0)});
  y.sum().backward();
  const std::string ir = xl::debug::optimized_text({w.grad()});  // no pass removes it
  EXPECT_NE(ir.find("opt_barrier"), std::string::npos) << ir;
  const std::string hlo = xl::debug::stablehlo({w.grad()});
  EXPECT_NE(hlo.find("stablehlo.optimization_barrier"), std::string::npos) << hlo;
  std::vector<float> g = w.grad().to_vector<float>();
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(g[i], i * std::exp(float(i)), 1e-4) << i;
}
