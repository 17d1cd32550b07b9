// Unit tests for the unary ops in xlite/ops.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

namespace {

using namespace xlite_test;

const std::vector<float> kX = {-2.0f, -0.5f, 0.0f, 0.5f, 1.5f};

}  // namespace

// ---------------------------------------------------------------- neg / abs

TEST(OpsUnary, NegFloat) {
  Tensor y = xlite::neg(F32(kX));
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{5}));
  ExpectClose(y.to_vector<float>(), {2.0, 0.5, 0.0, -0.5, -1.5});
}

TEST(OpsUnary, NegIntKeepsDtype) {
  Tensor y = xlite::neg(I32({1, -2, 3}));
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{-1, 2, -3}));
}

TEST(OpsUnary, NegOperatorAndMethod) {
  Tensor x = I64({5, -7});
  EXPECT_EQ((-x).to_vector<int64_t>(), (std::vector<int64_t>{-5, 7}));
  EXPECT_EQ(x.neg().to_vector<int64_t>(), (std::vector<int64_t>{-5, 7}));
  EXPECT_EQ((-x).dtype(), DType::i64);
}

TEST(OpsUnary, NegOfBoolThrows) {
  // PyTorch: "Negation, the `-` operator, on a bool tensor is not supported."
  Tensor b = Bool({true, false});
  EXPECT_THROW({ xlite::neg(b).to_vector<bool>(); }, xlite::Error);
}

TEST(OpsUnary, AbsFloat) {
  Tensor y = xlite::abs(F32(kX));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {2.0, 0.5, 0.0, 0.5, 1.5});
}

TEST(OpsUnary, AbsIntKeepsDtype) {
  Tensor y = xlite::abs(I64({-3, 0, 4}));
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 4}));
  EXPECT_EQ(I32({-9}).abs().to_vector<int32_t>(), (std::vector<int32_t>{9}));
}

// ---------------------------------------------------------------- exp / log family

TEST(OpsUnary, ExpValues) {
  Tensor y = xlite::exp(F32(kX));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.135335283, 0.60653066, 1.0, 1.64872127, 4.48168907});
}

