// Unit tests for the tensor factories in xlite/factories.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

namespace {

using namespace xlite_test;

double Mean(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

double Variance(const std::vector<float>& v) {
  double m = Mean(v), s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}

}  // namespace

// ---------------------------------------------------------------- tensor()

TEST(Factories, ScalarTensorTypes) {
  Tensor f = xlite::tensor(1.5f);
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(f.shape(), (Shape{}));
  EXPECT_EQ(f.dim(), 0);
  EXPECT_EQ(f.numel(), 1);
  EXPECT_FLOAT_EQ(f.item<float>(), 1.5f);

  // Literals take PyTorch's dtypes: a floating value the default dtype, an integer i64.
  Tensor d = xlite::tensor(0.1);
  EXPECT_EQ(d.dtype(), DType::f32);
  EXPECT_EQ(d.item<float>(), 0.1f);

  Tensor i = xlite::tensor(42);
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(i.item<int64_t>(), 42);

  Tensor l = xlite::tensor(int64_t{1} << 40);
  EXPECT_EQ(l.dtype(), DType::i64);
  EXPECT_EQ(l.item<int64_t>(), int64_t{1} << 40);

  Tensor b = xlite::tensor(true);
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_TRUE(b.item<bool>());
}

TEST(Factories, TensorFromDataAndShape) {
  Tensor t = xlite::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_FALSE(t.is_pending());
  EXPECT_EQ(t.to_vector<float>(), (FV{1, 2, 3, 4, 5, 6}));
}

TEST(Factories, TensorOneDim) {
  Tensor t = xlite::tensor(std::vector<int64_t>{5, -6});
  EXPECT_EQ(t.shape(), (Shape{2}));
  EXPECT_EQ(t.dtype(), DType::i64);
  EXPECT_EQ(t.to_vector<int64_t>(), (LV{5, -6}));
}

TEST(Factories, TensorOfEachElementType) {
  Tensor d = xlite::tensor(std::vector<double>{0.1, 0.2});
  EXPECT_EQ(d.dtype(), DType::f64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0.1, 0.2}));
  Tensor i = xlite::tensor(std::vector<int32_t>{-1, 2147483647});
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-1, 2147483647}));
  Tensor u = xlite::tensor(std::vector<uint8_t>{0, 255});
  EXPECT_EQ(u.dtype(), DType::u8);
  EXPECT_EQ(u.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255}));
  Tensor b = xlite::tensor(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(Factories, TensorEmpty) {
  Tensor e = xlite::tensor(std::vector<float>{}, Shape{2, 0});
  EXPECT_EQ(e.shape(), (Shape{2, 0}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  EXPECT_EQ(xlite::tensor(std::vector<float>{}).shape(), (Shape{0}));
}

TEST(Factories, TensorSizeMismatchThrows) {
  std::vector<float> data{1, 2, 3};
  EXPECT_THROW(xlite::tensor(data, Shape{2, 2}), xlite::Error);
  EXPECT_THROW(xlite::tensor(data, Shape{}), xlite::Error);
}

TEST(Factories, TensorNegativeShapeThrows) {
  std::vector<float> data{};
  EXPECT_THROW(xlite::tensor(data, Shape{-1, 0}), xlite::Error);
}

TEST(Factories, TensorIsOnDefaultDevice) {
  Tensor t = xlite::tensor(std::vector<float>{1});
  EXPECT_EQ(t.device(), xlite::device());
  EXPECT_EQ(xlite::zeros({2}).device(), xlite::device());
}

TEST(Factories, TensorReadAsOtherType) {
  Tensor t = xlite::tensor(std::vector<int32_t>{1, -2, 3});
  EXPECT_EQ(t.to_vector<float>(), (FV{1, -2, 3}));
  EXPECT_EQ(t.to_vector<int64_t>(), (LV{1, -2, 3}));
}

// ---------------------------------------------------------------- zeros / ones / full

TEST(Factories, ZerosOnes) {
  Tensor z = xlite::zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::f32);
  EXPECT_EQ(z.to_vector<float>(), FV(6, 0.0f));
  Tensor o = xlite::ones({4});
  EXPECT_EQ(o.to_vector<float>(), FV(4, 1.0f));
}

TEST(Factories, ZerosOnesDtypes) {
  Tensor zi = xlite::zeros({2}, DType::i32);
  EXPECT_EQ(zi.dtype(), DType::i32);
  EXPECT_EQ(zi.to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  Tensor ob = xlite::ones({2}, DType::bool_);
  EXPECT_EQ(ob.dtype(), DType::bool_);
  EXPECT_EQ(ob.to_vector<bool>(), (std::vector<bool>{true, true}));
  Tensor oh = xlite::ones({3}, DType::f16);
  EXPECT_EQ(oh.dtype(), DType::f16);
  EXPECT_EQ(oh.to_vector<float>(), FV(3, 1.0f));
  Tensor od = xlite::ones({1}, DType::f64);
  EXPECT_EQ(od.dtype(), DType::f64);
  EXPECT_EQ(od.to_vector<double>(), (std::vector<double>{1.0}));
  EXPECT_EQ(xlite::ones({2}, DType::u8).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(xlite::zeros({1}, DType::bf16).dtype(), DType::bf16);
}

TEST(Factories, ZerosAreLazy) {
  Tensor z = xlite::zeros({2});
  EXPECT_TRUE(z.is_pending());
  EXPECT_EQ(z.to_vector<float>(), (FV{0, 0}));
}

TEST(Factories, ZeroSizeAndZeroDim) {
  Tensor e = xlite::zeros({2, 0, 3});
  EXPECT_EQ(e.shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  Tensor s = xlite::ones({});
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(s.item<float>(), 1.0f);
}

TEST(Factories, NegativeShapeThrows) {
  EXPECT_THROW(xlite::zeros({-1}), xlite::Error);
  EXPECT_THROW(xlite::ones({2, -3}), xlite::Error);
  EXPECT_THROW(xlite::full({-2}, 1.0), xlite::Error);
}

TEST(Factories, FullValues) {
  Tensor f = xlite::full({2, 2}, 3.5);
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(f.to_vector<float>(), FV(4, 3.5f));
  Tensor i = xlite::full({3}, 7, DType::i32);
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{7, 7, 7}));
  Tensor b = xlite::full({2}, true, DType::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true}));
  Tensor n = xlite::full({1}, -2.25, DType::f64);
  EXPECT_EQ(n.to_vector<double>(), (std::vector<double>{-2.25}));
}

TEST(Factories, FullKeepsLargeI64Exactly) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in a double
  Tensor t = xlite::full({2}, big, DType::i64);
  EXPECT_EQ(t.to_vector<int64_t>(), (LV{big, big}));
}

