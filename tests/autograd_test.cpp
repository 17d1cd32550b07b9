// Every gradient rule against central finite differences in f64, plus the autograd API's behaviour.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <xlite/xlite.h>

#include "gradient_check.h"

#include "ir/no_gradient.h"
#include "ir/op.h"

namespace xl = xlite;

namespace {
using xlite_test::check_gradients;
using xlite_test::input;
using xlite_test::random_f64;
}  // namespace

TEST(Autograd, UnaryOps) {
  for (auto op : std::vector<xl::Tensor (*)(const xl::Tensor&)>{xl::neg, xl::exp, xl::expm1, xl::sin, xl::cos, xl::tanh,
                                                                xl::sigmoid, xl::silu, xl::erf, xl::square, xl::abs}) {
    check_gradients([op](const auto& x) { return op(x[0]); }, {input({3, 4}, 1)});
  }
  for (auto op : std::vector<xl::Tensor (*)(const xl::Tensor&)>{xl::log, xl::log1p, xl::sqrt, xl::rsqrt, xl::reciprocal,
                                                                xl::tan}) {
    check_gradients([op](const auto& x) { return op(x[0]); }, {input({3, 4}, 2, 0.2, 1.2)});
  }
  check_gradients([](const auto& x) { return xl::relu(x[0]); }, {input({3, 4}, 3)});
  check_gradients([](const auto& x) { return xl::gelu(x[0]); }, {input({3, 4}, 4)});
  check_gradients([](const auto& x) { return xl::gelu(x[0], "tanh"); }, {input({3, 4}, 5)});
}

TEST(Autograd, BinaryOpsWithBroadcasting) {
  auto a = input({2, 3, 4}, 6), b = input({3, 1}, 7, 0.5, 1.5);
  check_gradients([](const auto& x) { return x[0] + x[1]; }, {a, b});
  check_gradients([](const auto& x) { return x[0] - x[1] * 2.5; }, {a, b});
  check_gradients([](const auto& x) { return x[0] * x[1]; }, {a, b});
  check_gradients([](const auto& x) { return x[0] / x[1]; }, {a, b});
  check_gradients([](const auto& x) { return xl::pow(x[1], x[0]); }, {a, b});
  check_gradients([](const auto& x) { return xl::maximum(x[0], x[1]) + xl::minimum(x[0], x[1]) * 3.0; }, {a, b});
  check_gradients([](const auto& x) { return xl::where(x[0] > 0, x[0] * x[0], x[1]); }, {a, b});
  check_gradients([](const auto& x) { return xl::clamp(x[0], -0.5, 0.7); }, {a});
}