TEST(OpsUnary, ExpOfIntGivesF32) {
  Tensor y = xlite::exp(I32({0, 1, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1.0, 2.71828183, 7.3890561});
}

TEST(OpsUnary, ExpOfI64GivesF32) {
  Tensor y = xlite::exp(I64({1}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {2.71828183});
}

TEST(OpsUnary, ExpOfBoolGivesF32) {
  Tensor y = xlite::exp(Bool({true, false}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {2.71828183, 1.0});
}

TEST(OpsUnary, ExpOverflowAndUnderflow) {
  ExpectClose(xlite::exp(F32({1000.0f, -1000.0f, -kInf})).to_vector<float>(), {INFINITY, 0.0, 0.0});
}

TEST(OpsUnary, Expm1Values) {
  ExpectClose(xlite::expm1(F32(kX)).to_vector<float>(), {-0.864664717, -0.39346934, 0.0, 0.648721271, 3.48168907});
}

TEST(OpsUnary, Expm1IsAccurateNearZero) {
  // exp(x) - 1 in f32 would give 1.1920929e-07 (19% off).
  ExpectClose(xlite::expm1(F32({1e-7f, -1e-7f})).to_vector<float>(), {1e-7, -1e-7}, 1e-4, 0.0);
}

TEST(OpsUnary, LogValues) {
  Tensor y = xlite::log(F32({0.25f, 1.0f, 2.0f, 4.0f}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {-1.38629436, 0.0, 0.693147181, 1.38629436});
}

TEST(OpsUnary, LogOfZeroAndNegative) {
  ExpectClose(xlite::log(F32({0.0f, -1.0f})).to_vector<float>(), {-INFINITY, NAN});
}

TEST(OpsUnary, LogOfIntGivesF32) {
  Tensor y = xlite::log(I32({1, 4}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.0, 1.38629436});
}

TEST(OpsUnary, Log1pValues) {
  ExpectClose(xlite::log1p(F32({-0.5f, 0.0f, 1.0f, 3.0f})).to_vector<float>(),
              {-0.693147181, 0.0, 0.693147181, 1.38629436});
  ExpectClose(xlite::log1p(F32({-1.0f})).to_vector<float>(), {-INFINITY});
}

TEST(OpsUnary, Log1pIsAccurateNearZero) {
  ExpectClose(xlite::log1p(F32({1e-7f})).to_vector<float>(), {1e-7}, 1e-4, 0.0);
}

TEST(OpsUnary, SqrtValues) {
  ExpectClose(xlite::sqrt(F32({0.25f, 1.0f, 2.0f, 4.0f, 0.0f})).to_vector<float>(), {0.5, 1.0, 1.41421356, 2.0, 0.0});
  ExpectClose(xlite::sqrt(F32({-1.0f})).to_vector<float>(), {NAN});
}

TEST(OpsUnary, SqrtOfIntGivesF32) {
  Tensor y = xlite::sqrt(I64({9, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {3.0, 1.41421356});
}

TEST(OpsUnary, RsqrtValues) {
  ExpectClose(xlite::rsqrt(F32({0.25f, 1.0f, 2.0f, 4.0f})).to_vector<float>(), {2.0, 1.0, 0.707106781, 0.5});
  ExpectClose(xlite::rsqrt(F32({0.0f})).to_vector<float>(), {INFINITY});
}

// ---------------------------------------------------------------- trig / activations

TEST(OpsUnary, SinValues) {
  ExpectClose(xlite::sin(F32(kX)).to_vector<float>(), {-0.909297427, -0.479425539, 0.0, 0.479425539, 0.997494987});
}

TEST(OpsUnary, CosValues) {
  ExpectClose(xlite::cos(F32(kX)).to_vector<float>(), {-0.416146837, 0.877582562, 1.0, 0.877582562, 0.0707372017});
}

TEST(OpsUnary, TanValues) {
  ExpectClose(xlite::tan(F32(kX)).to_vector<float>(), {2.18503986, -0.54630249, 0.0, 0.54630249, 14.1014199}, 1e-5,
              1e-5);
}

TEST(OpsUnary, TanhValues) {
  ExpectClose(xlite::tanh(F32(kX)).to_vector<float>(), {-0.96402758, -0.462117157, 0.0, 0.462117157, 0.905148254});
}

TEST(OpsUnary, TanhSaturatesWithoutNaN) {
  ExpectClose(xlite::tanh(F32({100.0f, -100.0f, 1000.0f})).to_vector<float>(), {1.0, -1.0, 1.0});
}

TEST(OpsUnary, SigmoidValues) {
  ExpectClose(xlite::sigmoid(F32(kX)).to_vector<float>(), {0.119202922, 0.377540669, 0.5, 0.622459331, 0.817574476});
}

TEST(OpsUnary, SigmoidSaturatesWithoutNaN) {
  ExpectClose(xlite::sigmoid(F32({-200.0f, 200.0f})).to_vector<float>(), {0.0, 1.0});
}

TEST(OpsUnary, SigmoidOfIntGivesF32) {
  Tensor y = xlite::sigmoid(I32({0}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.5});
}

TEST(OpsUnary, ReluFloat) {
  Tensor y = xlite::relu(F32(kX));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.0, 0.0, 0.0, 0.5, 1.5});
}

TEST(OpsUnary, ReluIntKeepsDtype) {
  Tensor y = xlite::relu(I32({-3, 0, 7}));
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 7}));
}

TEST(OpsUnary, GeluExact) {
  ExpectClose(xlite::gelu(F32(kX)).to_vector<float>(), {-0.0455002639, -0.154268769, 0.0, 0.345731231, 1.3997892}, 1e-5,
              1e-6);
  ExpectClose(xlite::gelu(F32(kX), "none").to_vector<float>(),
              {-0.0455002639, -0.154268769, 0.0, 0.345731231, 1.3997892}, 1e-5, 1e-6);
}

TEST(OpsUnary, GeluTanhApproximation) {
  ExpectClose(xlite::gelu(F32(kX), "tanh").to_vector<float>(),
              {-0.0454023059, -0.15428599, 0.0, 0.34571401, 1.39957158}, 1e-5, 1e-6);
}

TEST(OpsUnary, GeluUnknownApproximationThrows) {
  Tensor x = F32(kX);
  std::string msg = ErrorMessage([&] { xlite::gelu(x, "bogus").to_vector<float>(); });
  EXPECT_NE(msg.find("[gelu]"), std::string::npos) << msg;
}

TEST(OpsUnary, SiluValues) {
  ExpectClose(xlite::silu(F32(kX)).to_vector<float>(), {-0.238405844, -0.188770334, 0.0, 0.311229666, 1.22636171});
}

TEST(OpsUnary, ErfValues) {
  ExpectClose(xlite::erf(F32(kX)).to_vector<float>(), {-0.995322265, -0.520499878, 0.0, 0.520499878, 0.966105146});
  ExpectClose(xlite::erf(F32({kInf, -kInf})).to_vector<float>(), {1.0, -1.0});
}

// ---------------------------------------------------------------- rounding / sign

TEST(OpsUnary, FloorValues) {
  ExpectClose(xlite::floor(F32({-1.5f, -0.5f, 0.5f, 1.5f, 2.0f, -2.0f})).to_vector<float>(),
              {-2.0, -1.0, 0.0, 1.0, 2.0, -2.0});
}

TEST(OpsUnary, CeilValues) {
  ExpectClose(xlite::ceil(F32({-1.5f, -0.5f, 0.5f, 1.5f, 2.0f, -2.0f})).to_vector<float>(),
              {-1.0, 0.0, 1.0, 2.0, 2.0, -2.0});
}

TEST(OpsUnary, FloorCeilRoundOfIntKeepIntDtype) {
  Tensor x = I32({-3, 0, 5});
  for (Tensor y : {xlite::floor(x), xlite::ceil(x), xlite::round(x)}) {
    EXPECT_EQ(y.dtype(), DType::i32);
    EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{-3, 0, 5}));
  }
}