TEST(Factories, FullRoundsToHalfPrecision) {
  Tensor h = xlite::full({1}, 1.0 / 3.0, DType::f16);
  EXPECT_EQ(h.to_vector<float>()[0], 0.333251953125f);
  Tensor b = xlite::full({1}, 0.1, DType::bf16);
  EXPECT_EQ(b.to_vector<float>()[0], 0.10009765625f);
  Tensor f = xlite::full({1}, 0.1, DType::f32);
  EXPECT_EQ(f.to_vector<float>()[0], 0.1f);
}

TEST(Factories, FullWithNaNAndInf) {
  Tensor t = xlite::full({2}, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(t.to_vector<float>()[0]));
  Tensor n = xlite::full({1}, std::nan(""));
  EXPECT_TRUE(std::isnan(n.item<float>()));
}

TEST(Factories, LikeFactoriesKeepShapeAndDtype) {
  Tensor x = xlite::tensor(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{3, 2});
  Tensor z = xlite::zeros_like(x);
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), std::vector<int32_t>(6, 0));
  Tensor o = xlite::ones_like(x);
  EXPECT_EQ(o.dtype(), DType::i32);
  EXPECT_EQ(o.to_vector<int32_t>(), std::vector<int32_t>(6, 1));
  Tensor f = xlite::full_like(x, 9);
  EXPECT_EQ(f.shape(), (Shape{3, 2}));
  EXPECT_EQ(f.dtype(), DType::i32);
  EXPECT_EQ(f.to_vector<int32_t>(), std::vector<int32_t>(6, 9));
}