TEST(Autograd, ReductionsOverSeveralDims) {
  auto x = input({2, 3, 4}, 8);
  check_gradients([](const auto& t) { return xl::sum(t[0], {0, 2}); }, {x});
  check_gradients([](const auto& t) { return xl::mean(t[0], {1}, true); }, {x});
  check_gradients([](const auto& t) { return xl::prod(t[0], {2}); }, {x});
  check_gradients([](const auto& t) { return xl::max(t[0], {0, 1}); }, {x});
  check_gradients([](const auto& t) { return xl::min(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::logsumexp(t[0], {1, 2}); }, {x});
  check_gradients([](const auto& t) { return xl::var(t[0], {0, 2}); }, {x});
  check_gradients([](const auto& t) { return xl::softmax(t[0], -1); }, {x});
  check_gradients([](const auto& t) { return xl::log_softmax(t[0], 1); }, {x});
}

// Softmax, log-softmax and logsumexp shift by a detached max: the gradient through the shift cancels, so
// it is not computed. Rows whose maximum is tied (where the max's own gradient splits) check that nothing
// was lost with it.
TEST(Autograd, SoftmaxFamilyAtTiedMaxima) {
  auto x = xl::tensor(std::vector<float>{0.5f, 2.0f, 2.0f, -1.0f, 3.0f, 3.0f, 3.0f, 0.25f}, {2, 4});
  check_gradients([](const auto& t) { return xl::softmax(t[0], -1) * xl::arange(0, 4).to(xl::DType::f32); }, {x});
  check_gradients([](const auto& t) { return xl::log_softmax(t[0], 1) * xl::arange(1, 5).to(xl::DType::f32); }, {x});
  check_gradients([](const auto& t) { return xl::logsumexp(t[0], {1}); }, {x});
}

TEST(Autograd, ShapeOps) {
  auto x = input({2, 3, 4}, 9);
  check_gradients([](const auto& t) { return xl::reshape(t[0], {4, 6}) * 2.0; }, {x});
  check_gradients([](const auto& t) { return xl::permute(t[0], {2, 0, 1}); }, {x});
  check_gradients([](const auto& t) { return xl::slice(t[0], 2, 1, 4, 2); }, {x});
  check_gradients([](const auto& t) { return xl::slice(xl::slice(t[0], 0, 1, 2), 1, 0, 3, 2); }, {x});
  check_gradients([](const auto& t) { return xl::concat({t[0], t[0] * 2.0}, 1); }, {x});
  check_gradients([](const auto& t) { return xl::stack({t[0], t[0]}, 0); }, {x});
  check_gradients([](const auto& t) { return xl::pad(t[0], {1, 2, 0, 1}, 3.0); }, {x});
  check_gradients([](const auto& t) { return xl::flip(t[0], {0, 2}); }, {x});
  check_gradients([](const auto& t) { return xl::expand(xl::slice(t[0], 1, 0, 1), {5, 2, 3, 4}); }, {x});
  check_gradients([](const auto& t) { return xl::tril(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::split(t[0], 2, 2)[1]; }, {x});
}

TEST(Autograd, TriangularMasks) {
  auto x = input({2, 3, 4}, 50);
  check_gradients([](const auto& t) { return xl::triu(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::triu(t[0], 1) * t[0]; }, {x});
  check_gradients([](const auto& t) { return xl::triu(t[0], -1); }, {x});
  check_gradients([](const auto& t) { return xl::tril(t[0], 2) * t[0]; }, {x});
  check_gradients([](const auto& t) { return xl::tril(t[0], -1); }, {x});
  // The mask itself: d sum(triu(x)) / dx is 1 on and above the diagonal, 0 below.
  auto g = xl::grad([](const auto& t) { return xl::sum(xl::triu(t[0])); }, {input({3, 3}, 51)})[0].to_vector<double>();
  EXPECT_EQ(g, (std::vector<double>{1, 1, 1, 0, 1, 1, 0, 0, 1}));
}

TEST(Autograd, RemainderBothOperands) {
  // Away from the jumps (a / b never within 0.05 of an integer), for both divisor signs.
  auto a = xl::tensor(std::vector<double>{-3.7, -1.2, -0.3, 0.4, 1.3, 2.9, 5.3, -5.1}, {2, 4});
  auto positive = xl::tensor(std::vector<double>{0.7, 1.1, 1.6, 0.9}, {1, 4});
  auto negative = xl::tensor(std::vector<double>{-0.7, -1.1, -1.6, -0.9}, {1, 4});
  check_gradients([](const auto& t) { return xl::remainder(t[0], t[1]); }, {a, positive});
  check_gradients([](const auto& t) { return xl::remainder(t[0], t[1]); }, {a, negative});
  check_gradients([](const auto& t) { return xl::remainder(t[0] * t[0], 0.75); }, {a});
  // d (a mod b) / db = -floor(a / b): -3.7 mod 0.7 has floor -6.
  auto g = xl::grad([](const auto& t) { return xl::sum(xl::remainder(t[0], t[1])); },
                    {xl::tensor(std::vector<double>{-3.7}), xl::tensor(std::vector<double>{0.7})});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{1}));
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{6}));
}

