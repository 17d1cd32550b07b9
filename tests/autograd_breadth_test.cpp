// Gradients of the ops added for breadth against central finite differences in f64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <xlite/xlite.h>

#include "gradient_check.h"

#include "test_support.h"

namespace xl = xlite;

namespace {
using xlite_test::check_gradients;
using xlite_test::input;
using xlite_test::random_f64;

using xlite_test::F64;

// Element-wise equality up to rounding, for gradients worked out by hand.
void ExpectGradient(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << "at " << i;
}

// d sum(fn(x)) / dx by autograd.
std::vector<double> plain_gradient(const std::function<xl::Tensor(const xl::Tensor&)>& fn, const xl::Tensor& x) {
  return xl::grad([&](const std::vector<xl::Tensor>& t) { return xl::sum(fn(t[0])); }, {x})[0].to_vector<double>();
}
}  // namespace

// ---------------------------------------------------------------- elementwise functions

TEST(AutogradBreadth, InverseTrigonometricAndHyperbolic) {
  auto inside = input({3, 4}, 1, -0.9, 0.9);
  check_gradients([](const auto& t) { return xl::asin(t[0]); }, {inside});
  check_gradients([](const auto& t) { return xl::acos(t[0]); }, {inside});
  auto x = input({3, 4}, 2);
  check_gradients([](const auto& t) { return xl::atan(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::sinh(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::cosh(t[0]); }, {x});
}

TEST(AutogradBreadth, Atan2AwayFromTheOriginAndTheBranchCut) {
  // Every quadrant; y stays away from 0 where x < 0 (the jump from pi to -pi).
  auto y = F64({0.7, -1.2, 0.4, -0.9, 1.5, 0.1, -0.3, 2.0}, {2, 4});
  auto x = F64({1.1, 0.8, -1.3, -0.6, 0.05, 2.0, 1.7, -0.4}, {2, 4});
  check_gradients([](const auto& t) { return xl::atan2(t[0], t[1]); }, {y, x});
  // Broadcasting: the gradient of a broadcast operand sums.
  check_gradients([](const auto& t) { return xl::atan2(t[0], t[1]); },
                  {input({3, 1}, 3, 0.5, 1.5), input({4}, 4, 0.5, 2)});
}

TEST(AutogradBreadth, LogaddexpIncludingLargeInputs) {
  check_gradients([](const auto& t) { return xl::logaddexp(t[0], t[1]); }, {input({3, 4}, 5), input({4}, 6)});
  // exp(1000) overflows f64: the gradient still is the softmax of (a, b).
  auto a = F64({1000, -1000, 700, -3}, {4});
  auto b = F64({999, -1000.5, 710, 40}, {4});
  check_gradients([](const auto& t) { return xl::logaddexp(t[0], t[1]); }, {a, b});
  auto g = xl::grad([](const auto& t) { return xl::sum(xl::logaddexp(t[0], t[1])); }, {a, b});
  std::vector<double> ga = g[0].to_vector<double>();
  EXPECT_NEAR(ga[0], 1 / (1 + std::exp(-1.0)), 1e-12);
  EXPECT_NEAR(ga[1], 1 / (1 + std::exp(-0.5)), 1e-12);
}

TEST(AutogradBreadth, HypotAwayFromTheOrigin) {
  auto a = F64({3, -4, 0, 1e-3, 2.5, -0.7}, {2, 3});  // |a| != |b| everywhere
  auto b = F64({4, 1, 2, -1.5, 0.2, -0.9}, {2, 3});
  check_gradients([](const auto& t) { return xl::hypot(t[0], t[1]); }, {a, b});
  // Large values whose squares overflow f64.
  auto g =
      xl::grad([](const auto& t) { return xl::sum(xl::hypot(t[0], t[1])); }, {F64({3e200}, {1}), F64({4e200}, {1})});
  EXPECT_NEAR(g[0].to_vector<double>()[0], 0.6, 1e-12);
  EXPECT_NEAR(g[1].to_vector<double>()[0], 0.8, 1e-12);
}

TEST(AutogradBreadth, SoftplusAndMish) {
  auto x = input({3, 4}, 7, -4, 4);
  check_gradients([](const auto& t) { return xl::softplus(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::softplus(t[0], 2, 5); }, {x});  // 2x passes 5 only where x > 2.5
  check_gradients([](const auto& t) { return xl::softplus(t[0], 0.5); }, {x});
  // Past the threshold the gradient is 1; far below it, exp(x).
  auto far = F64({-40, -25, 25, 40}, {4});
  check_gradients([](const auto& t) { return xl::softplus(t[0]); }, {far});
  check_gradients([](const auto& t) { return xl::mish(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::mish(t[0]); }, {far});
}

TEST(AutogradBreadth, PiecewiseActivationsAwayFromTheirKinks) {
  auto x = F64({-4.5, -3.4, -2.5, -1, -0.2, 0.3, 1.7, 2.9, 3.5, 5}, {2, 5});
  check_gradients([](const auto& t) { return xl::hardsigmoid(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::hardswish(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::elu(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::elu(t[0], 0.5); }, {x});
  check_gradients([](const auto& t) { return xl::leaky_relu(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::leaky_relu(t[0], 0.2); }, {x});
  check_gradients([](const auto& t) { return xl::clamp_min(t[0], 0.1); }, {x});
  check_gradients([](const auto& t) { return xl::clamp_max(t[0], 0.1); }, {x});
  // The known values: hardswish' = (2x + 3) / 6 inside (-3, 3); elu' = alpha exp(x) below 0.
  std::vector<double> hs = plain_gradient([](const xl::Tensor& t) { return xl::hardswish(t); }, x);
  EXPECT_NEAR(hs[3], (2 * -1.0 + 3) / 6, 1e-12);
  EXPECT_EQ(hs[0], 0.0);
  EXPECT_EQ(hs[9], 1.0);
  std::vector<double> el = plain_gradient([](const xl::Tensor& t) { return xl::elu(t, 0.5); }, x);
  EXPECT_NEAR(el[3], 0.5 * std::exp(-1.0), 1e-12);
  EXPECT_EQ(el[6], 1.0);
}

TEST(AutogradBreadth, Glu) {
  check_gradients([](const auto& t) { return xl::glu(t[0]); }, {input({3, 4}, 8)});
  check_gradients([](const auto& t) { return xl::glu(t[0], 0); }, {input({4, 3}, 9)});
  check_gradients([](const auto& t) { return xl::glu(t[0], 1); }, {input({2, 6, 2}, 10)});
}

TEST(AutogradBreadth, NanToNumOfFiniteValuesAndClone) {
  check_gradients([](const auto& t) { return xl::nan_to_num(t[0]) * 2.0; }, {input({3, 4}, 11)});
  check_gradients([](const auto& t) { return xl::clone(t[0]) * t[0]; }, {input({3, 4}, 12)});
}

// ---------------------------------------------------------------- reductions

TEST(AutogradBreadth, NormForEachP) {
  auto x = input({3, 4}, 13);
  for (double p : {1.0, 2.0, 3.0, 0.5, static_cast<double>(INFINITY)}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    check_gradients([p](const auto& t) { return xl::norm(t[0], p); }, {x});
    check_gradients([p](const auto& t) { return xl::norm(t[0], p, {1}); }, {x});
    check_gradients([p](const auto& t) { return xl::norm(t[0], p, {0}, true); }, {x});
  }
  check_gradients([](const auto& t) { return xl::norm(t[0], "fro"); }, {x});
  check_gradients([](const auto& t) { return xl::norm(t[0], "fro", {-1}, true); }, {x});
  check_gradients([](const auto& t) { return xl::norm(t[0], 2, {0, 2}); }, {input({2, 3, 4}, 14)});
}

TEST(AutogradBreadth, NormWithMinusInfinity) {
  auto x = input({3, 4}, 80);
  check_gradients([](const auto& t) { return xl::norm(t[0], -INFINITY); }, {x});
  check_gradients([](const auto& t) { return xl::norm(t[0], -INFINITY, {1}); }, {x});
}

TEST(AutogradBreadth, Std) {
  auto x = input({2, 3, 4}, 15);
  check_gradients([](const auto& t) { return xl::std(t[0]); }, {x});
  check_gradients([](const auto& t) { return xl::std(t[0], {1}); }, {x});
  check_gradients([](const auto& t) { return xl::std(t[0], {0, 2}, 0, true); }, {x});
  check_gradients([](const auto& t) { return xl::std(t[0], {-1}, 2); }, {x});
}

TEST(AutogradBreadth, MaxAndMinValuesAlongADim) {
  auto x = input({3, 4}, 16);
  check_gradients([](const auto& t) { return xl::max(t[0], 1).values; }, {x});
  check_gradients([](const auto& t) { return xl::max(t[0], 0, true).values; }, {x});
  check_gradients([](const auto& t) { return xl::min(t[0], -1).values; }, {x});
  check_gradients([](const auto& t) { return xl::min(t[0], -2, true).values; }, {x});
}

// ---------------------------------------------------------------- scans

TEST(AutogradBreadth, Cumsum) {
  auto x = input({3, 4}, 17);
  check_gradients([](const auto& t) { return xl::cumsum(t[0], 0); }, {x});
  check_gradients([](const auto& t) { return xl::cumsum(t[0], -1); }, {x});
  check_gradients([](const auto& t) { return xl::cumsum(t[0], 1); }, {input({2, 3, 2}, 18)});
}

TEST(AutogradBreadth, Cumprod) {
  auto x = input({3, 4}, 19, 0.3, 1.7);
  check_gradients([](const auto& t) { return xl::cumprod(t[0], 0); }, {x});
  check_gradients([](const auto& t) { return xl::cumprod(t[0], -1); }, {x});
  check_gradients([](const auto& t) { return xl::cumprod(t[0], 1); }, {input({2, 4}, 20)});  // either sign
}

TEST(AutogradBreadth, CumprodWithAnExactZeroHasFiniteGradients) {
  // d/dx_j of sum_i prod_{k<=i} x_k is sum over i >= j of the products without x_j (worked by hand; PyTorch agrees).
  auto g = [](const std::vector<double>& v) {
    return plain_gradient([](const xl::Tensor& t) { return xl::cumprod(t, 0); }, F64(v));
  };
  ExpectGradient(g({2, 0, 3, 4}), {1, 32, 0, 0});
  ExpectGradient(g({2, 0, 3, 0, 5}), {1, 8, 0, 0, 0});
  ExpectGradient(g({0, 2, 3}), {9, 0, 0});
  ExpectGradient(g({1.5, -2, 0}), {-1, 1.5, -3});
  auto m = F64({2, 0, 3, 0, 0, 4}, {2, 3});
  ExpectGradient(plain_gradient([](const xl::Tensor& t) { return xl::cumprod(t, 1); }, m), {1, 8, 0, 1, 0, 0});
  ExpectGradient(plain_gradient([](const xl::Tensor& t) { return xl::cumprod(t, 0); }, m), {1, 1, 5, 2, 0, 3});
  // cumprod is a polynomial, so central differences hold at the zeros too.
  check_gradients([](const auto& t) { return xl::cumprod(t[0], 1); }, {m});
  check_gradients([](const auto& t) { return xl::cumprod(t[0], 0); }, {F64({2, 0, 3, 0, 5}, {5})});
}

TEST(AutogradBreadth, CummaxAndCumminValues) {
  auto x = input({3, 5}, 21);
  check_gradients([](const auto& t) { return xl::cummax(t[0], 1).values; }, {x});
  check_gradients([](const auto& t) { return xl::cummax(t[0], 0).values; }, {x});
  check_gradients([](const auto& t) { return xl::cummin(t[0], -1).values; }, {x});
}

// ---------------------------------------------------------------- sorting and selection

TEST(AutogradBreadth, SortValues) {
  auto x = input({3, 5}, 22);
  check_gradients([](const auto& t) { return xl::sort(t[0]).values; }, {x});
  check_gradients([](const auto& t) { return xl::sort(t[0], 0, true).values; }, {x});
}

TEST(AutogradBreadth, TopkValues) {
  auto x = input({3, 5}, 23);
  check_gradients([](const auto& t) { return xl::topk(t[0], 2).values; }, {x});
  check_gradients([](const auto& t) { return xl::topk(t[0], 3, -1, false).values; }, {x});
  check_gradients([](const auto& t) { return xl::topk(t[0], 1, 0).values; }, {x});
}

TEST(AutogradBreadth, KthvalueMedianAndMode) {
  auto x = input({3, 5}, 24);
  check_gradients([](const auto& t) { return xl::kthvalue(t[0], 2).values; }, {x});
  check_gradients([](const auto& t) { return xl::kthvalue(t[0], 3, 0, true).values; }, {x});
  check_gradients([](const auto& t) { return xl::median(t[0], 1).values; }, {x});
  check_gradients([](const auto& t) { return xl::median(t[0], 0, true).values; }, {x});
  check_gradients([](const auto& t) { return xl::median(t[0], 0).values; }, {input({4, 3}, 79)});  // the lower of two
  check_gradients([](const auto& t) { return xl::median(t[0]); }, {x});
  // Distinct values: every count is 1, so the mode is the smallest.
  check_gradients([](const auto& t) { return xl::mode(t[0], 1).values; }, {x});
}

// ---------------------------------------------------------------- repetition, rotation, diagonals

TEST(AutogradBreadth, RepeatAndTile) {
  auto x = input({2, 3}, 25);
  check_gradients([](const auto& t) { return xl::repeat(t[0], {2, 3}); }, {x});
  check_gradients([](const auto& t) { return xl::repeat(t[0], {2, 1, 2}); }, {x});
  check_gradients([](const auto& t) { return xl::tile(t[0], {2}); }, {x});
  check_gradients([](const auto& t) { return xl::tile(t[0], {3, 1, 1}); }, {x});
}

TEST(AutogradBreadth, RepeatInterleave) {
  auto x = input({2, 3}, 26);
  check_gradients([](const auto& t) { return xl::repeat_interleave(t[0], 2); }, {x});
  check_gradients([](const auto& t) { return xl::repeat_interleave(t[0], 3, -1); }, {x});
  xl::Tensor counts = xl::tensor(std::vector<int64_t>{2, 0, 3});
  check_gradients([counts](const auto& t) { return xl::repeat_interleave(t[0], counts, 1); }, {x});
  xl::Tensor flat = xl::tensor(std::vector<int64_t>{1, 0, 2, 3, 0, 1});
  check_gradients([flat](const auto& t) { return xl::repeat_interleave(t[0], flat); }, {x});
}

TEST(AutogradBreadth, Roll) {
  auto x = input({3, 4}, 27);
  check_gradients([](const auto& t) { return xl::roll(t[0], {5}); }, {x});
  check_gradients([](const auto& t) { return xl::roll(t[0], {1, -3}, {0, 1}); }, {x});
}

TEST(AutogradBreadth, DiagBothDirections) {
  check_gradients([](const auto& t) { return xl::diag(t[0]); }, {input({3}, 28)});
  check_gradients([](const auto& t) { return xl::diag(t[0], 1); }, {input({3}, 29)});
  check_gradients([](const auto& t) { return xl::diag(t[0], -2); }, {input({2}, 30)});
  auto m = input({3, 4}, 31);
  check_gradients([](const auto& t) { return xl::diag(t[0]); }, {m});
  check_gradients([](const auto& t) { return xl::diag(t[0], 1); }, {m});
  check_gradients([](const auto& t) { return xl::diag(t[0], -1); }, {m});
}

TEST(AutogradBreadth, DiagonalAndTrace) {
  auto a = input({2, 3, 4}, 32);
  check_gradients([](const auto& t) { return xl::diagonal(t[0]); }, {a});
  check_gradients([](const auto& t) { return xl::diagonal(t[0], 1, 1, 2); }, {a});
  check_gradients([](const auto& t) { return xl::diagonal(t[0], -1, -1, 0); }, {a});
  check_gradients([](const auto& t) { return xl::trace(t[0]); }, {input({3, 4}, 33)});
  check_gradients([](const auto& t) { return xl::trace(t[0]) * t[0]; }, {input({3, 3}, 34)});
}

TEST(AutogradBreadth, UnfoldWithOverlappingAndSkippingWindows) {
  auto x = input({2, 7}, 35);
  check_gradients([](const auto& t) { return xl::unfold(t[0], 1, 3, 2); }, {x});  // overlapping
  check_gradients([](const auto& t) { return xl::unfold(t[0], 1, 2, 3); }, {x});  // some elements in none
  check_gradients([](const auto& t) { return xl::unfold(t[0], 0, 2, 1); }, {x});
}

// ---------------------------------------------------------------- products

TEST(AutogradBreadth, OuterAndBmm) {
  check_gradients([](const auto& t) { return xl::outer(t[0], t[1]); }, {input({3}, 36), input({4}, 37)});
  check_gradients([](const auto& t) { return xl::bmm(t[0], t[1]); }, {input({2, 3, 4}, 38), input({2, 4, 2}, 39)});
}

TEST(AutogradBreadth, AddmmAndBaddbmm) {
  auto in = input({3}, 40), a = input({2, 4}, 41), b = input({4, 3}, 42);
  check_gradients([](const auto& t) { return xl::addmm(t[0], t[1], t[2]); }, {in, a, b});
  check_gradients([](const auto& t) { return xl::addmm(t[0], t[1], t[2], 0.5, -2); }, {in, a, b});
  check_gradients([](const auto& t) { return xl::addmm(t[0], t[1], t[2], 1.5, 0.25); }, {input({2, 3}, 43), a, b});
  auto bin = input({2, 1, 3}, 44), ba = input({2, 2, 4}, 45), bb = input({2, 4, 3}, 46);
  check_gradients([](const auto& t) { return xl::baddbmm(t[0], t[1], t[2]); }, {bin, ba, bb});
  check_gradients([](const auto& t) { return xl::baddbmm(t[0], t[1], t[2], 2, 0.5); }, {bin, ba, bb});
}

TEST(AutogradBreadth, Cross) {
  check_gradients([](const auto& t) { return xl::cross(t[0], t[1]); }, {input({2, 3}, 47), input({2, 3}, 48)});
  check_gradients([](const auto& t) { return xl::cross(t[0], t[1], 0); }, {input({3, 2}, 49), input({3, 2}, 50)});
}

TEST(AutogradBreadth, EinsumContractionsAndDiagonals) {
  auto a = input({2, 3}, 51), b = input({3, 4}, 52);
  check_gradients([](const auto& t) { return xl::einsum("ij,jk->ik", {t[0], t[1]}); }, {a, b});
  check_gradients([](const auto& t) { return xl::einsum("ij,jk", {t[0], t[1]}); }, {a, b});
  check_gradients([](const auto& t) { return xl::einsum("bij,bjk->bik", {t[0], t[1]}); },
                  {input({2, 2, 3}, 53), input({2, 3, 2}, 54)});
  auto s = input({3, 3}, 55);
  check_gradients([](const auto& t) { return xl::einsum("ii->i", {t[0]}); }, {s});
  check_gradients([](const auto& t) { return xl::einsum("ii", {t[0]}); }, {s});
  check_gradients([](const auto& t) { return xl::einsum("ij->ji", {t[0]}); }, {a});
  check_gradients([](const auto& t) { return xl::einsum("i,i->", {t[0], t[1]}); }, {input({4}, 56), input({4}, 57)});
  check_gradients([](const auto& t) { return xl::einsum("i,j->ij", {t[0], t[1]}); }, {input({3}, 58), input({2}, 59)});
  check_gradients([](const auto& t) { return xl::einsum("...ij,...jk->...ik", {t[0], t[1]}); },
                  {input({2, 2, 3}, 60), input({3, 2}, 61)});
  check_gradients([](const auto& t) { return xl::einsum("ij,jk,kl->il", {t[0], t[1], t[2]}); },
                  {a, b, input({4, 2}, 62)});
}

// ---------------------------------------------------------------- data-dependent selection

TEST(AutogradBreadth, MaskedSelect) {
  xl::Tensor mask = xl::tensor(std::vector<bool>{true, false, true, true, false, false}, {2, 3});
  check_gradients([mask](const auto& t) { return xl::masked_select(t[0], mask); }, {input({2, 3}, 63)});
}

// ---------------------------------------------------------------- convolution, pooling, resampling

TEST(AutogradBreadth, Conv1d) {
  auto x = input({2, 2, 7}, 64), w = input({3, 2, 3}, 65), bias = input({3}, 66);
  check_gradients([](const auto& t) { return xl::conv1d(t[0], t[1], t[2]); }, {x, w, bias});
  check_gradients([](const auto& t) { return xl::conv1d(t[0], t[1], t[2], 2, 1); }, {x, w, bias});
  check_gradients([](const auto& t) { return xl::conv1d(t[0], t[1], std::nullopt, 1, 2, 2); }, {x, w});
  check_gradients([](const auto& t) { return xl::conv1d(t[0], t[1], std::nullopt, 1, 0, 1, 2); },
                  {x, input({4, 1, 2}, 67)});
}

TEST(AutogradBreadth, ConvTranspose2d) {
  auto x = input({1, 2, 3, 3}, 68), w = input({2, 3, 3, 3}, 69), bias = input({3}, 70);
  check_gradients([](const auto& t) { return xl::conv_transpose2d(t[0], t[1], t[2], {2, 2}, {1, 1}, {1, 1}); },
                  {x, w, bias});
  check_gradients([](const auto& t) { return xl::conv_transpose2d(t[0], t[1]); }, {x, w});
  check_gradients(
      [](const auto& t) { return xl::conv_transpose2d(t[0], t[1], std::nullopt, {1, 2}, {0, 1}, {0, 1}, 2); },
      {input({1, 2, 2, 3}, 71), input({2, 1, 2, 2}, 72)});
}

TEST(AutogradBreadth, Pool1d) {
  auto x = input({2, 2, 7}, 73);
  check_gradients([](const auto& t) { return xl::avg_pool1d(t[0], 2); }, {x});
  check_gradients([](const auto& t) { return xl::avg_pool1d(t[0], 3, 2, 1); }, {x});
  check_gradients([](const auto& t) { return xl::avg_pool1d(t[0], 3, 1); }, {x});
  check_gradients([](const auto& t) { return xl::max_pool1d(t[0], 3, 2, 1); }, {x});
}

TEST(AutogradBreadth, AdaptiveAvgPool2dWithSizesThatDoNotDivide) {
  auto x = input({1, 2, 5, 7}, 74);
  check_gradients([](const auto& t) { return xl::adaptive_avg_pool2d(t[0], {3, 4}); }, {x});
  check_gradients([](const auto& t) { return xl::adaptive_avg_pool2d(t[0], {2, 3}); }, {x});
  check_gradients([](const auto& t) { return xl::adaptive_avg_pool2d(t[0], {1, 1}); }, {x});
}

TEST(AutogradBreadth, Interpolate) {
  auto x = input({1, 2, 3, 4}, 75);
  check_gradients([](const auto& t) { return xl::interpolate(t[0], {5, 7}, "bilinear"); }, {x});
  check_gradients([](const auto& t) { return xl::interpolate(t[0], {5, 7}, "bilinear", true); }, {x});
  check_gradients([](const auto& t) { return xl::interpolate(t[0], {2, 3}, "bilinear"); }, {x});
  check_gradients([](const auto& t) { return xl::interpolate(t[0], {6, 5}, "nearest"); }, {x});
}

TEST(AutogradBreadth, DropoutPassesTheGradientOfTheKeptElementsScaled) {
  xl::manual_seed(76);
  xl::Tensor x = F64(input({400}, 77, 0.5, 1.5).to_vector<double>());
  x.requires_grad_();
  xl::Tensor y = xl::dropout(x, 0.25);
  xl::sum(y).backward();
  std::vector<double> g = x.grad().to_vector<double>();
  std::vector<double> kept = y.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], kept[i] != 0 ? 1 / 0.75 : 0.0, 1e-12) << i;
  check_gradients([](const auto& t) { return xl::dropout(t[0], 0.5, false); }, {input({3, 4}, 78)});
}