TEST(Factories, LikeFactoriesOfHalfAndEmpty) {
  Tensor h = xlite::full_like(xlite::zeros({2}, DType::f16), 0.5);
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.to_vector<float>(), (FV{0.5, 0.5}));
  Tensor e = xlite::ones_like(xlite::zeros({0, 4}));
  EXPECT_EQ(e.shape(), (Shape{0, 4}));
}

TEST(Factories, LikeOfUndefinedThrows) {
  Tensor undefined;
  EXPECT_THROW(xlite::zeros_like(undefined), xlite::Error);
}

// ---------------------------------------------------------------- arange

TEST(Factories, ArangeStopOnly) {
  Tensor a = xlite::arange(5);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.shape(), (Shape{5}));
  EXPECT_EQ(a.to_vector<int64_t>(), (LV{0, 1, 2, 3, 4}));
}

TEST(Factories, ArangeStartStopStep) {
  EXPECT_EQ(xlite::arange(2, 7).to_vector<int64_t>(), (LV{2, 3, 4, 5, 6}));
  EXPECT_EQ(xlite::arange(0, 10, 3).to_vector<int64_t>(), (LV{0, 3, 6, 9}));
  EXPECT_EQ(xlite::arange(5, 0, -2).to_vector<int64_t>(), (LV{5, 3, 1}));
  EXPECT_EQ(xlite::arange(-3, 0).to_vector<int64_t>(), (LV{-3, -2, -1}));
}

TEST(Factories, ArangeFloat) {
  Tensor a = xlite::arange(0.0, 1.0, 0.25);
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.to_vector<float>(), (FV{0, 0.25, 0.5, 0.75}));
  Tensor b = xlite::arange(0.0, 1.0, 0.1);
  EXPECT_EQ(b.numel(), 10);
  std::vector<float> v = b.to_vector<float>();
  ASSERT_EQ(v.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(v[i], 0.1 * i, 1e-6);
}

TEST(Factories, ArangeMixedIntAndFloatIsF32) {
  Tensor a = xlite::arange(1, 2.5);
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.to_vector<float>(), (FV{1, 2}));
  Tensor b = xlite::arange(2.5);
  EXPECT_EQ(b.dtype(), DType::f32);
  EXPECT_EQ(b.to_vector<float>(), (FV{0, 1, 2}));
}

TEST(Factories, ArangeEmpty) {
  Tensor a = xlite::arange(0);
  EXPECT_EQ(a.shape(), (Shape{0}));
  EXPECT_EQ(xlite::arange(3, 3).numel(), 0);
}

TEST(Factories, ArangeBadStepThrowsNamingOp) {
  std::string msg = ErrorMessage([] { xlite::arange(0, 5, 0).to_vector<int64_t>(); });
  EXPECT_NE(msg.find("[arange]"), std::string::npos) << msg;
  // step sign inconsistent with the bounds, like PyTorch
  EXPECT_THROW({ xlite::arange(5, 0, 1).to_vector<int64_t>(); }, xlite::Error);
  EXPECT_THROW({ xlite::arange(-3).to_vector<int64_t>(); }, xlite::Error);
}

TEST(Factories, ArangeUsedInOps) {
  Tensor y = xlite::mul(xlite::arange(4), 2);
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (LV{0, 2, 4, 6}));
  EXPECT_EQ(xlite::reshape(xlite::arange(6), {2, 3}).shape(), (Shape{2, 3}));
}

// ---------------------------------------------------------------- eye