TEST(Autograd, ConvertBetweenFloatTypes) {
  // Through f32 and back: the gradient converts back to f64 and is exact up to f32 rounding, so a larger
  // finite-difference step (the function is linear in each element) and a looser tolerance.
  check_gradients([](const auto& t) { return t[0].to(xl::DType::f32).to(xl::DType::f64) * 3.0; }, {input({3, 4}, 52)},
                  1e-4, 1e-2);
  check_gradients([](const auto& t) { return xl::exp(t[0].to(xl::DType::f32)) * t[1]; },
                  {input({3, 4}, 53), input({4}, 54)}, 1e-3, 1e-3);
  auto x = xl::tensor(std::vector<double>{0.5, -1.5}).requires_grad_();
  auto y = x.to(xl::DType::f32);
  EXPECT_TRUE(y.requires_grad());
  (y * xl::tensor(std::vector<float>{2, 3})).sum().backward();
  EXPECT_EQ(x.grad().dtype(), xl::DType::f64);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 3}));
}

TEST(Autograd, PoolingFullGradients) {
  auto x = input({2, 2, 5, 6}, 55);
  for (std::vector<int64_t> kernel : {std::vector<int64_t>{2}, std::vector<int64_t>{3}, std::vector<int64_t>{3, 2}}) {
    check_gradients([&](const auto& t) { return xl::max_pool2d(t[0], kernel, {2}, {1}); }, {x});
    check_gradients([&](const auto& t) { return xl::avg_pool2d(t[0], kernel, {2}, {1}); }, {x});
  }
  check_gradients([](const auto& t) { return xl::max_pool2d(t[0], {3}, {1}); }, {x});  // overlapping windows
  check_gradients([](const auto& t) { return xl::avg_pool2d(t[0], {2, 3}, {1, 2}); }, {x});
  // Each input gets 1/9 from every 3x3 window (padded with zeros that count) it falls in.
  auto g =
      xl::grad([](const auto& t) { return xl::sum(xl::avg_pool2d(t[0], {3}, {2}, {1})); }, {input({1, 1, 4, 4}, 56)})[0]
          .to_vector<double>();
  std::vector<double> windows = {1, 2, 1, 1, 2, 4, 2, 2, 1, 2, 1, 1, 1, 2, 1, 1};  // windows covering each element
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], windows[i] / 9.0, 1e-12) << i;
}