TEST(OpsUnary, RoundHalfToEven) {
  Tensor y = xlite::round(F32({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 0.4f, 0.6f, -0.6f}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {-2.0, -2.0, 0.0, 0.0, 2.0, 2.0, 4.0, 0.0, 1.0, -1.0});
}

TEST(OpsUnary, RoundKeepsLargeValues) {
  // 2^24 + 2 is exactly representable; a naive (x + 0.5) rounding path must not change it.
  ExpectClose(xlite::round(F32({16777218.0f, -16777218.0f})).to_vector<float>(), {16777218.0, -16777218.0}, 0.0, 0.0);
}

TEST(OpsUnary, SignFloat) {
  Tensor y = xlite::sign(F32({-3.0f, 0.0f, 2.5f, -0.1f}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {-1.0, 0.0, 1.0, -1.0});
}

TEST(OpsUnary, SignIntKeepsDtype) {
  Tensor y = xlite::sign(I64({-7, 0, 9}));
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
}

TEST(OpsUnary, ReciprocalValues) {
  ExpectClose(xlite::reciprocal(F32({2.0f, -4.0f, 0.5f, 0.0f})).to_vector<float>(), {0.5, -0.25, 2.0, INFINITY});
}

TEST(OpsUnary, ReciprocalOfIntGivesF32) {
  Tensor y = xlite::reciprocal(I32({2, 4}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.5, 0.25});
}

TEST(OpsUnary, SquareFloatAndInt) {
  ExpectClose(xlite::square(F32({-3.0f, 0.5f})).to_vector<float>(), {9.0, 0.25});
  Tensor yi = xlite::square(I32({-3, 4}));
  EXPECT_EQ(yi.dtype(), DType::i32);
  EXPECT_EQ(yi.to_vector<int32_t>(), (std::vector<int32_t>{9, 16}));
}

// ---------------------------------------------------------------- logical / predicates

TEST(OpsUnary, LogicalNotBool) {
  Tensor y = xlite::logical_not(Bool({true, false, true}));
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{false, true, false}));
}