TEST(Factories, EyeSquare) {
  Tensor e = xlite::eye(3);
  EXPECT_EQ(e.shape(), (Shape{3, 3}));
  EXPECT_EQ(e.dtype(), DType::f32);
  EXPECT_EQ(e.to_vector<float>(), (FV{1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(Factories, EyeRectangular) {
  EXPECT_EQ(xlite::eye(2, 4).to_vector<float>(), (FV{1, 0, 0, 0, 0, 1, 0, 0}));
  Tensor t = xlite::eye(3, 2);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<float>(), (FV{1, 0, 0, 1, 0, 0}));
}

TEST(Factories, EyeDtypesAndEmpty) {
  Tensor i = xlite::eye(2, -1, DType::i64);
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(i.to_vector<int64_t>(), (LV{1, 0, 0, 1}));
  Tensor b = xlite::eye(2, 2, DType::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(xlite::eye(0).shape(), (Shape{0, 0}));
}

TEST(Factories, EyeNegativeThrows) {
  EXPECT_THROW(xlite::eye(-2), xlite::Error);
  EXPECT_THROW(xlite::eye(2, -3), xlite::Error);
}

// ---------------------------------------------------------------- random

TEST(Factories, RandShapeDtypeAndRange) {
  xlite::manual_seed(0);
  Tensor r = xlite::rand({100, 100});
  EXPECT_EQ(r.shape(), (Shape{100, 100}));
  EXPECT_EQ(r.dtype(), DType::f32);
  std::vector<float> v = r.to_vector<float>();
  ASSERT_EQ(v.size(), 10000u);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0f);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0f);
}

TEST(Factories, RandMomentsMatchUniform) {
  xlite::manual_seed(1234);
  std::vector<float> v = xlite::rand({10000}).to_vector<float>();
  EXPECT_NEAR(Mean(v), 0.5, 0.015);             // std error ~0.003
  EXPECT_NEAR(Variance(v), 1.0 / 12.0, 0.004);  // 0.0833
  // Roughly a quarter of the samples in each quarter of [0,1).
  int64_t low = std::count_if(v.begin(), v.end(), [](float x) { return x < 0.25f; });
  EXPECT_NEAR(static_cast<double>(low) / 10000.0, 0.25, 0.02);
}

TEST(Factories, RandnMomentsMatchNormal) {
  xlite::manual_seed(99);
  Tensor r = xlite::randn({10000});
  EXPECT_EQ(r.dtype(), DType::f32);
  std::vector<float> v = r.to_vector<float>();
  ASSERT_EQ(v.size(), 10000u);
  EXPECT_NEAR(Mean(v), 0.0, 0.05);  // std error 0.01
  EXPECT_NEAR(std::sqrt(Variance(v)), 1.0, 0.05);
  int64_t within = std::count_if(v.begin(), v.end(), [](float x) { return std::fabs(x) < 1.0f; });
  EXPECT_NEAR(static_cast<double>(within) / 10000.0, 0.6827, 0.02);
  for (float x : v) ASSERT_TRUE(std::isfinite(x));
}

TEST(Factories, SameSeedGivesSameValues) {
  xlite::manual_seed(42);
  std::vector<float> a = xlite::rand({100}).to_vector<float>();
  std::vector<float> an = xlite::randn({50}).to_vector<float>();
  xlite::manual_seed(42);
  std::vector<float> b = xlite::rand({100}).to_vector<float>();
  std::vector<float> bn = xlite::randn({50}).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_EQ(an, bn);
}

TEST(Factories, SuccessiveDrawsDiffer) {
  xlite::manual_seed(7);
  std::vector<float> a = xlite::rand({100}).to_vector<float>();
  std::vector<float> b = xlite::rand({100}).to_vector<float>();
  EXPECT_NE(a, b);
  // And within one draw the values are not all the same.
  EXPECT_NE(*std::min_element(a.begin(), a.end()), *std::max_element(a.begin(), a.end()));
}

TEST(Factories, SuccessiveDrawsInOneGraphDiffer) {
  xlite::manual_seed(7);
  Tensor a = xlite::randn({64});
  Tensor b = xlite::randn({64});
  xlite::sync();
  EXPECT_NE(a.to_vector<float>(), b.to_vector<float>());
}

TEST(Factories, DifferentSeedsDiffer) {
  xlite::manual_seed(1);
  std::vector<float> a = xlite::rand({100}).to_vector<float>();
  xlite::manual_seed(2);
  std::vector<float> b = xlite::rand({100}).to_vector<float>();
  EXPECT_NE(a, b);
}

TEST(Factories, RandSamplesAreNotCorrelated) {
  xlite::manual_seed(5);
  std::vector<float> v = xlite::rand({10000}).to_vector<float>();
  double s = 0;
  for (size_t i = 0; i + 1 < v.size(); ++i) s += (v[i] - 0.5) * (v[i + 1] - 0.5);
  EXPECT_NEAR(s / 9999.0, 0.0, 0.005);  // lag-1 covariance; std error ~0.0008
}

TEST(Factories, RandOtherFloatDtypes) {
  Tensor d = xlite::rand({1000}, DType::f64);
  EXPECT_EQ(d.dtype(), DType::f64);
  std::vector<double> dv = d.to_vector<double>();
  for (double x : dv) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
  }
  Tensor h = xlite::randn({100}, DType::f16);
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.numel(), 100);
  Tensor b = xlite::rand({100}, DType::bf16);
  EXPECT_EQ(b.dtype(), DType::bf16);
  for (float x : b.to_vector<float>()) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LE(x, 1.0f);
  }
}