TEST(Autograd, CompositeOpsAndOtherOperandForms) {
  auto x = input({3, 4}, 57), y = input({4}, 58), pos = input({3, 4}, 59, 0.5, 1.5);
  check_gradients([](const auto& t) { return xl::clamp(t[0], t[1] * 0.5 - 0.5, t[1] * 0.5 + 0.5); }, {x, y});
  check_gradients([](const auto& t) { return xl::pow(t[0], 2.5) + xl::pow(1.7, t[1]); }, {pos, x});
  check_gradients([](const auto& t) { return 2.0 / t[0] - (1.0 - t[1]); }, {pos, x});
  check_gradients([](const auto& t) { return xl::where(t[0] > 0, 1.5, t[0] * t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::matmul(t[0], t[0]); }, {y});     // 1-D . 1-D
  check_gradients([](const auto& t) { return xl::matmul(t[0], t[1]); }, {x, y});  // matrix x vector
  check_gradients([](const auto& t) { return xl::var(t[0], {1}, 0, true) + xl::mean(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::logsumexp(t[0], {0}, true); }, {x});
  check_gradients([](const auto& t) { return xl::squeeze(xl::unsqueeze(xl::transpose(t[0], 0, 1), 1), 1); }, {x});
  check_gradients([](const auto& t) { return xl::narrow(t[0], 1, 1, 2) * xl::chunk(t[0], 2, 1)[1]; }, {x});
  check_gradients(
      [](const auto& t) { return xl::broadcast_to(t[0], {2, 3, 4}) * xl::flatten(xl::unsqueeze(t[0], 0), 0, 1); }, {x});
  check_gradients(
      [](const auto& t) { return xl::embedding(t[0], xl::tensor(std::vector<int64_t>{2, 0, 0, 2}, {2, 2})); }, {x});
  check_gradients([](const auto& t) { return xl::conv2d(t[0], t[1], std::nullopt, {1}, {1}); },
                  {input({1, 2, 4, 4}, 60), input({3, 2, 3, 3}, 61)}, 1e-5);
}

TEST(Autograd, NormLayersAgainstFiniteDifferences) {
  auto x = input({2, 3, 5}, 62), weight = input({5}, 63, 0.5, 1.5), bias = input({5}, 64);
  check_gradients(
      [](const auto& t) {
        xl::nn::RMSNorm norm(5);
        norm.weight = t[1];
        return norm(t[0]);
      },
      {x, weight});
  check_gradients(
      [](const auto& t) {
        xl::nn::LayerNorm norm(5);
        norm.weight = t[1];
        norm.bias = t[2];
        return norm(t[0]);
      },
      {x, weight, bias});
}

TEST(Autograd, IndexingOps) {
  auto x = input({4, 3}, 10);
  auto rows = xl::tensor(std::vector<int64_t>{2, 0, 2});
  auto cols = xl::tensor(std::vector<int64_t>{0, 2, 1, 1, 0, 2, 2, 2}, {4, 2});
  check_gradients([&](const auto& t) { return xl::index_select(t[0], 0, rows); }, {x});
  check_gradients([&](const auto& t) { return xl::gather(t[0], 1, cols); }, {x});
  // One index per row (a loss's target) takes the one-hot gradient, a select; fewer rows than the input
  // has takes the scatter.
  auto one_per_row = xl::tensor(std::vector<int64_t>{2, 0, 1, 2}, {4, 1});
  auto fewer_rows = xl::tensor(std::vector<int64_t>{1, 1}, {2, 1});
  check_gradients([&](const auto& t) { return xl::gather(t[0], 1, one_per_row) * 2.0; }, {x});
  check_gradients([&](const auto& t) { return xl::gather(t[0], 1, fewer_rows); }, {x});
  check_gradients([&](const auto& t) { return xl::gather(t[0], 0, xl::tensor(std::vector<int64_t>{3, 0, 3}, {1, 3})); },
                  {x});
  check_gradients([&](const auto& t) { return xl::embedding(t[0], xl::tensor(std::vector<int64_t>{3, 3, 1}, {3})); },
                  {x});
  auto src = input({4, 2}, 11);
  check_gradients([&](const auto& t) { return xl::scatter_add(t[0], 1, cols, t[1]); }, {x, src});
}

// The one-hot gradient of a gather reads its index through a gather of its own: an index out of range
// raises when only the gradient is computed (the forward gather, which would raise, never runs).
TEST(Autograd, AGatherGradientAloneRejectsAnIndexOutOfRange) {
  auto x = xl::ones({2, 3});
  x.requires_grad_();
  xl::sum(xl::gather(x, 1, xl::tensor(std::vector<int64_t>{1, 5}, {2, 1}))).backward();
  EXPECT_THROW(x.grad().to_vector<float>(), xl::Error);
  auto y = xl::ones({2, 3});
  y.requires_grad_();
  xl::sum(xl::gather(y, 1, xl::tensor(std::vector<int64_t>{1, 2}, {2, 1}))).backward();
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 0, 1}));
}

TEST(Autograd, MatmulAndLinear) {
  check_gradients([](const auto& t) { return xl::matmul(t[0], t[1]); }, {input({2, 3, 4}, 12), input({4, 5}, 13)});
  check_gradients([](const auto& t) { return xl::matmul(t[0], t[1]); }, {input({4}, 14), input({3, 4, 2}, 15)});
  check_gradients([](const auto& t) { return xl::linear(t[0], t[1], t[2]); },
                  {input({5, 3}, 16), input({2, 3}, 17), input({2}, 18)});
}