TEST(OpsUnary, LogicalNotOfNumbersGivesBool) {
  Tensor y = xlite::logical_not(F32({0.0f, 2.5f, -1.0f}));
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((!I32({0, 3})).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(OpsUnary, IsNan) {
  Tensor y = xlite::isnan(F32({1.0f, kNaN, kInf, -kInf}));
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
}

TEST(OpsUnary, IsInf) {
  Tensor y = xlite::isinf(F32({1.0f, kNaN, kInf, -kInf}));
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
}

TEST(OpsUnary, IsNanIsInfOfIntAreFalse) {
  Tensor x = I32({0, 1, -5});
  Tensor a = xlite::isnan(x);
  Tensor b = xlite::isinf(x);
  EXPECT_EQ(a.dtype(), DType::bool_);
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_EQ(a.to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, false, false}));
}

// ---------------------------------------------------------------- layouts, shapes, dtypes

TEST(OpsUnary, OnTransposedInput) {
  Tensor x = F32({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, {2, 3});
  Tensor y = xlite::exp(xlite::transpose(x, 0, 1));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  ExpectClose(y.to_vector<float>(),
              {std::exp(0.0), std::exp(3.0), std::exp(1.0), std::exp(4.0), std::exp(2.0), std::exp(5.0)});
}

TEST(OpsUnary, OnSliceWithStep) {
  Tensor x = F32({-1.0f, -2.0f, -3.0f, -4.0f, -5.0f});
  Tensor y = xlite::abs(xlite::slice(x, 0, 0, 5, 2));
  EXPECT_EQ(y.shape(), (Shape{3}));
  ExpectClose(y.to_vector<float>(), {1.0, 3.0, 5.0});
}

TEST(OpsUnary, OnPermutedInput) {
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor y = xlite::square(xlite::permute(x, {2, 0, 1}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  ExpectClose(y.to_vector<float>(), {1, 9, 25, 49, 4, 16, 36, 64});
}

TEST(OpsUnary, OnEmptyTensor) {
  Tensor x = xlite::zeros({0, 3});
  Tensor y = xlite::sin(x);
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  EXPECT_EQ(y.numel(), 0);
  EXPECT_TRUE(y.to_vector<float>().empty());
}

TEST(OpsUnary, OnZeroDimTensor) {
  Tensor y = xlite::exp(xlite::tensor(1.0f));
  EXPECT_EQ(y.dim(), 0);
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_NEAR(y.item<float>(), 2.71828183f, 1e-6);
}

TEST(OpsUnary, F64KeepsDoublePrecision) {
  Tensor y = xlite::exp(F64({1.0, 1e-10}));
  EXPECT_EQ(y.dtype(), DType::f64);
  std::vector<double> v = y.to_vector<double>();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NEAR(v[0], std::exp(1.0), 1e-14);
  EXPECT_NEAR(v[1], 1.0 + 1e-10, 1e-15);  // f32 would give exactly 1
  Tensor s = xlite::sin(xlite::full({}, 0.5, DType::f64));
  EXPECT_EQ(s.dtype(), DType::f64);
  EXPECT_NEAR(s.item<double>(), std::sin(0.5), 1e-15);
}

TEST(OpsUnary, F16ResultRoundsTo16Bits) {
  Tensor x = F32({1.0f}).to(DType::f16);
  Tensor e = xlite::exp(x);
  EXPECT_EQ(e.dtype(), DType::f16);
  EXPECT_EQ(e.to_vector<float>()[0], 2.71875f);  // e rounded to f16
  Tensor s = xlite::sin(x);
  EXPECT_EQ(s.dtype(), DType::f16);
  EXPECT_EQ(s.to_vector<float>()[0], 0.84130859375f);
}

TEST(OpsUnary, BF16ResultRoundsTo16Bits) {
  Tensor x = F32({1.0f}).to(DType::bf16);
  Tensor s = xlite::sin(x);
  EXPECT_EQ(s.dtype(), DType::bf16);
  EXPECT_EQ(s.to_vector<float>()[0], 0.83984375f);  // sin(1) = 0.84147 rounded to bf16
  Tensor r = xlite::relu(F32({-1.0f, 3.0f}).to(DType::bf16));
  EXPECT_EQ(r.dtype(), DType::bf16);
  ExpectClose(r.to_vector<float>(), {0.0, 3.0});
}

TEST(OpsUnary, F16IsNan) {
  Tensor x = F32({kNaN, 1.0f}).to(DType::f16);
  EXPECT_EQ(xlite::isnan(x).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(OpsUnary, ChainedOpsCompose) {
  Tensor x = F32({0.5f, 1.0f, 2.0f});
  ExpectClose(xlite::log(xlite::exp(x)).to_vector<float>(), {0.5, 1.0, 2.0});
  ExpectClose(xlite::square(xlite::sqrt(x)).to_vector<float>(), {0.5, 1.0, 2.0});
}

TEST(OpsUnary, MethodForms) {
  Tensor x = F32({-1.0f, 4.0f});
  ExpectClose(x.abs().sqrt().to_vector<float>(), {1.0, 2.0});
  ExpectClose(x.relu().to_vector<float>(), {0.0, 4.0});
  ExpectClose(x.square().to_vector<float>(), {1.0, 16.0});
  ExpectClose(x.tanh().to_vector<float>(), {-0.761594156, 0.999329300});
  ExpectClose(x.sigmoid().to_vector<float>(), {0.268941421, 0.982013790});
  ExpectClose(x.sin().to_vector<float>(), {-0.841470985, -0.756802495});
  ExpectClose(x.cos().to_vector<float>(), {0.540302306, -0.653643621});
  ExpectClose(x.exp().log().to_vector<float>(), {-1.0, 4.0});
}

TEST(OpsUnary, UndefinedTensorThrows) {
  Tensor undefined;
  EXPECT_THROW(xlite::exp(undefined), xlite::Error);
  EXPECT_THROW(xlite::neg(undefined), xlite::Error);
}

TEST(OpsUnary, EagerModeValues) {
  xlite::EagerModeGuard guard(true);
  Tensor x = F32({-1.0f, 0.0f, 2.0f});
  Tensor y = xlite::exp(x);
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.367879441, 1.0, 7.3890561});
  ExpectClose(xlite::relu(x).to_vector<float>(), {0.0, 0.0, 2.0});
  Tensor r = xlite::round(F32({0.5f, 1.5f}));
  ExpectClose(r.to_vector<float>(), {0.0, 2.0});
  Tensor n = xlite::isnan(xlite::log(F32({-1.0f})));
  EXPECT_EQ(n.to_vector<bool>(), (std::vector<bool>{true}));
}

TEST(OpsUnary, EagerModeErrorStillThrows) {
  xlite::EagerModeGuard guard(true);
  Tensor x = F32({1.0f});
  EXPECT_THROW(xlite::gelu(x, "bogus"), xlite::Error);
}

TEST(OpsUnary, LazyResultIsPendingUntilRead) {
  Tensor x = F32({4.0f});
  Tensor y = xlite::sqrt(x);
  EXPECT_TRUE(y.is_pending());
  EXPECT_FLOAT_EQ(y.item<float>(), 2.0f);
}