TEST(Factories, RandIntegerDtypeThrows) {
  EXPECT_THROW({ xlite::rand({2}, DType::i32).to_vector<int32_t>(); }, xlite::Error);
  EXPECT_THROW({ xlite::randn({2}, DType::i64).to_vector<int64_t>(); }, xlite::Error);
}

TEST(Factories, RandLikeKeepsShapeAndDtype) {
  Tensor x = xlite::zeros({3, 4}, DType::f64);
  Tensor r = xlite::rand_like(x);
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_EQ(r.dtype(), DType::f64);
  Tensor n = xlite::randn_like(xlite::zeros({5}));
  EXPECT_EQ(n.shape(), (Shape{5}));
  EXPECT_EQ(n.dtype(), DType::f32);
  EXPECT_EQ(n.to_vector<float>().size(), 5u);
}

TEST(Factories, RandEmptyAndZeroDim) {
  EXPECT_EQ(xlite::rand({0, 3}).numel(), 0);
  EXPECT_TRUE(xlite::rand({0}).to_vector<float>().empty());
  float s = xlite::rand({}).item<float>();
  EXPECT_GE(s, 0.0f);
  EXPECT_LT(s, 1.0f);
}

TEST(Factories, RandUsedInGraph) {
  xlite::manual_seed(3);
  Tensor r = xlite::rand({1000});
  Tensor y = xlite::add(xlite::mul(r, 2), -1);  // U[-1, 1)
  std::vector<float> v = y.to_vector<float>();
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -1.0f);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0f);
  EXPECT_NEAR(Mean(v), 0.0, 0.1);
  // r itself, read afterwards, is consistent with y.
  std::vector<float> rv = r.to_vector<float>();
  for (size_t i = 0; i < rv.size(); ++i) ASSERT_NEAR(v[i], rv[i] * 2 - 1, 1e-6);
}

// ---------------------------------------------------------------- eager mode

TEST(Factories, EagerModeFactories) {
  xlite::EagerModeGuard guard(true);
  Tensor z = xlite::zeros({2}, DType::i32);
  EXPECT_FALSE(z.is_pending());
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(xlite::arange(3).to_vector<int64_t>(), (LV{0, 1, 2}));
  EXPECT_EQ(xlite::eye(2).to_vector<float>(), (FV{1, 0, 0, 1}));
  xlite::manual_seed(11);
  std::vector<float> a = xlite::rand({20}).to_vector<float>();
  xlite::manual_seed(11);
  std::vector<float> b = xlite::rand({20}).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_THROW(xlite::zeros({-1}), xlite::Error);
}