TEST(Autograd, BackwardAccumulatesAndZeroGradResets) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3}).requires_grad_();
  EXPECT_TRUE(w.requires_grad());
  auto loss = (w * w).sum();
  EXPECT_TRUE(loss.requires_grad());
  loss.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  (w * 3.0).sum().backward();  // accumulates, like PyTorch
  auto g = w.grad();
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{5, 7, 9}));
  w.grad().zero_();
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST(Autograd, BackwardAfterTheLossWasReadStillWorks) {
  auto w = xl::tensor(std::vector<double>{0.5, -1.0}).requires_grad_();
  auto loss = xl::sum(xl::exp(w));
  EXPECT_NEAR(loss.item<double>(), std::exp(0.5) + std::exp(-1.0), 1e-12);  // syncs the loss
  loss.backward();
  auto g = w.grad().to_vector<double>();
  EXPECT_NEAR(g[0], std::exp(0.5), 1e-12);
  EXPECT_NEAR(g[1], std::exp(-1.0), 1e-12);
}

TEST(Autograd, ForwardAndBackwardRunAsOneGraph) {
  auto w = xl::randn({8, 8}).requires_grad_();
  auto x = xl::randn({4, 8});
  xl::sync();
  int64_t executes = xl::metrics::counter_value("Execute");
  auto loss = xl::tanh(xl::matmul(x, w)).sum();
  loss.backward();
  xl::sync();  // loss and gradient together
  EXPECT_EQ(xl::metrics::counter_value("Execute"), executes + 1);
  EXPECT_FALSE(w.grad().is_pending());
}

TEST(Autograd, NoGradGuardDetachAndErrors) {
  auto w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  {
    xl::NoGradGuard no_grad;
    EXPECT_FALSE(xl::is_grad_enabled());
    EXPECT_FALSE((w * 2.0).requires_grad());
  }
  EXPECT_TRUE(xl::is_grad_enabled());
  EXPECT_FALSE(w.detach().requires_grad());
  EXPECT_THROW((w.detach() * 2.0).sum().backward(), xl::Error);  // nothing requires grad
  EXPECT_THROW((w * 2.0).backward(), xl::Error);                 // not a scalar, no gradient given
  EXPECT_THROW(xl::tensor(std::vector<int32_t>{1}).requires_grad_(), xl::Error);
  (w * 2.0).backward(xl::tensor(std::vector<float>{1, 10}));
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 20}));
}

TEST(Autograd, OptimizerStepsUnderNoGradKeepTheLeaf) {
  auto w = xl::tensor(std::vector<float>{1, -1}).requires_grad_();
  for (int step = 0; step < 3; ++step) {
    auto loss = (w * w).sum();
    loss.backward();
    {
      xl::NoGradGuard no_grad;
      w.sub_(w.grad() * 0.25);
      w.grad().zero_();
    }
    xl::sync();
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.125f, -0.125f}));  // halves each step
}

TEST(Autograd, FunctionalGrad) {
  auto [value, grads] =
      xl::value_and_grad([](const auto& x) { return (x[0] * x[1]).sum(); },
                         {xl::tensor(std::vector<float>{1, 2}), xl::tensor(std::vector<float>{3, 4})});
  EXPECT_EQ(value.item<float>(), 11.0f);
  EXPECT_EQ(grads[0].to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(grads[1].to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(Autograd, Conv2dEveryAttribute) {
  struct Case {
    xl::Shape x, w;
    std::vector<int64_t> stride, padding, dilation;
    int64_t groups;
  };
  uint64_t seed = 30;
  for (const Case& c : {Case{{2, 2, 5, 5}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
                        Case{{1, 2, 7, 6}, {2, 2, 3, 2}, {2, 3}, {1, 0}, {1, 1}, 1},
                        Case{{1, 4, 7, 7}, {4, 2, 2, 3}, {2, 1}, {2, 1}, {2, 2}, 2},
                        Case{{1, 2, 6, 6}, {2, 1, 3, 3}, {3, 2}, {1, 1}, {1, 1}, 2}}) {
    check_gradients(
        [&](const auto& t) { return xl::conv2d(t[0], t[1], t[2], c.stride, c.padding, c.dilation, c.groups); },
        {input(c.x, seed++), input(c.w, seed++), input({c.w[0]}, seed++)}, 1e-5);
  }
}

TEST(Autograd, CustomVjpUsesTheGivenBackward) {
  // A stable log(1 + exp(x)) whose backward is the sigmoid, given by hand.
  auto softplus = xl::custom_vjp([](const std::vector<xl::Tensor>& in) { return xl::log1p(xl::exp(in[0])); },
                                 [](const std::vector<xl::Tensor>& in, const xl::Tensor&, const xl::Tensor& g) {
                                   return std::vector<xl::Tensor>{g * xl::sigmoid(in[0])};
                                 });
  check_gradients([&](const auto& t) { return softplus({t[0]}) * t[1]; }, {input({5}, 40), input({5}, 41)});
  // The rule really is the user's: a deliberately wrong backward shows up in the gradient.
  auto wrong = xl::custom_vjp([](const std::vector<xl::Tensor>& in) { return in[0] * 2.0; },
                              [](const std::vector<xl::Tensor>&, const xl::Tensor&, const xl::Tensor& g) {
                                return std::vector<xl::Tensor>{g * 7.0};
                              });
  auto w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  wrong({w}).sum().backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{7, 7}));
  auto bad = xl::custom_vjp([](const std::vector<xl::Tensor>& in) { return in[0] * 1.0; },
                            [](const std::vector<xl::Tensor>&, const xl::Tensor&, const xl::Tensor& g) {
                              return std::vector<xl::Tensor>{xl::sum(g)};
                            });
  auto v = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  EXPECT_THROW(bad({v}).sum().backward(), xl::Error);  // gradient of the wrong shape
}

// A custom function's rule holds its inputs' graphs (and in eager mode their buffers) only as long as its
// result lives: a registry of rules kept dead results' inputs until it was purged, dozens of steps later.
TEST(Autograd, ACustomRuleIsFreedWithItsResult) {
  xl::EagerModeGuard eager(true);
  auto twice = xl::custom_vjp([](const std::vector<xl::Tensor>& in) { return in[0] * 2.0; },
                              [](const std::vector<xl::Tensor>&, const xl::Tensor&, const xl::Tensor& g) {
                                return std::vector<xl::Tensor>{g * 2.0};
                              });
  xl::Tensor w = xl::ones({256, 1024}).requires_grad_();
  const int64_t before = xl::get_memory_info(xl::device()).bytes_used;
  for (int step = 0; step < 3; ++step) {
    xl::Tensor y = twice({w + 1.0});  // w + 1: a 1 MiB buffer that only the rule's inputs refer to
    y.sum().backward();
    EXPECT_EQ(w.grad().to_vector<float>()[0], 2.0f * static_cast<float>(step + 1));
  }
  w.reset_grad();
  EXPECT_EQ(xl::get_memory_info(xl::device()).bytes_used, before);
}

// A value that a sync computed is read, not recomputed, by later graphs that reach it through autograd:
// the backward of a synced forward, and the next op in eager mode (which would otherwise pull in the
// whole chain before it, so that n eager ops cost O(n^2)).
TEST(Autograd, ComputedValuesAreReadNotRecomputed) {
  auto x = xl::tensor(std::vector<float>{0.5f, -1.0f, 2.0f}).requires_grad_();
  xl::Tensor e = xl::exp(x);
  xl::Tensor loss = xl::sum(e * 3.0f);
  xl::sync({e, loss});
  xl::Tensor next = e * 2.0f;
  EXPECT_EQ(xl::debug::graph_text({next}).find("exp"), std::string::npos) << xl::debug::graph_text({next});
  loss.backward();
  EXPECT_EQ(xl::debug::graph_text({x.grad()}).find("exp"), std::string::npos) << xl::debug::graph_text({x.grad()});
  std::vector<float> grad = x.grad().to_vector<float>();
  for (size_t i = 0; i < grad.size(); ++i)
    EXPECT_NEAR(grad[i], 3.0f * std::exp(std::vector<float>{0.5f, -1.0f, 2.0f}[i]), 1e-5f);

  xl::EagerModeGuard eager(true);
  auto w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  xl::Tensor h = w;
  for (int i = 0; i < 5; ++i) h = xl::tanh(h * 0.5f);
  {
    xl::EagerModeGuard lazy(false);
    xl::Tensor one_more = h * 0.5f;  // pending: its graph shows what it reads
    std::string text = xl::debug::graph_text({one_more});
    EXPECT_EQ(text.find("tanh"), std::string::npos) << text;
  }
}

namespace {

bool ListedWithoutGradient(xl::ir::OpId op) {
  switch (op) {
  XLITE_CASES_WITHOUT_GRADIENT:
    return true;
    default: return false;
  }
}

}  // namespace

// vjp and saved_values share one list of the ops without a gradient; it names exactly the ops the op
// table calls not differentiable.
TEST(Autograd, TheOpsWithoutAGradientAreExactlyTheNonDifferentiableOnes) {
  int listed = 0;
  for (int i = 0; i < xl::ir::kNumOps; ++i) {
    const auto op = static_cast<xl::ir::OpId>(i);
    EXPECT_EQ(ListedWithoutGradient(op), !xl::ir::is_differentiable(op)) << xl::ir::op_name(op);
    listed += ListedWithoutGradient(op) ? 1 : 0;
  }
  EXPECT_EQ(listed, 26);
}

// ReLU's backward masks the gradient with its output (y > 0 exactly where x > 0), as PyTorch's
// threshold_backward: the pre-activation, a GEMM's result plus its bias, is then dead once the relu ran, so a
// training step need not hold it beside the activation until the backward pass (an MLP step at batch 4096:
// 128 -> 112 MiB resident).
TEST(Autograd, ReluBackwardMasksWithItsOutput) {
  xl::manual_seed(6);
  auto x = xl::randn({256, 64});
  auto w = xl::randn({512, 64}).requires_grad_();
  auto b = xl::randn({512}).requires_grad_();
  auto v = xl::randn({512, 8}).requires_grad_();
  xl::sync();
  auto y = xl::relu(xl::linear(x, w, b));
  xl::sum(xl::matmul(y, v)).backward();
  const std::string text = xl::debug::graph_text({b.grad()});
  const size_t relu = text.find(" = relu(");
  ASSERT_NE(relu, std::string::npos) << text;
  const std::string relu_id = text.substr(text.rfind('%', relu), relu - text.rfind('%', relu));
  EXPECT_NE(text.find("gt(" + relu_id + ","), std::string::npos) << text;
  // The gradient itself: the mask of the positive pre-activations.
  auto pre = (xl::matmul(x, w.t()) + b).to_vector<float>();
  auto g = xl::matmul(xl::ones({256, 8}), v.t()).to_vector<float>();
  auto gb = b.grad().to_vector<float>();
  for (int64_t j = 0; j < 512; j += 37) {
    double want = 0;
    for (int64_t i = 0; i < 256; ++i) want += pre[i * 512 + j] > 0 ? g[i * 512 + j] : 0.0;
    EXPECT_NEAR(gb[j], want, 1e-3 * (1 + std::fabs(want))) << j;
  }
}
