// Known values (from PyTorch 2.x), edge cases and errors of the ops and factories added for breadth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <xlite/xlite.h>

#include "backend_support.h"
#include "test_support.h"

namespace xl = xlite;
using namespace xlite_test;

namespace {

using BV = std::vector<bool>;
using DV = std::vector<double>;

// Expects fn to throw xlite::Error whose message names the public op as "[op]".
template <class Fn>
void ExpectOpError(const std::string& op, Fn&& fn) {
  std::string msg = ErrorMessage(std::forward<Fn>(fn));
  EXPECT_EQ(msg.rfind("non-xlite exception", 0), std::string::npos) << msg;
  EXPECT_NE(msg.find("[" + op + "]"), std::string::npos) << "want [" << op << "] in: " << msg;
}

std::vector<int64_t> Ints(const Tensor& t) { return t.to_vector<int64_t>(); }
std::vector<bool> Bools(const Tensor& t) { return t.to_vector<bool>(); }

// [[1,2,3],[4,5,6]]
Tensor M23() { return F32({1, 2, 3, 4, 5, 6}, {2, 3}); }

// Fraction of v equal to value.
double Fraction(const std::vector<int64_t>& v, int64_t value) {
  return static_cast<double>(std::count(v.begin(), v.end(), value)) / static_cast<double>(v.size());
}

}  // namespace

// ---------------------------------------------------------------- inverse trigonometric and hyperbolic

TEST(OpsBreadth, AsinAcosAtanMatchTorch) {
  Tensor x = F32({-1, -0.5, 0, 0.3, 1});
  ExpectClose(Vals(xl::asin(x)), {-1.57079637, -0.52359879, 0, 0.304692656, 1.57079637});
  ExpectClose(Vals(xl::acos(x)), {3.14159274, 2.09439516, 1.57079637, 1.26610363, 0});
  ExpectClose(Vals(xl::atan(F32({-1e10, -1, 0, 0.5, 3}))), {-1.57079637, -0.785398185, 0, 0.463647604, 1.24904573});
  EXPECT_EQ(xl::asin(x).shape(), (Shape{5}));
  EXPECT_EQ(xl::acos(F64({0.5})).dtype(), DType::f64);
}

TEST(OpsBreadth, AsinOutsideItsDomainIsNaN) {
  ExpectClose(Vals(xl::asin(F32({2, -1.5}))), {NAN, NAN});
  ExpectClose(Vals(xl::acos(F32({1.5}))), {NAN});
}

TEST(OpsBreadth, InverseTrigOfIntegersIsF32) {
  Tensor a = xl::asin(I32({0, 1}));
  EXPECT_EQ(a.dtype(), DType::f32);
  ExpectClose(Vals(a), {0, 1.57079637});
  Tensor t = xl::atan(I64({0, 1, 2}));
  EXPECT_EQ(t.dtype(), DType::f32);
  ExpectClose(Vals(t), {0, 0.785398185, 1.10714877});
}

TEST(OpsBreadth, Atan2CoversEveryQuadrantAndTheAxes) {
  Tensor y = F32({1, 1, -1, -1, 0, 0, 2, -2});
  Tensor x = F32({1, -1, 1, -1, 1, -1, 0, 0});
  ExpectClose(Vals(xl::atan2(y, x)),
              {0.785398185, 2.3561945, -0.785398185, -2.3561945, 0, 3.14159274, 1.57079637, -1.57079637});
  ExpectClose(Vals(xl::atan2(F32({0}), F32({0}))), {0});
}

TEST(OpsBreadth, Atan2BroadcastsAndPromotesIntegers) {
  Tensor r = xl::atan2(F32({1, -2}, {2, 1}), F32({1, 2, -3}));
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  ExpectClose(Vals(r), {0.785398185, 0.463647604, 2.8198421, -1.10714877, -0.785398185, -2.55359006});
  Tensor i = xl::atan2(I32({1, 2}), I32({1, 0}));
  EXPECT_EQ(i.dtype(), DType::f32);
  ExpectClose(Vals(i), {0.785398185, 1.57079637});
}

TEST(OpsBreadth, SinhAndCoshIncludingOverflowToInfinity) {
  Tensor s = F32({-2, -0.5, 0, 1e-4, 1, 3, 90, -90});
  ExpectClose(Vals(xl::sinh(s)),
              {-3.62686038, -0.521095276, 0, 9.99999975e-05, 1.17520118, 10.0178747, INFINITY, -INFINITY});
  ExpectClose(Vals(xl::cosh(s)), {3.76219583, 1.12762594, 1, 1, 1.54308057, 10.0676622, INFINITY, INFINITY});
  EXPECT_EQ(xl::sinh(I32({1})).dtype(), DType::f32);
  EXPECT_EQ(xl::cosh(F64({1})).dtype(), DType::f64);
}

TEST(OpsBreadth, SinhOfSmallArgumentsKeepsRelativePrecision) {
  // (exp(x) - exp(-x)) / 2 in f32 loses most digits here; PyTorch's sinh does not.
  ExpectClose(Vals(xl::sinh(F32({1e-4, -3e-5, 1e-3}))), {9.99999975e-05, -2.99999992e-05, 0.00100000016}, 1e-4, 0);
}

// ---------------------------------------------------------------- logaddexp and hypot

TEST(OpsBreadth, LogaddexpDoesNotOverflowOrUnderflow) {
  Tensor a = F32({1000, -1000, 0, 1, -3, 80, -INFINITY, 100});
  Tensor b = F32({1000, -1000, 0, 2, 5, 89, 2, -100});
  ExpectClose(Vals(xl::logaddexp(a, b)),
              {1000.69318, -999.306824, 0.693147182, 2.31326175, 5.00033522, 89.0001221, 2, 100});
}

TEST(OpsBreadth, LogaddexpOfEqualInfinitiesIsThatInfinity) {
  ExpectClose(Vals(xl::logaddexp(F32({INFINITY, -INFINITY}), F32({INFINITY, -INFINITY}))), {INFINITY, -INFINITY});
}

TEST(OpsBreadth, LogaddexpInF64AndBroadcasting) {
  Tensor r = xl::logaddexp(F64({800}), F64({799}));
  EXPECT_EQ(r.dtype(), DType::f64);
  EXPECT_NEAR(r.item<double>(), 800.313261687518, 1e-9);
  Tensor b = xl::logaddexp(F32({0, 1}, {2, 1}), F32({0, 1}));
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  ExpectClose(Vals(b), {0.693147182, 1.31326163, 1.31326163, 1.69314718});
}

TEST(OpsBreadth, HypotDoesNotOverflowOrUnderflow) {
  Tensor a = F32({3, 1e30, 1e-30, 0, -5, 1e38, -2});
  Tensor b = F32({4, 1e30, 1e-30, 0, 12, 1e38, 0});
  ExpectClose(Vals(xl::hypot(a, b)), {5, 1.41421351e+30, 1.41421356e-30, 0, 13, 1.41421352e+38, 2}, 1e-5, 0);
}

TEST(OpsBreadth, HypotBroadcasts) {
  Tensor r = xl::hypot(F32({3, 5}, {2, 1}), F32({4, 12}));
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  ExpectClose(Vals(r), {5, 12.3693171, 6.40312433, 13});
}

// ---------------------------------------------------------------- activations

TEST(OpsBreadth, SoftplusFollowsTheThresholdAndStaysAccurateForVeryNegativeInputs) {
  Tensor x = F32({-30, -1, 0, 1, 19, 21, 100, 1000});
  std::vector<float> got = Vals(xl::softplus(x));
  ExpectClose(got, {9.35762291e-14, 0.313261688, 0.693147182, 1.31326163, 19, 21, 100, 1000});
  EXPECT_NEAR(got[0], 9.35762291e-14, 1e-18);  // log1p(exp(x)), not log(1 + exp(x)) which rounds to 0
}

TEST(OpsBreadth, SoftplusWithBetaAndThreshold) {
  ExpectClose(Vals(xl::softplus(F32({-1, 0, 2, 2.4, 3, 100}), 2, 5)),
              {0.0634640008, 0.346573591, 2.00907493, 2.40409803, 3, 100});
  ExpectClose(Vals(xl::softplus(F32({-1, 0, 2, 50, 100}), 0.5)), {0.948153973, 1.38629436, 2.62652326, 50, 100});
}

TEST(OpsBreadth, SoftplusInF64BelowAHighThreshold) {
  Tensor r = xl::softplus(F64({-800, 700, 15}), 1, 1000);
  EXPECT_EQ(r.dtype(), DType::f64);
  std::vector<double> v = r.to_vector<double>();
  EXPECT_EQ(v[0], 0.0);
  EXPECT_NEAR(v[1], 700, 1e-9);  // exp(700) is finite in f64
  EXPECT_NEAR(v[2], 15.000000305902274, 1e-12);
}

TEST(OpsBreadth, MishMatchesTorch) {
  ExpectClose(Vals(xl::mish(F32({-30, -3, -1, 0, 0.5, 2, 25, 100}))),
              {-2.80728695e-12, -0.145647466, -0.30340144, 0, 0.375245243, 1.943959, 25, 100});
}

TEST(OpsBreadth, HardsigmoidAndHardswishAcrossTheirPieces) {
  Tensor x = F32({-4, -3, -1.5, 0, 1, 2.9, 3, 4});
  ExpectClose(Vals(xl::hardsigmoid(x)), {0, 0, 0.25, 0.5, 0.666666687, 0.983333349, 1, 1});
  ExpectClose(Vals(xl::hardswish(x)), {0, 0, -0.375, 0, 0.666666687, 2.85166669, 3, 4});
}

TEST(OpsBreadth, EluWithDefaultAndCustomAlpha) {
  Tensor x = F32({-100, -2, -0.5, 0, 0.5, 3});
  ExpectClose(Vals(xl::elu(x)), {-1, -0.864664733, -0.393469334, 0, 0.5, 3});
  ExpectClose(Vals(xl::elu(x, 0.5)), {-0.5, -0.432332367, -0.196734667, 0, 0.5, 3});
}

TEST(OpsBreadth, LeakyReluWithDefaultAndCustomSlope) {
  Tensor x = F32({-100, -2, -0.5, 0, 0.5, 3});
  ExpectClose(Vals(xl::leaky_relu(x)), {-1, -0.0199999996, -0.00499999989, 0, 0.5, 3});
  ExpectClose(Vals(xl::leaky_relu(x, 0.2)), {-20, -0.400000006, -0.100000001, 0, 0.5, 3});
}

TEST(OpsBreadth, ActivationsKeepF64) {
  Tensor x = F64({-1.5, 0.5});
  for (const Tensor& r :
       {xl::softplus(x), xl::mish(x), xl::hardsigmoid(x), xl::hardswish(x), xl::elu(x), xl::leaky_relu(x), xl::glu(x)})
    EXPECT_EQ(r.dtype(), DType::f64);
}

TEST(OpsBreadth, GluSplitsTheLastDimByDefault) {
  Tensor x = xl::sub(Iota({2, 4}), 3);
  Tensor r = xl::glu(x);
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  ExpectClose(Vals(r), {-0.806824327, -1, 0.952574134, 1.96402752});
}

TEST(OpsBreadth, GluAlongOtherDims) {
  Tensor r = xl::glu(xl::sub(Iota({4, 2}), 3), 0);
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  ExpectClose(Vals(r), {-2.19317579, -1.76159406, -0.952574134, 0});
  Tensor m = xl::glu(xl::sub(xl::div(Iota({1, 4, 3}), 4), 1.5), 1);
  EXPECT_EQ(m.shape(), (Shape{1, 2, 3}));
  ExpectClose(Vals(m), {-0.75, -0.702720642, -0.622459352, -0.509384036, -0.365529299, -0.19432497});
}

TEST(OpsBreadth, GluOfAnOddDimThrowsNamingGlu) {
  ExpectOpError("glu", [] { Vals(xl::glu(Iota({2, 3}))); });
  ExpectOpError("glu", [] { Vals(xl::glu(Iota({3, 2}), 0)); });
}

// ---------------------------------------------------------------- clamp_min, clamp_max, nan_to_num

TEST(OpsBreadth, ClampMinAndMaxOfFloatsPropagateNaN) {
  Tensor x = F32({-2, 0.5, 3, NAN});
  ExpectClose(Vals(xl::clamp_min(x, 0.7)), {0.699999988, 0.699999988, 3, NAN});
  ExpectClose(Vals(xl::clamp_max(x, 0.7)), {-2, 0.5, 0.699999988, NAN});
}

TEST(OpsBreadth, ClampMinAndMaxOfIntegersKeepTheDtype) {
  Tensor lo = xl::clamp_min(I32({-2, 0, 3}), 1);
  EXPECT_EQ(lo.dtype(), DType::i32);
  EXPECT_EQ(Ints(lo), (LV{1, 1, 3}));
  Tensor hi = xl::clamp_max(I32({-2, 0, 3}), 1);
  EXPECT_EQ(hi.dtype(), DType::i32);
  EXPECT_EQ(Ints(hi), (LV{-2, 0, 1}));
  Tensor h64 = xl::clamp_max(I64({-2, 0, 3}), -1);
  EXPECT_EQ(h64.dtype(), DType::i64);
  EXPECT_EQ(Ints(h64), (LV{-2, -1, -1}));
}

TEST(OpsBreadth, ClampMinOfIntegersByAFloatIsF32) {
  Tensor r = xl::clamp_min(I32({-2, 0, 3}), 1.5);
  EXPECT_EQ(r.dtype(), DType::f32);
  ExpectClose(Vals(r), {1.5, 1.5, 3});
}

TEST(OpsBreadth, NanToNumDefaultsToTheLargestFiniteF32) {
  Tensor r = xl::nan_to_num(F32({NAN, INFINITY, -INFINITY, 1.5, -0.0f}));
  EXPECT_EQ(r.dtype(), DType::f32);
  float big = std::numeric_limits<float>::max();
  EXPECT_EQ(Vals(r), (FV{0, big, -big, 1.5, 0}));
}

TEST(OpsBreadth, NanToNumWithExplicitReplacements) {
  Tensor x = F32({NAN, INFINITY, -INFINITY, 1.5, -0.0f});
  EXPECT_EQ(Vals(xl::nan_to_num(x, -1, 100, -200)), (FV{-1, 100, -200, 1.5, 0}));
  float big = std::numeric_limits<float>::max();
  EXPECT_EQ(Vals(xl::nan_to_num(x, 2, std::nullopt, -5)), (FV{2, big, -5, 1.5, 0}));
}

TEST(OpsBreadth, NanToNumDefaultsFollowTheDtype) {
  Tensor d = xl::nan_to_num(F64({NAN, INFINITY, -INFINITY, 1.5}));
  EXPECT_EQ(d.dtype(), DType::f64);
  double big = std::numeric_limits<double>::max();
  EXPECT_EQ(d.to_vector<double>(), (DV{0, big, -big, 1.5}));
  Tensor h = xl::nan_to_num(F32({NAN, INFINITY, -INFINITY, 1.5}).to(DType::f16));
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(Vals(h), (FV{0, 65504, -65504, 1.5}));
}

TEST(OpsBreadth, NanToNumOfIntegersIsTheIdentity) {
  Tensor r = xl::nan_to_num(I32({1, -2, 3}));
  EXPECT_EQ(r.dtype(), DType::i32);
  EXPECT_EQ(Ints(r), (LV{1, -2, 3}));
}

// ---------------------------------------------------------------- any, all, count_nonzero

TEST(OpsBreadth, AnyAndAllOfEveryElementAreBool) {
  Tensor x = F32({0, 1, 0, 0, 0, 0, 2, NAN, 0}, {3, 3});
  Tensor a = xl::any(x);
  EXPECT_EQ(a.dtype(), DType::bool_);
  EXPECT_EQ(a.shape(), (Shape{}));
  EXPECT_TRUE(a.item<bool>());
  Tensor l = xl::all(x);
  EXPECT_EQ(l.dtype(), DType::bool_);
  EXPECT_FALSE(l.item<bool>());
  EXPECT_TRUE(xl::all(F32({NAN, 1})).item<bool>());  // NaN is nonzero
}

TEST(OpsBreadth, AnyAndAllAlongDimsWithKeepdim) {
  Tensor x = F32({0, 1, 0, 0, 0, 0, 2, NAN, 0}, {3, 3});
  EXPECT_EQ(Bools(xl::any(x, {1})), (BV{true, false, true}));
  Tensor k = xl::any(x, {-1}, true);
  EXPECT_EQ(k.shape(), (Shape{3, 1}));
  EXPECT_EQ(Bools(k), (BV{true, false, true}));
  EXPECT_EQ(Bools(xl::all(F32({1, 2, 3, 0}, {2, 2}), {0})), (BV{true, false}));
  Tensor m = xl::any(I64({0, 1, 0, 0, 0, 0, 0, 0}, {2, 2, 2}), {0, 2});
  EXPECT_EQ(m.shape(), (Shape{2}));
  EXPECT_EQ(Bools(m), (BV{true, false}));
}

TEST(OpsBreadth, AnyAndAllOfIntegersBoolsAndEmptyTensors) {
  EXPECT_TRUE(xl::any(I32({0, 0, 5})).item<bool>());
  EXPECT_TRUE(xl::all(Bool({true, true})).item<bool>());
  EXPECT_FALSE(xl::all(Bool({true, false})).item<bool>());
  EXPECT_FALSE(xl::any(xl::zeros({0})).item<bool>());
  EXPECT_TRUE(xl::all(xl::zeros({0})).item<bool>());
}

TEST(OpsBreadth, CountNonzeroIsI64) {
  Tensor y = F32({0, 1, 2, 0, 0, -3, NAN, 0, 0}, {3, 3});
  Tensor c = xl::count_nonzero(y);
  EXPECT_EQ(c.dtype(), DType::i64);
  EXPECT_EQ(c.shape(), (Shape{}));
  EXPECT_EQ(c.item<int64_t>(), 4);
  EXPECT_EQ(Ints(xl::count_nonzero(y, {0})), (LV{1, 1, 2}));
  EXPECT_EQ(Ints(xl::count_nonzero(y, {-1})), (LV{2, 1, 1}));
  EXPECT_EQ(xl::count_nonzero(Bool({true, false, true})).item<int64_t>(), 2);
}

TEST(OpsBreadth, CountNonzeroOverSeveralDims) {
  std::vector<int64_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i % 3;
  Tensor c = xl::count_nonzero(I64(v, {2, 3, 4}), {0, 2});
  EXPECT_EQ(c.shape(), (Shape{3}));
  EXPECT_EQ(Ints(c), (LV{4, 6, 6}));
}

// ---------------------------------------------------------------- std and norm

TEST(OpsBreadth, StdWithCorrectionsDimsAndKeepdim) {
  Tensor s = F32({1, 2, 3, 4, 2, 4, 6, 9}, {2, 4});
  EXPECT_EQ(xl::std(s).shape(), (Shape{}));
  EXPECT_NEAR(xl::std(s).item<float>(), 2.5877459, 1e-5);
  EXPECT_NEAR(xl::std(s, {}, 0).item<float>(), 2.42061448, 1e-5);
  ExpectClose(Vals(xl::std(s, {1})), {1.29099441, 2.98607874});
  Tensor k = xl::std(s, {0}, 1, true);
  EXPECT_EQ(k.shape(), (Shape{1, 4}));
  ExpectClose(Vals(k), {0.707106769, 1.41421354, 2.12132025, 3.53553391});
  ExpectClose(Vals(xl::std(s, {-1}, 0)), {1.11803401, 2.58601999});
  ExpectClose(Vals(xl::std(s, {1}, 2)), {1.58113885, 3.6571846});
}

TEST(OpsBreadth, StdOfOneElementWithCorrectionIsNaN) { EXPECT_TRUE(std::isnan(xl::std(F32({5})).item<float>())); }

TEST(OpsBreadth, StdInF64IsStableForLargeOffsets) {
  Tensor r = xl::std(F64({1e8 + 1, 1e8 + 2, 1e8 + 3}));
  EXPECT_EQ(r.dtype(), DType::f64);
  EXPECT_NEAR(r.item<double>(), 1.0, 1e-9);
}

TEST(OpsBreadth, NormForEveryP) {
  Tensor n = F32({3, -4, 0, 1, 2, -2}, {2, 3});
  struct Case {
    double p;
    double all;
    std::vector<double> rows;
  };
  for (const Case& c : std::vector<Case>{{1, 12, {7, 5}},
                                         {2, 5.83095169, {5, 3}},
                                         {3, 4.76220322, {4.49794149, 2.57128167}},
                                         {INFINITY, 4, {4, 2}},
                                         {0.5, 57.1608315, {13.9282036, 14.6568556}}}) {
    SCOPED_TRACE("p = " + std::to_string(c.p));
    Tensor all = xl::norm(n, c.p);
    EXPECT_EQ(all.shape(), (Shape{}));
    ExpectClose(Vals(all), {c.all});
    ExpectClose(Vals(xl::norm(n, c.p, {1})), c.rows);
  }
}

TEST(OpsBreadth, NormWithMinusInfinityIsTheSmallestMagnitude) {
  Tensor n = F32({3, -4, 0, 1, 2, -2}, {2, 3});
  Tensor all = xl::norm(n, -INFINITY);
  EXPECT_EQ(all.shape(), (Shape{}));
  ExpectClose(Vals(all), {0});
  ExpectClose(Vals(xl::norm(n, -INFINITY, {1})), {0, 1});
  ExpectClose(Vals(xl::norm(n, -INFINITY, {0}, true)), {1, 2, 0});
}

TEST(OpsBreadth, NormAlongDimsWithKeepdim) {
  Tensor n = F32({3, -4, 0, 1, 2, -2}, {2, 3});
  Tensor k = xl::norm(n, 2, {0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 3}));
  ExpectClose(Vals(k), {3.1622777, 4.47213602, 2});
  Tensor k1 = xl::norm(n, 1, {-1}, true);
  EXPECT_EQ(k1.shape(), (Shape{2, 1}));
  ExpectClose(Vals(k1), {7, 5});
  Tensor m = xl::norm(Iota({2, 3, 4}), 2, {0, 2});
  EXPECT_EQ(m.shape(), (Shape{3}));
  ExpectClose(Vals(m), {27.3495884, 36.8239059, 47.1168747});
  Tensor d = xl::norm(F64({3, 4}));
  EXPECT_EQ(d.dtype(), DType::f64);
  EXPECT_DOUBLE_EQ(d.item<double>(), 5.0);
  EXPECT_TRUE(std::isnan(xl::norm(F32({1, NAN})).item<float>()));
}

TEST(OpsBreadth, NormFroIsTheTwoNormOfTheElements) {
  Tensor n = F32({3, -4, 0, 1, 2, -2}, {2, 3});
  ExpectClose(Vals(xl::norm(n, "fro")), {5.83095169});
  ExpectClose(Vals(xl::norm(n, "fro", {1})), {5, 3});
  Tensor k = xl::norm(n, "fro", {0, 1}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 1}));
  ExpectClose(Vals(k), {5.83095169});
}

TEST(OpsBreadth, NormNucIsRefusedNamingNorm) {
  Tensor n = F32({3, -4, 0, 1, 2, -2}, {2, 3});
  ExpectOpError("norm", [&] { Vals(xl::norm(n, "nuc")); });
  ExpectOpError("norm", [&] { Vals(xl::norm(n, "nonsense")); });
}

// ---------------------------------------------------------------- max and min along a dim

TEST(OpsBreadth, MaxAndMinAlongADimGiveTheFirstIndexOfTies) {
  Tensor x = F32({3, 7, 7, 1, 5, 2, 5, 2, 0, 0, 9, 9}, {3, 4});
  xl::ValuesIndices mx = xl::max(x, 1);
  EXPECT_EQ(mx.values.shape(), (Shape{3}));
  EXPECT_EQ(mx.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(mx.values), (FV{7, 5, 9}));
  EXPECT_EQ(Ints(mx.indices), (LV{1, 0, 2}));
  xl::ValuesIndices mn = xl::min(x, 1);
  EXPECT_EQ(Vals(mn.values), (FV{1, 2, 0}));
  EXPECT_EQ(Ints(mn.indices), (LV{3, 1, 0}));
  xl::ValuesIndices m0 = xl::max(x, 0);
  EXPECT_EQ(Vals(m0.values), (FV{5, 7, 9, 9}));
  EXPECT_EQ(Ints(m0.indices), (LV{1, 0, 2, 2}));
}

TEST(OpsBreadth, MaxAndMinWithNegativeDimAndKeepdim) {
  Tensor x = F32({3, 7, 7, 1, 5, 2, 5, 2, 0, 0, 9, 9}, {3, 4});
  xl::ValuesIndices mn = xl::min(x, -2, true);
  EXPECT_EQ(mn.values.shape(), (Shape{1, 4}));
  EXPECT_EQ(mn.indices.shape(), (Shape{1, 4}));
  EXPECT_EQ(Vals(mn.values), (FV{0, 0, 5, 1}));
  EXPECT_EQ(Ints(mn.indices), (LV{2, 2, 1, 0}));
  xl::ValuesIndices mx = xl::max(x, -1, true);
  EXPECT_EQ(mx.values.shape(), (Shape{3, 1}));
  EXPECT_EQ(Ints(mx.indices), (LV{1, 0, 2}));
  xl::ValuesIndices m3 = xl::max(F32({1, 8, 4, 3, 9, 0, 9, 2}, {2, 2, 2}), 1);
  EXPECT_EQ(m3.values.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(m3.values), (FV{4, 8, 9, 2}));
  EXPECT_EQ(Ints(m3.indices), (LV{1, 0, 0, 1}));
}

TEST(OpsBreadth, MaxAndMinOfIntegersKeepTheDtype) {
  Tensor x = I32({4, -1, 4, -7, 2, -7}, {2, 3});
  xl::ValuesIndices mx = xl::max(x, 1);
  EXPECT_EQ(mx.values.dtype(), DType::i32);
  EXPECT_EQ(Ints(mx.values), (LV{4, 2}));
  EXPECT_EQ(Ints(mx.indices), (LV{0, 1}));
  xl::ValuesIndices mn = xl::min(x, 1);
  EXPECT_EQ(Ints(mn.values), (LV{-1, -7}));
  EXPECT_EQ(Ints(mn.indices), (LV{1, 0}));
}

TEST(OpsBreadth, MaxAndMinAlongADimPropagateNaNWithItsIndex) {
  xl::ValuesIndices mx = xl::max(F32({1, NAN, 5, NAN}, {1, 4}), 1);
  EXPECT_TRUE(std::isnan(Vals(mx.values)[0]));
  EXPECT_EQ(Ints(mx.indices), (LV{1}));
  xl::ValuesIndices mn = xl::min(F32({1, NAN, -5}, {1, 3}), 1);
  EXPECT_TRUE(std::isnan(Vals(mn.values)[0]));
  EXPECT_EQ(Ints(mn.indices), (LV{1}));
}

TEST(OpsBreadth, MaxAlongADimOutOfRangeThrowsNamingMax) {
  ExpectOpError("max", [] { Vals(xl::max(Iota({2, 2}), 2).values); });
  ExpectOpError("min", [] { Vals(xl::min(Iota({2, 2}), -3).values); });
}

// ---------------------------------------------------------------- isclose, allclose, equal

TEST(OpsBreadth, IscloseWithInfinitiesAndNaN) {
  Tensor a = F32({1, 1.0f + 1e-6f, 1e10, 0, INFINITY, INFINITY, NAN, -INFINITY, 1e-9});
  Tensor b = F32({1, 1, 1.001e10, 1e-9, INFINITY, -INFINITY, NAN, -INFINITY, 0});
  Tensor c = xl::isclose(a, b);
  EXPECT_EQ(c.dtype(), DType::bool_);
  EXPECT_EQ(Bools(c), (BV{true, true, false, true, true, false, false, true, true}));
  EXPECT_EQ(Bools(xl::isclose(a, b, 1e-5, 1e-8, true)), (BV{true, true, false, true, true, false, true, true, true}));
}

TEST(OpsBreadth, IscloseTolerancesAreRelativeToTheSecondOperand) {
  EXPECT_EQ(Bools(xl::isclose(F32({1, 2, 3}), F32({1.1, 2.3, 3}), 0, 0.2)), (BV{true, false, true}));
  EXPECT_EQ(Bools(xl::isclose(F32({100, 1}), F32({101, 0.95}), 0.01, 0)), (BV{true, false}));
  EXPECT_EQ(Bools(xl::isclose(F32({100, 110}), F32({110, 100}), 0.095, 0)), (BV{true, false}));
}

TEST(OpsBreadth, IscloseBroadcastsAndTakesIntegers) {
  Tensor c = xl::isclose(F32({1, 2}, {2, 1}), F32({1, 2, 3}));
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(Bools(c), (BV{true, false, false, false, true, false}));
  EXPECT_EQ(Bools(xl::isclose(I32({1, 2}), I32({1, 3}))), (BV{true, false}));
}

TEST(OpsBreadth, AllcloseReadsOneBool) {
  EXPECT_TRUE(xl::allclose(F32({1, 2}), F32({1.000001, 2})));
  EXPECT_FALSE(xl::allclose(F32({1, 2}), F32({1.1, 2})));
  EXPECT_FALSE(xl::allclose(F32({1, NAN}), F32({1, NAN})));
  EXPECT_TRUE(xl::allclose(F32({1, NAN}), F32({1, NAN}), 1e-5, 1e-8, true));
  EXPECT_TRUE(xl::allclose(xl::ones({2, 2}), F32({1, 1})));  // broadcasts
}

TEST(OpsBreadth, EqualNeedsTheSameShapeAndValues) {
  EXPECT_TRUE(xl::equal(F32({1, 2}), F32({1, 2})));
  EXPECT_FALSE(xl::equal(F32({1, 2}), F32({1, 3})));
  EXPECT_FALSE(xl::equal(F32({1, 2}), F32({1, 2}, {1, 2})));
  EXPECT_FALSE(xl::equal(xl::ones({2, 2}), F32({1, 1})));  // no broadcasting
  EXPECT_FALSE(xl::equal(F32({NAN}), F32({NAN})));
  EXPECT_TRUE(xl::equal(F32({0}), F32({-0.0f})));
  EXPECT_TRUE(xl::equal(I32({3, 4}), I32({3, 4})));
}

// ---------------------------------------------------------------- cumsum, cumprod, cummax, cummin

TEST(OpsBreadth, CumsumAlongEachDim) {
  EXPECT_EQ(Vals(xl::cumsum(M23(), 0)), (FV{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Vals(xl::cumsum(M23(), 1)), (FV{1, 3, 6, 4, 9, 15}));
  Tensor n = xl::cumsum(M23(), -1);
  EXPECT_EQ(n.shape(), (Shape{2, 3}));
  EXPECT_EQ(n.dtype(), DType::f32);
  EXPECT_EQ(Vals(n), (FV{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Vals(xl::cumsum(Iota({2, 3, 2}), 1)), (FV{0, 1, 2, 4, 6, 9, 6, 7, 14, 16, 24, 27}));
  ExpectClose(Vals(xl::cumsum(F32({1, NAN, 2}), 0)), {1, NAN, NAN});
}

TEST(OpsBreadth, CumsumOfIntegersIsInt64) {
  Tensor r = xl::cumsum(I32({1, 2, 3}), 0);
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(Ints(r), (LV{1, 3, 6}));
  EXPECT_EQ(Ints(xl::cumsum(I32({2000000000, 2000000000}), 0)), (LV{2000000000, 4000000000LL}));
}

TEST(OpsBreadth, CumsumOfBoolsIsInt64) {
  Tensor r = xl::cumsum(Bool({true, false, true}), 0);
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(Ints(r), (LV{1, 1, 2}));
}

TEST(OpsBreadth, CumsumInF64) {
  Tensor r = xl::cumsum(F64({0.1, 0.2, 0.3}), 0);
  EXPECT_EQ(r.dtype(), DType::f64);
  std::vector<double> v = r.to_vector<double>();
  EXPECT_NEAR(v[2], 0.6, 1e-15);
}

TEST(OpsBreadth, CumprodWithAZero) {
  Tensor x = F32({1, 2, 3, 0.5, 0, 4}, {2, 3});
  EXPECT_EQ(Vals(xl::cumprod(x, 1)), (FV{1, 2, 6, 0.5, 0, 0}));
  EXPECT_EQ(Vals(xl::cumprod(x, 0)), (FV{1, 2, 3, 0.5, 0, 12}));
}

TEST(OpsBreadth, CumprodOfIntegersAndBoolsIsInt64) {
  Tensor r = xl::cumprod(I32({2, -3, 4}), 0);
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(Ints(r), (LV{2, -6, -24}));
  EXPECT_EQ(Ints(xl::cumprod(I32({100000, 100000, 100}), 0)), (LV{100000, 10000000000LL, 1000000000000LL}));
  Tensor b = xl::cumprod(Bool({true, true, false, true}), 0);
  EXPECT_EQ(b.dtype(), DType::i64);
  EXPECT_EQ(Ints(b), (LV{1, 1, 0, 0}));
}

TEST(OpsBreadth, CummaxAndCumminGiveTheLatestIndexOfTies) {
  xl::ValuesIndices mx = xl::cummax(F32({1, 3, 2, 3, 5, 5, 0}), 0);
  EXPECT_EQ(mx.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(mx.values), (FV{1, 3, 3, 3, 5, 5, 5}));
  EXPECT_EQ(Ints(mx.indices), (LV{0, 1, 1, 3, 4, 5, 5}));
  xl::ValuesIndices mn = xl::cummin(F32({4, 2, 3, 2, 1, 1, 6}), 0);
  EXPECT_EQ(Vals(mn.values), (FV{4, 2, 2, 2, 1, 1, 1}));
  EXPECT_EQ(Ints(mn.indices), (LV{0, 1, 1, 3, 4, 5, 5}));
}

TEST(OpsBreadth, CummaxAndCumminAlongOtherDims) {
  xl::ValuesIndices mx = xl::cummax(F32({1, 5, 1, 2, 3, 5}, {3, 2}), 0);
  EXPECT_EQ(mx.values.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(mx.values), (FV{1, 5, 1, 5, 3, 5}));
  EXPECT_EQ(Ints(mx.indices), (LV{0, 0, 1, 0, 2, 2}));
  xl::ValuesIndices mn = xl::cummin(F32({3, 1, 1, 2, 0, -1, 5, -1}, {2, 4}), -1);
  EXPECT_EQ(Vals(mn.values), (FV{3, 1, 1, 1, 0, -1, -1, -1}));
  EXPECT_EQ(Ints(mn.indices), (LV{0, 1, 2, 2, 0, 1, 1, 3}));
}

TEST(OpsBreadth, CummaxOfIntegersKeepsTheDtype) {
  xl::ValuesIndices mx = xl::cummax(I32({1, 1, 0, 2}), 0);
  EXPECT_EQ(mx.values.dtype(), DType::i32);
  EXPECT_EQ(Ints(mx.values), (LV{1, 1, 1, 2}));
  EXPECT_EQ(Ints(mx.indices), (LV{0, 1, 1, 3}));
}

TEST(OpsBreadth, CummaxAndCumminStickToNaN) {
  xl::ValuesIndices mx = xl::cummax(F32({1, NAN, 3, 0}), 0);
  ExpectClose(Vals(mx.values), {1, NAN, NAN, NAN});
  EXPECT_EQ(Ints(mx.indices), (LV{0, 1, 1, 1}));
  xl::ValuesIndices mn = xl::cummin(F32({1, NAN, -3, 0}), 0);
  ExpectClose(Vals(mn.values), {1, NAN, NAN, NAN});
  EXPECT_EQ(Ints(mn.indices), (LV{0, 1, 1, 1}));
}

TEST(OpsBreadth, ScansWithADimOutOfRangeThrowNamingTheOp) {
  ExpectOpError("cumsum", [] { Vals(xl::cumsum(Iota({2, 2}), 2)); });
  ExpectOpError("cumprod", [] { Vals(xl::cumprod(Iota({2, 2}), -3)); });
  ExpectOpError("cummax", [] { Vals(xl::cummax(Iota({2, 2}), 2).values); });
}

// ---------------------------------------------------------------- sort, argsort, topk, kthvalue, median, mode

TEST(OpsBreadth, SortIsStableForTies) {
  Tensor x = F32({3, 1, 2, 1, 3, 0});
  xl::ValuesIndices up = xl::sort(x);
  EXPECT_EQ(up.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(up.values), (FV{0, 1, 1, 2, 3, 3}));
  EXPECT_EQ(Ints(up.indices), (LV{5, 1, 3, 2, 0, 4}));
  xl::ValuesIndices down = xl::sort(x, -1, true);
  EXPECT_EQ(Vals(down.values), (FV{3, 3, 2, 1, 1, 0}));
  EXPECT_EQ(Ints(down.indices), (LV{0, 4, 2, 1, 3, 5}));
}

TEST(OpsBreadth, SortPutsNaNAboveEveryNumber) {
  Tensor y = F32({2, NAN, -INFINITY, 1, NAN, INFINITY, 1});
  xl::ValuesIndices up = xl::sort(y);
  ExpectClose(Vals(up.values), {-INFINITY, 1, 1, 2, INFINITY, NAN, NAN});
  EXPECT_EQ(Ints(up.indices), (LV{2, 3, 6, 0, 5, 1, 4}));
  xl::ValuesIndices down = xl::sort(y, 0, true);
  ExpectClose(Vals(down.values), {NAN, NAN, INFINITY, 2, 1, 1, -INFINITY});
  EXPECT_EQ(Ints(down.indices), (LV{1, 4, 5, 0, 3, 6, 2}));
}

TEST(OpsBreadth, SortAlongOtherDims) {
  Tensor m = F32({3, 1, 2, 0, 5, 4}, {2, 3});
  xl::ValuesIndices d0 = xl::sort(m, 0);
  EXPECT_EQ(d0.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(d0.values), (FV{0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(Ints(d0.indices), (LV{1, 0, 0, 0, 1, 1}));
  xl::ValuesIndices d1 = xl::sort(m, -1, true);
  EXPECT_EQ(Vals(d1.values), (FV{3, 2, 1, 5, 4, 0}));
  EXPECT_EQ(Ints(d1.indices), (LV{0, 2, 1, 1, 2, 0}));
}

TEST(OpsBreadth, SortOfIntegersAndBools) {
  xl::ValuesIndices i = xl::sort(I32({5, -2, 5, 0}));
  EXPECT_EQ(i.values.dtype(), DType::i32);
  EXPECT_EQ(Ints(i.values), (LV{-2, 0, 5, 5}));
  EXPECT_EQ(Ints(i.indices), (LV{1, 3, 0, 2}));
  xl::ValuesIndices b = xl::sort(Bool({true, false, true, false}));
  EXPECT_EQ(b.values.dtype(), DType::bool_);
  EXPECT_EQ(Bools(b.values), (BV{false, false, true, true}));
  EXPECT_EQ(Ints(b.indices), (LV{1, 3, 0, 2}));
}

TEST(OpsBreadth, ArgsortIsI64AndStable) {
  Tensor x = F32({3, 1, 2, 1, 3, 0});
  Tensor a = xl::argsort(x);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(Ints(a), (LV{5, 1, 3, 2, 0, 4}));
  EXPECT_EQ(Ints(xl::argsort(x, -1, true)), (LV{0, 4, 2, 1, 3, 5}));
  EXPECT_EQ(Ints(xl::argsort(F32({3, 1, 2, 0, 5, 4}, {2, 3}), 0)), (LV{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(Ints(xl::argsort(F32({NAN, 1, -1}))), (LV{2, 1, 0}));
}

TEST(OpsBreadth, SortWithADimOutOfRangeThrowsNamingSort) {
  ExpectOpError("sort", [] { Vals(xl::sort(Iota({2, 2}), -3).values); });
  ExpectOpError("argsort", [] { Ints(xl::argsort(Iota({2, 2}), 2)); });
}

TEST(OpsBreadth, TopkLargestAndSmallestAreSorted) {
  Tensor t = F32({5, 1, 9, 3, 7, 2, 8, 0, 6, 4}, {2, 5});
  xl::ValuesIndices top = xl::topk(t, 3);
  EXPECT_EQ(top.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(top.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(top.values), (FV{9, 7, 5, 8, 6, 4}));
  EXPECT_EQ(Ints(top.indices), (LV{2, 4, 0, 1, 3, 4}));
  xl::ValuesIndices low = xl::topk(t, 2, -1, false);
  EXPECT_EQ(Vals(low.values), (FV{1, 3, 0, 2}));
  EXPECT_EQ(Ints(low.indices), (LV{1, 3, 2, 0}));
  xl::ValuesIndices d0 = xl::topk(t, 1, 0);
  EXPECT_EQ(d0.values.shape(), (Shape{1, 5}));
  EXPECT_EQ(Vals(d0.values), (FV{5, 8, 9, 6, 7}));
  EXPECT_EQ(Ints(d0.indices), (LV{0, 1, 0, 1, 0}));
}

TEST(OpsBreadth, TopkEdgeCases) {
  xl::ValuesIndices all = xl::topk(F32({2, 3, 1}), 3);
  EXPECT_EQ(Vals(all.values), (FV{3, 2, 1}));
  EXPECT_EQ(Ints(all.indices), (LV{1, 0, 2}));
  xl::ValuesIndices none = xl::topk(F32({2, 3, 1}), 0);
  EXPECT_EQ(none.values.shape(), (Shape{0}));
  EXPECT_EQ(none.indices.shape(), (Shape{0}));
  xl::ValuesIndices i = xl::topk(I32({4, 9, -1, 7}), 2);
  EXPECT_EQ(i.values.dtype(), DType::i32);
  EXPECT_EQ(Ints(i.values), (LV{9, 7}));
  EXPECT_EQ(Ints(i.indices), (LV{1, 3}));
}

TEST(OpsBreadth, TopkTreatsNaNAsTheLargest) {
  xl::ValuesIndices big = xl::topk(F32({2, NAN, 1, 5}), 2);
  ExpectClose(Vals(big.values), {NAN, 5});
  EXPECT_EQ(Ints(big.indices), (LV{1, 3}));
  xl::ValuesIndices small = xl::topk(F32({2, NAN, 1, 5}), 2, -1, false);
  EXPECT_EQ(Vals(small.values), (FV{1, 2}));
  EXPECT_EQ(Ints(small.indices), (LV{2, 0}));
}

TEST(OpsBreadth, TopkWithKLargerThanTheDimThrowsNamingTopk) {
  ExpectOpError("topk", [] { Vals(xl::topk(Iota({2, 3}), 4).values); });
  ExpectOpError("topk", [] { Vals(xl::topk(Iota({3}), -1).values); });
}

TEST(OpsBreadth, KthvalueCountsFromOne) {
  Tensor t = F32({5, 1, 9, 3, 7, 2, 8, 0, 6, 4}, {2, 5});
  xl::ValuesIndices k2 = xl::kthvalue(t, 2);
  EXPECT_EQ(k2.values.shape(), (Shape{2}));
  EXPECT_EQ(k2.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(k2.values), (FV{3, 2}));
  EXPECT_EQ(Ints(k2.indices), (LV{3, 0}));
  xl::ValuesIndices k1 = xl::kthvalue(t, 1, -1);
  EXPECT_EQ(Vals(k1.values), (FV{1, 0}));
  EXPECT_EQ(Ints(k1.indices), (LV{1, 2}));
  xl::ValuesIndices k5 = xl::kthvalue(t, 5);
  EXPECT_EQ(Vals(k5.values), (FV{9, 8}));
  EXPECT_EQ(Ints(k5.indices), (LV{2, 1}));
}

TEST(OpsBreadth, KthvalueAlongDimZeroWithKeepdimAndIntegers) {
  Tensor t = F32({5, 1, 9, 3, 7, 2, 8, 0, 6, 4}, {2, 5});
  xl::ValuesIndices k = xl::kthvalue(t, 2, 0, true);
  EXPECT_EQ(k.values.shape(), (Shape{1, 5}));
  EXPECT_EQ(k.indices.shape(), (Shape{1, 5}));
  EXPECT_EQ(Vals(k.values), (FV{5, 8, 9, 6, 7}));
  EXPECT_EQ(Ints(k.indices), (LV{0, 1, 0, 1, 0}));
  xl::ValuesIndices i = xl::kthvalue(I32({4, 9, -1, 7}), 3);
  EXPECT_EQ(i.values.dtype(), DType::i32);
  EXPECT_EQ(i.values.shape(), (Shape{}));
  EXPECT_EQ(i.values.item<int64_t>(), 7);
  EXPECT_EQ(i.indices.item<int64_t>(), 3);
}

TEST(OpsBreadth, KthvalueOutOfRangeThrowsNamingKthvalue) {
  ExpectOpError("kthvalue", [] { Vals(xl::kthvalue(Iota({3}), 0).values); });
  ExpectOpError("kthvalue", [] { Vals(xl::kthvalue(Iota({3}), 4).values); });
}

TEST(OpsBreadth, MedianOfEveryElementIsTheLowerMedian) {
  Tensor even = xl::median(F32({4, 1, 3, 2}));
  EXPECT_EQ(even.shape(), (Shape{}));
  EXPECT_EQ(even.item<float>(), 2.0f);
  EXPECT_EQ(xl::median(F32({4, 1, 3, 2, 8, 6}, {2, 3})).item<float>(), 3.0f);
  Tensor i = xl::median(I32({4, 1, 3, 2}));
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(i.item<int64_t>(), 2);
  EXPECT_TRUE(std::isnan(xl::median(F32({4, NAN, 3})).item<float>()));
}

TEST(OpsBreadth, MedianAlongADimGivesValuesAndIndices) {
  Tensor t = F32({5, 1, 9, 3, 7, 2, 8, 0, 6, 4}, {2, 5});
  xl::ValuesIndices m = xl::median(t, 1);
  EXPECT_EQ(m.values.shape(), (Shape{2}));
  EXPECT_EQ(m.indices.dtype(), DType::i64);
  EXPECT_EQ(Vals(m.values), (FV{5, 4}));
  EXPECT_EQ(Ints(m.indices), (LV{0, 4}));
  xl::ValuesIndices k = xl::median(t, 0, true);  // two rows: the lower of the two
  EXPECT_EQ(k.values.shape(), (Shape{1, 5}));
  EXPECT_EQ(Vals(k.values), (FV{2, 1, 0, 3, 4}));
  EXPECT_EQ(Ints(k.indices), (LV{1, 0, 1, 0, 1}));
  xl::ValuesIndices e = xl::median(F32({4, 1, 3, 2, 0, 9, 7, 8}, {2, 4}), -1);
  EXPECT_EQ(Vals(e.values), (FV{2, 7}));
  EXPECT_EQ(Ints(e.indices), (LV{3, 2}));
}

TEST(OpsBreadth, MedianAlongADimOfIntegersAndWithNaN) {
  xl::ValuesIndices i = xl::median(I64({4, 1, 3, 2}, {1, 4}), 1);
  EXPECT_EQ(i.values.dtype(), DType::i64);
  EXPECT_EQ(Ints(i.values), (LV{2}));
  EXPECT_EQ(Ints(i.indices), (LV{3}));
  xl::ValuesIndices n = xl::median(F32({4, NAN, 3, 1, 2, 3}, {2, 3}), 1);
  ExpectClose(Vals(n.values), {NAN, 2});
  EXPECT_EQ(Ints(n.indices), (LV{1, 1}));
}

TEST(OpsBreadth, ModeIsTheSmallestOfTheMostFrequentValues) {
  auto check = [](const Tensor& x, int64_t dim, const std::vector<float>& want) {
    xl::ValuesIndices m = xl::mode(x, dim);
    EXPECT_EQ(m.indices.dtype(), DType::i64);
    EXPECT_EQ(Vals(m.values), want);
    // The index points at an occurrence of the value (which one is not specified).
    Tensor picked = xl::gather(x, dim, xl::unsqueeze(m.indices, dim));
    EXPECT_EQ(Vals(picked), want);
  };
  check(F32({3, 1, 3, 2, 1, 3}), 0, {3});
  check(F32({2, 5, 5, 2, 7}), -1, {2});
  check(F32({1, 2, 2, 4, 4, 1, 7, 8, 9}, {3, 3}), 1, {2, 4, 7});
}

TEST(OpsBreadth, ModeAlongDimZeroWithKeepdimAndIntegers) {
  xl::ValuesIndices k = xl::mode(F32({1, 2, 3, 2, 1, 5}, {3, 2}), 0, true);
  EXPECT_EQ(k.values.shape(), (Shape{1, 2}));
  EXPECT_EQ(k.indices.shape(), (Shape{1, 2}));
  EXPECT_EQ(Vals(k.values), (FV{1, 2}));
  xl::ValuesIndices i = xl::mode(I32({4, -1, 4, -1, 0}));
  EXPECT_EQ(i.values.dtype(), DType::i32);
  EXPECT_EQ(i.values.item<int64_t>(), -1);
  int64_t at = i.indices.item<int64_t>();
  EXPECT_TRUE(at == 1 || at == 3) << at;
}

// ---------------------------------------------------------------- repeat, tile, repeat_interleave, roll

TEST(OpsBreadth, RepeatTilesEachDim) {
  Tensor r = xl::repeat(M23(), {2, 2});
  EXPECT_EQ(r.shape(), (Shape{4, 6}));
  EXPECT_EQ(Vals(r), (FV{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  Tensor one = xl::repeat(M23(), {1, 1});
  EXPECT_EQ(Vals(one), (FV{1, 2, 3, 4, 5, 6}));
  Tensor i = xl::repeat(I32({1, 2}), {3});
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(Ints(i), (LV{1, 2, 1, 2, 1, 2}));
}

TEST(OpsBreadth, RepeatWithMoreRepeatsThanDimsAddsLeadingDims) {
  Tensor r = xl::repeat(M23(), {2, 1, 2});
  EXPECT_EQ(r.shape(), (Shape{2, 2, 6}));
  EXPECT_EQ(Vals(r), (FV{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  EXPECT_EQ(xl::repeat(M23(), {0, 2}).shape(), (Shape{0, 6}));
}

TEST(OpsBreadth, RepeatWithFewerRepeatsThanDimsThrowsNamingRepeat) {
  ExpectOpError("repeat", [] { Vals(xl::repeat(M23(), {2})); });
}

TEST(OpsBreadth, TileAcceptsFewerRepeatsThanDims) {
  Tensor a = xl::tile(M23(), {2});
  EXPECT_EQ(a.shape(), (Shape{2, 6}));
  EXPECT_EQ(Vals(a), (FV{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  Tensor b = xl::tile(M23(), {2, 1});
  EXPECT_EQ(b.shape(), (Shape{4, 3}));
  EXPECT_EQ(Vals(b), (FV{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  Tensor c = xl::tile(M23(), {2, 1, 1});
  EXPECT_EQ(c.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(Vals(c), (FV{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(OpsBreadth, RepeatInterleaveByACount) {
  Tensor flat = xl::repeat_interleave(M23(), 2);
  EXPECT_EQ(flat.shape(), (Shape{12}));
  EXPECT_EQ(Vals(flat), (FV{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}));
  Tensor d0 = xl::repeat_interleave(M23(), 2, 0);
  EXPECT_EQ(d0.shape(), (Shape{4, 3}));
  EXPECT_EQ(Vals(d0), (FV{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  Tensor d1 = xl::repeat_interleave(M23(), 3, -1);
  EXPECT_EQ(d1.shape(), (Shape{2, 9}));
  EXPECT_EQ(Vals(d1), (FV{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6}));
  Tensor b = xl::repeat_interleave(Bool({true, false}), 2);
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_EQ(Bools(b), (BV{true, true, false, false}));
}

TEST(OpsBreadth, RepeatInterleaveByPerElementCounts) {
  Tensor r = xl::repeat_interleave(I64({10, 20, 30}), I64({1, 0, 2}));
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(Ints(r), (LV{10, 30, 30}));
  Tensor d0 = xl::repeat_interleave(M23(), I64({0, 3}), 0);
  EXPECT_EQ(d0.shape(), (Shape{3, 3}));
  EXPECT_EQ(Vals(d0), (FV{4, 5, 6, 4, 5, 6, 4, 5, 6}));
  Tensor d1 = xl::repeat_interleave(M23(), I32({2, 1, 0}), 1);
  EXPECT_EQ(d1.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(d1), (FV{1, 1, 2, 4, 4, 5}));
  Tensor flat = xl::repeat_interleave(M23(), I64({1, 0, 2, 0, 0, 1}));
  EXPECT_EQ(flat.shape(), (Shape{4}));
  EXPECT_EQ(Vals(flat), (FV{1, 3, 3, 6}));
}

TEST(OpsBreadth, RepeatInterleaveWithBadCountsThrowsNamingIt) {
  ExpectOpError("repeat_interleave", [] { Vals(xl::repeat_interleave(Iota({3}), I64({1, 2}))); });
  ExpectOpError("repeat_interleave", [] { Vals(xl::repeat_interleave(Iota({3}), -1)); });
}

TEST(OpsBreadth, RollOfTheFlattenedTensor) {
  Tensor x = Iota({2, 3});
  Tensor r = xl::roll(x, {1});
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(r), (FV{5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(Vals(xl::roll(x, {-2})), (FV{2, 3, 4, 5, 0, 1}));
  Tensor i = xl::roll(I64({1, 2, 3, 4}), {1});
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(Ints(i), (LV{4, 1, 2, 3}));
}

TEST(OpsBreadth, RollAlongDims) {
  Tensor x = Iota({2, 3});
  EXPECT_EQ(Vals(xl::roll(x, {1}, {1})), (FV{2, 0, 1, 5, 3, 4}));
  EXPECT_EQ(Vals(xl::roll(x, {1, -1}, {0, 1})), (FV{4, 5, 3, 1, 2, 0}));
  EXPECT_EQ(Vals(xl::roll(x, {7}, {-1})), (FV{2, 0, 1, 5, 3, 4}));  // shifts wrap past the size
  EXPECT_EQ(Vals(xl::roll(x, {1, 1}, {1, 1})), (FV{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(Vals(xl::roll(x, {0}, {0})), (FV{0, 1, 2, 3, 4, 5}));
}

TEST(OpsBreadth, RollWithMismatchedShiftsAndDimsThrowsNamingRoll) {
  ExpectOpError("roll", [] { Vals(xl::roll(Iota({2, 2}), {1, 1}, {0})); });
}

// ---------------------------------------------------------------- diag, diagonal, trace, unfold, clone

TEST(OpsBreadth, DiagOfAVectorIsASquareMatrix) {
  Tensor d = xl::diag(F32({1, 2, 3}));
  EXPECT_EQ(d.shape(), (Shape{3, 3}));
  EXPECT_EQ(Vals(d), (FV{1, 0, 0, 0, 2, 0, 0, 0, 3}));
  Tensor up = xl::diag(F32({1, 2}), 1);
  EXPECT_EQ(up.shape(), (Shape{3, 3}));
  EXPECT_EQ(Vals(up), (FV{0, 1, 0, 0, 0, 2, 0, 0, 0}));
  Tensor low = xl::diag(F32({7, 8}), -2);
  EXPECT_EQ(low.shape(), (Shape{4, 4}));
  EXPECT_EQ(Vals(low), (FV{0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 8, 0, 0}));
  Tensor i = xl::diag(I32({5, 6}));
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(Ints(i), (LV{5, 0, 0, 6}));
}

TEST(OpsBreadth, DiagOfAMatrixIsADiagonal) {
  Tensor m = Iota({3, 4});
  EXPECT_EQ(Vals(xl::diag(m)), (FV{0, 5, 10}));
  EXPECT_EQ(Vals(xl::diag(m, 1)), (FV{1, 6, 11}));
  EXPECT_EQ(Vals(xl::diag(m, -1)), (FV{4, 9}));
  EXPECT_EQ(Vals(xl::diag(m, 3)), (FV{3}));
  EXPECT_EQ(xl::diag(m, 4).shape(), (Shape{0}));
  EXPECT_EQ(xl::diag(m, -3).shape(), (Shape{0}));
}

TEST(OpsBreadth, DiagOfA3DTensorThrowsNamingDiag) {
  ExpectOpError("diag", [] { Vals(xl::diag(Iota({2, 2, 2}))); });
}

TEST(OpsBreadth, DiagonalOfPlanesIsTheLastDim) {
  EXPECT_EQ(Vals(xl::diagonal(Iota({3, 4}))), (FV{0, 5, 10}));
  Tensor a = Iota({2, 3, 4});
  Tensor d = xl::diagonal(a);
  EXPECT_EQ(d.shape(), (Shape{4, 2}));
  EXPECT_EQ(Vals(d), (FV{0, 16, 1, 17, 2, 18, 3, 19}));
  Tensor d12 = xl::diagonal(a, 0, 1, 2);
  EXPECT_EQ(d12.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(d12), (FV{0, 5, 10, 12, 17, 22}));
}

TEST(OpsBreadth, DiagonalWithOffsetsAndNegativeOrReversedDims) {
  Tensor a = Iota({2, 3, 4});
  Tensor n = xl::diagonal(a, 1, -1, -2);
  EXPECT_EQ(n.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(n), (FV{4, 9, 16, 21}));
  Tensor m = xl::diagonal(a, -1, 0, 2);
  EXPECT_EQ(m.shape(), (Shape{3, 1}));
  EXPECT_EQ(Vals(m), (FV{12, 16, 20}));
  Tensor r = xl::diagonal(a, 0, 2, 0);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(r), (FV{0, 13, 4, 17, 8, 21}));
}

TEST(OpsBreadth, DiagonalOfOneDimTwiceThrowsNamingDiagonal) {
  ExpectOpError("diagonal", [] { Vals(xl::diagonal(Iota({2, 2}), 0, 1, 1)); });
}

TEST(OpsBreadth, TraceSumsTheMainDiagonal) {
  Tensor t = xl::trace(Iota({3, 4}));
  EXPECT_EQ(t.shape(), (Shape{}));
  EXPECT_EQ(t.item<float>(), 15.0f);
  EXPECT_EQ(xl::trace(F32({1, 2, 3, 4}, {2, 2})).item<float>(), 5.0f);
  EXPECT_EQ(xl::trace(Iota({5, 4})).item<float>(), 30.0f);
}

TEST(OpsBreadth, TraceOfIntegersIsInt64) {
  Tensor t = xl::trace(I32({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(t.dtype(), DType::i64);
  EXPECT_EQ(t.item<int64_t>(), 5);
}

TEST(OpsBreadth, TraceOfANonMatrixThrowsNamingTrace) {
  ExpectOpError("trace", [] { Vals(xl::trace(Iota({2, 2, 2}))); });
  ExpectOpError("trace", [] { Vals(xl::trace(Iota({2}))); });
}

TEST(OpsBreadth, UnfoldMakesWindowsAsTheLastDim) {
  Tensor u = Iota({7});
  Tensor a = xl::unfold(u, 0, 3, 2);
  EXPECT_EQ(a.shape(), (Shape{3, 3}));
  EXPECT_EQ(Vals(a), (FV{0, 1, 2, 2, 3, 4, 4, 5, 6}));
  Tensor b = xl::unfold(u, 0, 2, 3);
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(b), (FV{0, 1, 3, 4}));
  EXPECT_EQ(xl::unfold(u, 0, 7, 1).shape(), (Shape{1, 7}));
}

TEST(OpsBreadth, UnfoldAlongOtherDims) {
  Tensor m = Iota({3, 4});
  Tensor a = xl::unfold(m, 1, 2, 1);
  EXPECT_EQ(a.shape(), (Shape{3, 3, 2}));
  EXPECT_EQ(Vals(a), (FV{0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 8, 9, 9, 10, 10, 11}));
  Tensor b = xl::unfold(m, -2, 2, 1);
  EXPECT_EQ(b.shape(), (Shape{2, 4, 2}));
  EXPECT_EQ(Vals(b), (FV{0, 4, 1, 5, 2, 6, 3, 7, 4, 8, 5, 9, 6, 10, 7, 11}));
}

TEST(OpsBreadth, UnfoldLargerThanTheDimThrowsNamingUnfold) {
  ExpectOpError("unfold", [] { Vals(xl::unfold(Iota({7}), 0, 8, 1)); });
  ExpectOpError("unfold", [] { Vals(xl::unfold(Iota({5}), 0, 2, 0)); });
}

TEST(OpsBreadth, CloneIsAnIndependentCopy) {
  Tensor x = F32({1, 2, 3});
  Tensor c = xl::clone(x);
  EXPECT_EQ(c.dtype(), DType::f32);
  EXPECT_EQ(c.shape(), (Shape{3}));
  x.add_(10);
  EXPECT_EQ(Vals(c), (FV{1, 2, 3}));
  EXPECT_EQ(Vals(x), (FV{11, 12, 13}));
  c.mul_(2);
  EXPECT_EQ(Vals(x), (FV{11, 12, 13}));
  EXPECT_EQ(Ints(xl::clone(I64({4, 5}))), (LV{4, 5}));
}

// ---------------------------------------------------------------- outer, bmm, addmm, baddbmm, cross

TEST(OpsBreadth, OuterOfVectors) {
  Tensor o = xl::outer(F32({1, 2, 3}), F32({4, 5}));
  EXPECT_EQ(o.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(o), (FV{4, 5, 8, 10, 12, 15}));
  Tensor i = xl::outer(I32({1, -2}), I32({3, 4}));
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(Ints(i), (LV{3, 4, -6, -8}));
  Tensor m = xl::outer(I32({1, 2}), F32({0.5, 1}));
  EXPECT_EQ(m.dtype(), DType::f32);
  EXPECT_EQ(Vals(m), (FV{0.5, 1, 1, 2}));
}

TEST(OpsBreadth, OuterOfAMatrixThrowsNamingOuter) {
  ExpectOpError("outer", [] { Vals(xl::outer(Iota({2, 2}), Iota({2}))); });
}

TEST(OpsBreadth, BmmMultipliesEachBatch) {
  Tensor a = Iota({2, 2, 3});
  Tensor b = xl::div(xl::sub(Iota({2, 3, 2}), 5), 2);
  Tensor r = xl::bmm(a, b);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  ExpectClose(Vals(r), {-2.5, -1, -16, -10, 33.5, 44, 47, 62});
  Tensor i = xl::bmm(I64({1, 2}, {1, 1, 2}), I64({3, 4}, {1, 2, 1}));
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(Ints(i), (LV{11}));
}

TEST(OpsBreadth, BmmOfNon3DOrMismatchedOperandsThrowsNamingBmm) {
  ExpectOpError("bmm", [] { Vals(xl::bmm(Iota({2, 3}), Iota({3, 2}))); });
  ExpectOpError("bmm", [] { Vals(xl::bmm(Iota({2, 2, 3}), Iota({3, 3, 2}))); });  // no broadcasting of batches
  ExpectOpError("bmm", [] { Vals(xl::bmm(Iota({2, 2, 3}), Iota({2, 4, 2}))); });
}

TEST(OpsBreadth, AddmmWithBetaAndAlphaBroadcastsTheInput) {
  Tensor in = F32({1, -1});
  Tensor a = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor b = F32({1, 0, 0, 1, 1, 1}, {3, 2});
  Tensor r = xl::addmm(in, a, b);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(r), (FV{5, 4, 11, 10, 17, 16}));
  EXPECT_EQ(Vals(xl::addmm(in, a, b, 0.5, 2)), (FV{8.5, 9.5, 20.5, 21.5, 32.5, 33.5}));
  EXPECT_EQ(Vals(xl::addmm(F32({1, 2, 3}, {3, 1}), a, b)), (FV{5, 6, 12, 13, 19, 20}));
}

TEST(OpsBreadth, AddmmWithBetaZeroIgnoresNaNInTheInput) {
  Tensor a = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor b = F32({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(Vals(xl::addmm(xl::ones({3, 2}), a, b, 0, 1)), (FV{4, 5, 10, 11, 16, 17}));
  EXPECT_EQ(Vals(xl::addmm(xl::full({3, 2}, NAN), a, b, 0, 1)), (FV{4, 5, 10, 11, 16, 17}));
}

TEST(OpsBreadth, AddmmWithMismatchedShapesThrowsNamingAddmm) {
  ExpectOpError("addmm", [] { Vals(xl::addmm(xl::zeros({2}), xl::zeros({2, 3}), xl::zeros({2, 2}))); });
}

TEST(OpsBreadth, BaddbmmWithBetaAndAlpha) {
  Tensor a = Iota({2, 2, 3});
  Tensor b = xl::div(xl::sub(Iota({2, 3, 2}), 5), 2);
  Tensor in = F32({1, 1, 1, 1, 2, 2, 2, 2}, {2, 2, 2});
  Tensor r = xl::baddbmm(in, a, b, 2, 0.5);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  ExpectClose(Vals(r), {0.75, 1.5, -6, -3, 20.75, 26, 27.5, 35});
  ExpectClose(Vals(xl::baddbmm(F32({1, 10}), a, b)), {-1.5, 9, -15, 0, 34.5, 54, 48, 72});
}

TEST(OpsBreadth, BaddbmmWithMismatchedShapesThrowsNamingBaddbmm) {
  ExpectOpError("baddbmm", [] { Vals(xl::baddbmm(xl::zeros({2, 2, 2}), xl::zeros({2, 2, 3}), xl::zeros({2, 2, 2}))); });
}

TEST(OpsBreadth, CrossProductsAlongTheLastDimOrAnother) {
  EXPECT_EQ(Vals(xl::cross(F32({1, 0, 0}), F32({0, 1, 0}))), (FV{0, 0, 1}));
  Tensor r = xl::cross(F32({1, 2, 3, 4, 5, 6}, {2, 3}), F32({7, 8, 9, -1, 0, 2}, {2, 3}));
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(r), (FV{-6, 12, -6, 10, -14, 5}));
  Tensor d0 = xl::cross(F32({1, 4, 2, 5, 3, 6}, {3, 2}), F32({7, -1, 8, 0, 9, 2}, {3, 2}), 0);
  EXPECT_EQ(d0.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(d0), (FV{-6, 10, 12, -14, -6, 5}));
  Tensor i = xl::cross(I64({1, 2, 3}), I64({4, 5, 6}), 0);
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(Ints(i), (LV{-3, 6, -3}));
}

TEST(OpsBreadth, CrossAlongADimNotOfSizeThreeThrowsNamingCross) {
  ExpectOpError("cross", [] { Vals(xl::cross(xl::zeros({3, 2}), xl::zeros({3, 2}), 1)); });
  ExpectOpError("cross", [] { Vals(xl::cross(xl::zeros({2, 2}), xl::zeros({2, 2}))); });
}

// ---------------------------------------------------------------- einsum

TEST(OpsBreadth, EinsumMatrixProductExplicitAndImplicit) {
  Tensor a = Iota({2, 3});
  Tensor b = xl::sub(Iota({3, 4}), 4);
  FV want = {8, 11, 14, 17, 8, 20, 32, 44};
  Tensor e = xl::einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(e.shape(), (Shape{2, 4}));
  EXPECT_EQ(Vals(e), want);
  Tensor i = xl::einsum("ij,jk", {a, b});
  EXPECT_EQ(i.shape(), (Shape{2, 4}));
  EXPECT_EQ(Vals(i), want);
  EXPECT_EQ(Vals(xl::einsum("Ab,bC->AC", {a, b})), want);  // upper-case letters
}

TEST(OpsBreadth, EinsumBatchedProducts) {
  Tensor a = Iota({2, 2, 3});
  Tensor b = xl::div(Iota({2, 3, 2}), 2);
  Tensor r = xl::einsum("bij,bjk->bik", {a, b});
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  ExpectClose(Vals(r), {5, 6.5, 14, 20, 86, 96.5, 122, 137});
  Tensor t = xl::einsum("bij,bkj->bik", {a, a});
  EXPECT_EQ(Vals(t), (FV{5, 14, 14, 50, 149, 212, 212, 302}));
}

TEST(OpsBreadth, EinsumDiagonalAndTrace) {
  Tensor s = Iota({3, 3});
  Tensor d = xl::einsum("ii->i", {s});
  EXPECT_EQ(d.shape(), (Shape{3}));
  EXPECT_EQ(Vals(d), (FV{0, 4, 8}));
  Tensor t = xl::einsum("ii", {s});
  EXPECT_EQ(t.shape(), (Shape{}));
  EXPECT_EQ(t.item<float>(), 12.0f);
}

TEST(OpsBreadth, EinsumPermutationsAndSums) {
  Tensor a = Iota({2, 3});
  Tensor t = xl::einsum("ij->ji", {a});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(t), (FV{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(Vals(xl::einsum("ba", {a})), (FV{0, 3, 1, 4, 2, 5}));  // implicit output is sorted: "ab"
  EXPECT_EQ(xl::einsum("ij->", {a}).item<float>(), 15.0f);
  EXPECT_EQ(Vals(xl::einsum("ij->j", {a})), (FV{3, 5, 7}));
  EXPECT_EQ(Vals(xl::einsum("ij,ij->ij", {a, a})), (FV{0, 1, 4, 9, 16, 25}));
  Tensor p = xl::einsum("ijk->kji", {Iota({2, 2, 3})});
  EXPECT_EQ(p.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(Vals(p), (FV{0, 6, 3, 9, 1, 7, 4, 10, 2, 8, 5, 11}));
}

TEST(OpsBreadth, EinsumDotAndOuterProducts) {
  Tensor v = F32({1, 2, 3});
  Tensor dot = xl::einsum("i,i->", {v, F32({4, -5, 6})});
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(dot.item<float>(), 12.0f);
  Tensor o = xl::einsum("i,j->ij", {v, F32({1, 10})});
  EXPECT_EQ(o.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(o), (FV{1, 10, 2, 20, 3, 30}));
}

TEST(OpsBreadth, EinsumEllipsisBroadcastsBatchDims) {
  Tensor r = xl::einsum("...ij,...jk->...ik", {Iota({2, 2, 2, 3}), Iota({3, 2})});
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2, 2}));
  EXPECT_EQ(Vals(r), (FV{10, 13, 28, 40, 46, 67, 64, 94, 82, 121, 100, 148, 118, 175, 136, 202}));
}

TEST(OpsBreadth, EinsumOfThreeOperands) {
  Tensor a = Iota({2, 3});
  Tensor b = xl::sub(Iota({3, 4}), 4);
  Tensor r = xl::einsum("ij,jk,kl->il", {a, b, Iota({4, 2})});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(r), (FV{180, 230, 432, 536}));
  Tensor q = xl::einsum("i,ij,j", {F32({1, 2, 3}), Iota({3, 3}), F32({4, -5, 6})});
  EXPECT_EQ(q.shape(), (Shape{}));
  EXPECT_EQ(q.item<float>(), 162.0f);
}

TEST(OpsBreadth, EinsumMalformedEquationsThrowNamingEinsum) {
  Tensor a = Iota({2, 3});
  Tensor b = Iota({3, 4});
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ij,jk-ik", {a, b})); });  // not an arrow
  ExpectOpError("einsum", [&] { Vals(xl::einsum("i1,jk", {a, b})); });     // not a letter
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ij,jk->ik", {a})); });    // too few operands
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ij->ik", {a})); });       // output letter not in inputs
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ijk->ij", {a})); });      // rank mismatch
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ij->iij", {a})); });      // repeated output letter
}

TEST(OpsBreadth, EinsumMismatchedSizesThrowNamingEinsum) {
  Tensor a = Iota({2, 3});
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ij,jk->ik", {a, a})); });
  ExpectOpError("einsum", [&] { Vals(xl::einsum("ii->i", {a})); });
  ExpectOpError("einsum", [&] { Vals(xl::einsum("...ij,...jk->...ik", {xl::ones({2, 2, 3}), xl::ones({3, 3, 2})})); });
}

// ---------------------------------------------------------------- nonzero, masked_select, unique

TEST(OpsBreadth, NonzeroGivesRowMajorIndices) {
  Tensor n = xl::nonzero(F32({0, 1, 0, 2, 0, NAN}, {2, 3}));
  EXPECT_EQ(n.dtype(), DType::i64);
  EXPECT_EQ(n.shape(), (Shape{3, 2}));
  EXPECT_EQ(Ints(n), (LV{0, 1, 1, 0, 1, 2}));
  Tensor v = xl::nonzero(I32({0, 3, 0, -1}));
  EXPECT_EQ(v.shape(), (Shape{2, 1}));
  EXPECT_EQ(Ints(v), (LV{1, 3}));
  Tensor b = xl::nonzero(Bool({true, false, false, true}, {1, 2, 2}));
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(Ints(b), (LV{0, 0, 0, 0, 1, 1}));
}

TEST(OpsBreadth, NonzeroOfAllZerosIsEmpty) {
  Tensor n = xl::nonzero(xl::zeros({2, 3}));
  EXPECT_EQ(n.shape(), (Shape{0, 2}));
  EXPECT_EQ(n.dtype(), DType::i64);
}

TEST(OpsBreadth, MaskedSelectFlattensTheSelectedElements) {
  Tensor x = Iota({2, 3});
  Tensor s = xl::masked_select(x, x > 2);
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_EQ(Vals(s), (FV{3, 4, 5}));
  EXPECT_EQ(Vals(xl::masked_select(x, Bool({true, false, true}))), (FV{0, 2, 3, 5}));  // mask broadcasts
  EXPECT_EQ(Vals(xl::masked_select(F32({1, 2}), Bool({true, false, true, true}, {2, 2}))), (FV{1, 1, 2}));
  EXPECT_EQ(xl::masked_select(x, x > 10).shape(), (Shape{0}));
  Tensor i = xl::masked_select(I32({5, 6, 7}), Bool({false, true, true}));
  EXPECT_EQ(i.dtype(), DType::i32);
  EXPECT_EQ(Ints(i), (LV{6, 7}));
}

TEST(OpsBreadth, MaskedSelectWithANonBoolMaskThrowsNamingIt) {
  ExpectOpError("masked_select", [] { Vals(xl::masked_select(Iota({3}), xl::ones({3}))); });
  ExpectOpError("masked_select", [] { Vals(xl::masked_select(Iota({3}), Bool({true, false}))); });
}

TEST(OpsBreadth, UniqueIsSortedWithInverseAndCounts) {
  xl::Unique u = xl::unique(F32({3, 1, 3, 2, 1, 3}, {2, 3}), true, true);
  EXPECT_EQ(u.values.shape(), (Shape{3}));
  EXPECT_EQ(Vals(u.values), (FV{1, 2, 3}));
  EXPECT_EQ(u.inverse.dtype(), DType::i64);
  EXPECT_EQ(u.inverse.shape(), (Shape{2, 3}));
  EXPECT_EQ(Ints(u.inverse), (LV{2, 0, 2, 1, 0, 2}));
  EXPECT_EQ(u.counts.dtype(), DType::i64);
  EXPECT_EQ(Ints(u.counts), (LV{2, 1, 3}));
}

TEST(OpsBreadth, UniqueOfIntegersBoolsAndEmptyTensors) {
  xl::Unique u = xl::unique(I32({5, -1, 5, 5, 0}), true, true);
  EXPECT_EQ(u.values.dtype(), DType::i32);
  EXPECT_EQ(Ints(u.values), (LV{-1, 0, 5}));
  EXPECT_EQ(Ints(u.inverse), (LV{2, 0, 2, 2, 1}));
  EXPECT_EQ(Ints(u.counts), (LV{1, 1, 3}));
  xl::Unique b = xl::unique(Bool({true, true}));
  EXPECT_EQ(Bools(b.values), (BV{true}));
  EXPECT_EQ(xl::unique(xl::zeros({0})).values.shape(), (Shape{0}));
}

TEST(OpsBreadth, UniqueKeepsEachNaNApartLikePyTorch) {
  // torch.unique([nan, 1, nan]) is [1, nan, nan]: NaN never equals NaN.
  ExpectClose(Vals(xl::unique(F32({NAN, 1, NAN})).values), {1, NAN, NAN});
}

// ---------------------------------------------------------------- conv1d, conv_transpose2d

namespace {
Tensor Conv1dInput() { return xl::div(xl::sub(Iota({1, 2, 7}), 6), 2); }
Tensor Conv1dWeight() { return F32({1, 0, -1, 0.5, 1, 0, 0, 2, 0, 1, 1, 1, -1, 0, 0, 0, 0, 3}, {3, 2, 3}); }
}  // namespace

TEST(OpsBreadth, Conv1dPlain) {
  Tensor r = xl::conv1d(Conv1dInput(), Conv1dWeight());
  EXPECT_EQ(r.shape(), (Shape{1, 3, 5}));
  ExpectClose(Vals(r), {0.25, 1, 1.75, 2.5, 3.25, -2, 0.5, 3, 5.5, 8, 7.5, 8.5, 9.5, 10.5, 11.5});
}

TEST(OpsBreadth, Conv1dWithBiasStridePaddingAndDilation) {
  Tensor r = xl::conv1d(Conv1dInput(), Conv1dWeight(), F32({0.5, -1, 2}), 2, 1);
  EXPECT_EQ(r.shape(), (Shape{1, 3, 4}));
  ExpectClose(Vals(r), {3.5, 1.5, 3, 5, -5.5, -0.5, 4.5, 5.5, 5, 10.5, 12.5, 2.5});
  Tensor d = xl::conv1d(Conv1dInput(), Conv1dWeight(), std::nullopt, 1, 0, 2);
  EXPECT_EQ(d.shape(), (Shape{1, 3, 3}));
  ExpectClose(Vals(d), {-0.25, 0.5, 1.25, 0.5, 3, 5.5, 10.5, 11.5, 12.5});
  Tensor b = xl::conv1d(Iota({2, 1, 6}), F32({1, 2}, {1, 1, 2}), F32({1}), 3);
  EXPECT_EQ(b.shape(), (Shape{2, 1, 2}));
  ExpectClose(Vals(b), {3, 12, 21, 30});
}

TEST(OpsBreadth, Conv1dWithGroups) {
  Tensor w = F32({1, -1, 2, 0.5, 0, 1, 1, 1}, {4, 1, 2});
  Tensor r = xl::conv1d(Conv1dInput(), w, std::nullopt, 1, 0, 1, 2);
  EXPECT_EQ(r.shape(), (Shape{1, 4, 6}));
  ExpectClose(Vals(r), {-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -7.25, -6,  -4.75, -3.5, -2.25, -1,
                        1,    1.5,  2,    2.5,  3,    3.5,  1.5,   2.5, 3.5,   4.5,  5.5,   6.5});
}

TEST(OpsBreadth, Conv1dWithBadShapesThrowsNamingConv1d) {
  ExpectOpError("conv1d", [] { Vals(xl::conv1d(xl::zeros({1, 3, 5}), Conv1dWeight())); });  // channels
  ExpectOpError("conv1d", [] { Vals(xl::conv1d(xl::zeros({1, 2, 2}), Conv1dWeight())); });  // kernel too long
}

TEST(OpsBreadth, ConvTranspose2dSmallCaseSpreadsEachInput) {
  Tensor r = xl::conv_transpose2d(F32({1, 2, 3, 4}, {1, 1, 2, 2}), xl::ones({1, 1, 2, 2}));
  EXPECT_EQ(r.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(Vals(r), (FV{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

namespace {
Tensor ConvTInput() { return xl::sub(xl::div(Iota({1, 2, 2, 2}), 4), 0.5); }
Tensor ConvTWeight() {
  std::vector<float> v(54);
  for (int i = 0; i < 54; ++i) v[i] = static_cast<float>(i % 5 - 2) / 2;
  return F32(v, {2, 3, 3, 3});
}
}  // namespace

TEST(OpsBreadth, ConvTranspose2dWithStridePaddingOutputPaddingAndBias) {
  Tensor r = xl::conv_transpose2d(ConvTInput(), ConvTWeight(), F32({1, 0, -1}), {2, 2}, {1, 1}, {1, 1});
  EXPECT_EQ(r.shape(), (Shape{1, 3, 4, 4}));
  ExpectClose(Vals(r), {0.25, 0.625, 0.375,  1.25,   2,     1.5,  2.25,   1.375,  0.5,  -0.125, 0.625, 0.75,
                        2,    0.5,   2.25,   -0.125, -0.75, 0,    -0.875, -0.625, 0.5,  0.875,  0.25,  1.25,
                        -1,   0.75,  -1.125, -0.375, 0.5,   0.75, 0.5,    1.25,   -0.5, -1.25,  -0.25, -1.875,
                        -1,   -2.25, -1.125, -0.75,  0,     -1.5, 0.25,   -2.125, -1,   -0.875, -1.25, -0.5});
}

TEST(OpsBreadth, ConvTranspose2dPlainGroupsAndDilation) {
  Tensor p = xl::conv_transpose2d(ConvTInput(), ConvTWeight());
  EXPECT_EQ(p.shape(), (Shape{1, 3, 4, 4}));
  ExpectClose(Vals(p), {0.5,  0.75,   1,      0.75,   -0.75, -1.375, 1.375, 1.5,    -0.5,  -0.625, -0.375, -1.125,
                        0.5,  1.5,    0.25,   -1.125, -0.75, -0.125, 0.75,  0.5,    0,     -0.375, -1.375, -0.125,
                        1.5,  1,      -0.625, 0.375,  0,     0.25,   1.5,   1.25,   -0.75, -1.625, -0.125, 0.25,
                        -0.5, -0.625, -0.375, -1.125, -0.25, 1.375,  1,     -0.625, -0.5,  -0.375, 0.25,   0.5});
  Tensor g = xl::conv_transpose2d(F32({1, 2, 3, 4}, {1, 2, 1, 2}), F32({1, 2, -1, 1}, {2, 1, 1, 2}), std::nullopt,
                                  {1, 1}, {0, 0}, {0, 0}, 2);
  EXPECT_EQ(g.shape(), (Shape{1, 2, 1, 3}));
  EXPECT_EQ(Vals(g), (FV{1, 4, 4, -3, -1, 4}));
  Tensor d = xl::conv_transpose2d(F32({1, 2}, {1, 1, 1, 2}), F32({1, 10}, {1, 1, 1, 2}), std::nullopt, {1, 1}, {0, 0},
                                  {0, 0}, 1, {1, 2});
  EXPECT_EQ(d.shape(), (Shape{1, 1, 1, 4}));
  EXPECT_EQ(Vals(d), (FV{1, 2, 10, 20}));
}

TEST(OpsBreadth, ConvTranspose2dWithBadArgumentsThrowsNamingIt) {
  ExpectOpError("conv_transpose2d",
                [] { Vals(xl::conv_transpose2d(xl::zeros({1, 3, 2, 2}), xl::zeros({2, 1, 2, 2}))); });
  ExpectOpError("conv_transpose2d", [] {
    Vals(xl::conv_transpose2d(xl::zeros({1, 1, 2, 2}), xl::zeros({1, 1, 2, 2}), std::nullopt, {1, 1}, {0, 0},
                              {1, 1}));  // output padding must be below the stride
  });
}

// ---------------------------------------------------------------- pooling and resampling

TEST(OpsBreadth, AvgPool1dCountsPaddingAsZeros) {
  Tensor p = F32({1, 2, 3, 4, 5, 6, 7}, {1, 1, 7});
  Tensor a = xl::avg_pool1d(p, 2);
  EXPECT_EQ(a.shape(), (Shape{1, 1, 3}));
  ExpectClose(Vals(a), {1.5, 3.5, 5.5});
  Tensor b = xl::avg_pool1d(p, 3, 2, 1);
  EXPECT_EQ(b.shape(), (Shape{1, 1, 4}));
  ExpectClose(Vals(b), {1, 3, 5, 4.33333349});
  ExpectClose(Vals(xl::avg_pool1d(p, 3, 1)), {2, 3, 4, 5, 6});
}

TEST(OpsBreadth, MaxPool1dPadsWithMinusInfinity) {
  Tensor p = F32({1, 2, 3, 4, 5, 6, 7}, {1, 1, 7});
  EXPECT_EQ(Vals(xl::max_pool1d(p, 2)), (FV{2, 4, 6}));
  Tensor n = xl::max_pool1d(xl::neg(p), 3, 2, 1);
  EXPECT_EQ(n.shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(Vals(n), (FV{-1, -2, -4, -6}));
  EXPECT_EQ(Vals(xl::max_pool1d(F32({3, 1, 4, 1, 5, 9, 2}, {1, 1, 7}), 3, 1)), (FV{4, 4, 5, 9, 9}));
}

TEST(OpsBreadth, Pool1dWithBadArgumentsThrowsNamingTheOp) {
  ExpectOpError("avg_pool1d", [] { Vals(xl::avg_pool1d(xl::zeros({1, 1, 2}), 3)); });
  ExpectOpError("avg_pool1d", [] { Vals(xl::avg_pool1d(xl::zeros({1, 1, 6}), 2, 2, 2)); });
  ExpectOpError("max_pool1d", [] { Vals(xl::max_pool1d(xl::zeros({1, 1, 6}), 2, 2, 2)); });
}

TEST(OpsBreadth, AdaptiveAvgPool2dWithSizesThatDoNotDivide) {
  Tensor a = Iota({1, 1, 5, 7});
  Tensor r = xl::adaptive_avg_pool2d(a, {3, 4});
  EXPECT_EQ(r.shape(), (Shape{1, 1, 3, 4}));
  ExpectClose(Vals(r), {4, 5.5, 7.5, 9, 14.5, 16, 18, 19.5, 25, 26.5, 28.5, 30});
  ExpectClose(Vals(xl::adaptive_avg_pool2d(a, {1, 1})), {17});
  EXPECT_EQ(Vals(xl::adaptive_avg_pool2d(a, {5, 7})), Vals(a));
}

TEST(OpsBreadth, AdaptiveAvgPool2dUpsamplingAndBatches) {
  ExpectClose(Vals(xl::adaptive_avg_pool2d(Iota({1, 1, 2, 2}), {3, 3})), {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
  Tensor b = xl::adaptive_avg_pool2d(Iota({2, 1, 4, 4}), {2, 2});
  EXPECT_EQ(b.shape(), (Shape{2, 1, 2, 2}));
  ExpectClose(Vals(b), {2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5});
}

TEST(OpsBreadth, InterpolateNearestUpAndDown) {
  Tensor up = xl::interpolate(F32({1, 2, 3, 4}, {1, 1, 2, 2}), {3, 5});
  EXPECT_EQ(up.shape(), (Shape{1, 1, 3, 5}));
  EXPECT_EQ(Vals(up), (FV{1, 1, 1, 2, 2, 1, 1, 1, 2, 2, 3, 3, 3, 4, 4}));
  Tensor down = xl::interpolate(Iota({1, 1, 4, 4}), {3, 2}, "nearest");
  EXPECT_EQ(Vals(down), (FV{0, 2, 4, 6, 8, 10}));
  Tensor c = xl::interpolate(Iota({1, 2, 2, 2}), {4, 4});
  EXPECT_EQ(c.shape(), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(Vals(c),
            (FV{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3, 4, 4, 5, 5, 4, 4, 5, 5, 6, 6, 7, 7, 6, 6, 7, 7}));
}

TEST(OpsBreadth, InterpolateBilinearWithoutAlignCorners) {
  Tensor i = F32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor up = xl::interpolate(i, {3, 4}, "bilinear");
  EXPECT_EQ(up.shape(), (Shape{1, 1, 3, 4}));
  ExpectClose(Vals(up), {1, 1.25, 1.75, 2, 2, 2.25, 2.75, 3, 3, 3.25, 3.75, 4});
  Tensor j = Iota({1, 1, 4, 5});
  ExpectClose(Vals(xl::interpolate(j, {3, 2}, "bilinear")),
              {1.58333349, 4.08333349, 8.25, 10.75, 14.9166679, 17.4166679});
  ExpectClose(Vals(xl::interpolate(j, {1, 1}, "bilinear")), {9.5});
  EXPECT_EQ(Vals(xl::interpolate(j, {4, 5}, "bilinear")), Vals(j));
}

TEST(OpsBreadth, InterpolateBilinearWithAlignCorners) {
  Tensor i = F32({1, 2, 3, 4}, {1, 1, 2, 2});
  ExpectClose(Vals(xl::interpolate(i, {3, 4}, "bilinear", true)),
              {1, 1.33333325, 1.66666675, 2, 2, 2.33333325, 2.66666675, 3, 3, 3.33333325, 3.66666675, 4});
  Tensor j = Iota({1, 1, 4, 5});
  ExpectClose(Vals(xl::interpolate(j, {3, 2}, "bilinear", true)), {0, 4, 7.5, 11.5, 15, 19});
  ExpectClose(Vals(xl::interpolate(j, {1, 1}, "bilinear", true)), {0});
}

TEST(OpsBreadth, InterpolateWithAnUnknownModeThrowsNamingInterpolate) {
  ExpectOpError("interpolate", [] { Vals(xl::interpolate(Iota({1, 1, 2, 2}), {3, 3}, "bicubicx")); });
  ExpectOpError("interpolate", [] { Vals(xl::interpolate(Iota({1, 2, 3}), {2, 2})); });  // not 4-D
}

// ---------------------------------------------------------------- dropout

TEST(OpsBreadth, DropoutZeroesAFractionAndScalesTheRest) {
  xl::manual_seed(11);
  const int n = 8000;
  std::vector<float> v = Vals(xl::dropout(xl::ones({n}), 0.25));
  int zeros = 0;
  double sum = 0;
  for (float x : v) {
    if (x == 0) {
      ++zeros;
    } else {
      EXPECT_NEAR(x, 1 / 0.75, 1e-6);
    }
    sum += x;
  }
  EXPECT_NEAR(zeros / double(n), 0.25, 0.03);
  EXPECT_NEAR(sum / n, 1.0, 0.05);
}

TEST(OpsBreadth, DropoutIsTheIdentityWhenNotTrainingOrWithPZero) {
  Tensor x = xl::sub(Iota({3, 4}), 5);
  EXPECT_EQ(Vals(xl::dropout(x, 0.5, false)), Vals(x));
  EXPECT_EQ(Vals(xl::dropout(x, 0.0)), Vals(x));
  EXPECT_EQ(xl::dropout(x, 0.5).shape(), (Shape{3, 4}));
}

TEST(OpsBreadth, DropoutWithPOneZeroesEverything) { EXPECT_EQ(Vals(xl::dropout(xl::ones({3}), 1.0)), (FV{0, 0, 0})); }

TEST(OpsBreadth, DropoutWithPOutsideZeroOneThrowsNamingDropout) {
  ExpectOpError("dropout", [] { Vals(xl::dropout(xl::ones({3}), 1.5)); });
  ExpectOpError("dropout", [] { Vals(xl::dropout(xl::ones({3}), -0.1)); });
}

// ---------------------------------------------------------------- randint, randperm, bernoulli, multinomial

TEST(OpsBreadth, RandintStaysInRangeAndIsRoughlyUniform) {
  xl::manual_seed(3);
  const int n = 5000;
  Tensor r = xl::randint(-3, 7, {n});
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(r.shape(), (Shape{n}));
  std::vector<int64_t> v = Ints(r);
  for (int64_t x : v) {
    EXPECT_GE(x, -3);
    EXPECT_LT(x, 7);
  }
  for (int64_t value = -3; value < 7; ++value) EXPECT_NEAR(Fraction(v, value), 0.1, 0.025) << value;
}

TEST(OpsBreadth, RandintWithADtypeAndASeedIsReproducible) {
  xl::manual_seed(5);
  Tensor a = xl::randint(0, 1000, {2, 3}, DType::i32);
  EXPECT_EQ(a.dtype(), DType::i32);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  std::vector<int64_t> first = Ints(a);
  xl::manual_seed(5);
  EXPECT_EQ(Ints(xl::randint(0, 1000, {2, 3}, DType::i32)), first);
  std::vector<int64_t> one = Ints(xl::randint(4, 5, {10}));
  EXPECT_EQ(one, LV(10, 4));
}

TEST(OpsBreadth, RandintWithHighNotAboveLowThrowsNamingRandint) {
  ExpectOpError("randint", [] { Ints(xl::randint(3, 3, {2})); });
  ExpectOpError("randint", [] { Ints(xl::randint(5, 1, {2})); });
}

TEST(OpsBreadth, RandpermIsAPermutation) {
  xl::manual_seed(8);
  Tensor p = xl::randperm(50);
  EXPECT_EQ(p.dtype(), DType::i64);
  EXPECT_EQ(p.shape(), (Shape{50}));
  std::vector<int64_t> v = Ints(p);
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  std::vector<int64_t> identity(50);
  for (int64_t i = 0; i < 50; ++i) identity[i] = i;
  EXPECT_NE(v, identity);
}

TEST(OpsBreadth, RandpermPlacesEveryValueEverywhereEvenly) {
  xl::manual_seed(9);
  // How often 0 lands in each of 4 places over many draws: about a quarter each.
  std::vector<int> where(4, 0);
  const int draws = 800;
  for (int d = 0; d < draws; ++d) {
    std::vector<int64_t> v = Ints(xl::randperm(4));
    for (int i = 0; i < 4; ++i)
      if (v[i] == 0) ++where[i];
  }
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(where[i] / double(draws), 0.25, 0.06) << i;
}

TEST(OpsBreadth, RandpermSmallSizesAndDtype) {
  EXPECT_EQ(xl::randperm(0).shape(), (Shape{0}));
  EXPECT_EQ(Ints(xl::randperm(1)), (LV{0}));
  Tensor p = xl::randperm(5, DType::i32);
  EXPECT_EQ(p.dtype(), DType::i32);
  std::vector<int64_t> v = Ints(p);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (LV{0, 1, 2, 3, 4}));
}

TEST(OpsBreadth, BernoulliFrequencyFollowsP) {
  xl::manual_seed(21);
  const int n = 6000;
  Tensor b = xl::bernoulli(xl::full({n}, 0.3));
  EXPECT_EQ(b.dtype(), DType::f32);
  std::vector<float> v = Vals(b);
  double ones = 0;
  for (float x : v) {
    EXPECT_TRUE(x == 0 || x == 1) << x;
    ones += x;
  }
  EXPECT_NEAR(ones / n, 0.3, 0.025);
}

TEST(OpsBreadth, BernoulliOfZeroAndOneIsExactAndKeepsF64) {
  xl::manual_seed(22);
  Tensor p = xl::repeat(F64({0, 1}), {500});
  Tensor b = xl::bernoulli(p);
  EXPECT_EQ(b.dtype(), DType::f64);
  std::vector<double> v = b.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], i % 2 == 0 ? 0.0 : 1.0) << i;
}

TEST(OpsBreadth, MultinomialWithReplacementFollowsTheWeights) {
  xl::manual_seed(31);
  const int n = 6000;
  Tensor s = xl::multinomial(F32({1, 0, 3}), n, true);
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.shape(), (Shape{n}));
  std::vector<int64_t> v = Ints(s);
  EXPECT_EQ(Fraction(v, 1), 0.0);  // a zero weight is never drawn
  EXPECT_NEAR(Fraction(v, 0), 0.25, 0.025);
  EXPECT_NEAR(Fraction(v, 2), 0.75, 0.025);
}

TEST(OpsBreadth, MultinomialOfRowsGivesOneRowOfSamplesEach) {
  xl::manual_seed(32);
  Tensor s = xl::multinomial(F32({0, 1, 0, 0, 0, 1}, {2, 3}), 4, true);
  EXPECT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_EQ(Ints(s), (LV{1, 1, 1, 1, 2, 2, 2, 2}));
}

TEST(OpsBreadth, MultinomialWithoutReplacementNeverRepeatsAnIndex) {
  xl::manual_seed(33);
  const int rows = 200;
  Tensor probs = xl::repeat(F32({0.1, 0.2, 0.3, 0.15, 0.25}, {1, 5}), {rows, 1});
  Tensor s = xl::multinomial(probs, 5);
  EXPECT_EQ(s.shape(), (Shape{rows, 5}));
  std::vector<int64_t> v = Ints(s);
  for (int r = 0; r < rows; ++r) {
    std::set<int64_t> seen(v.begin() + r * 5, v.begin() + r * 5 + 5);
    EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3, 4})) << "row " << r;
  }
}

TEST(OpsBreadth, MultinomialWithoutReplacementSkipsZeroWeights) {
  xl::manual_seed(34);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> v = Ints(xl::multinomial(F32({0.5, 0, 0.5, 1}), 3));
    std::set<int64_t> seen(v.begin(), v.end());
    EXPECT_EQ(seen, (std::set<int64_t>{0, 2, 3}));
  }
}

TEST(OpsBreadth, MultinomialWithoutReplacementDrawsSequentially) {
  // Weights 1, 2, 7: the first draw is 0, 1, 2 with 0.1, 0.2, 0.7; the second draw is 0 with
  // 0.2 * 1/8 + 0.7 * 1/3 = 0.2583 (each draw renormalises over what is left).
  xl::manual_seed(35);
  const int rows = 4000;
  Tensor s = xl::multinomial(xl::repeat(F32({1, 2, 7}, {1, 3}), {rows, 1}), 2);
  std::vector<int64_t> v = Ints(s);
  std::vector<int64_t> first, second;
  for (int r = 0; r < rows; ++r) {
    first.push_back(v[2 * r]);
    second.push_back(v[2 * r + 1]);
    EXPECT_NE(v[2 * r], v[2 * r + 1]);
  }
  EXPECT_NEAR(Fraction(first, 0), 0.1, 0.02);
  EXPECT_NEAR(Fraction(first, 1), 0.2, 0.025);
  EXPECT_NEAR(Fraction(first, 2), 0.7, 0.025);
  EXPECT_NEAR(Fraction(second, 0), 0.2 / 8 + 0.7 / 3, 0.025);
}

TEST(OpsBreadth, MultinomialWithTooManySamplesThrowsNamingMultinomial) {
  ExpectOpError("multinomial", [] { Ints(xl::multinomial(F32({1, 1}), 3)); });
  ExpectOpError("multinomial", [] { Ints(xl::multinomial(xl::ones({2, 2, 2}), 1)); });
}

// ---------------------------------------------------------------- linspace, logspace

TEST(OpsBreadth, LinspaceIncludesBothEnds) {
  Tensor l = xl::linspace(0, 1, 5);
  EXPECT_EQ(l.dtype(), DType::f32);
  EXPECT_EQ(l.shape(), (Shape{5}));
  ExpectClose(Vals(l), {0, 0.25, 0.5, 0.75, 1});
  ExpectClose(Vals(xl::linspace(3, -1, 3)), {3, 1, -1});
  ExpectClose(Vals(xl::linspace(-1, 1, 2)), {-1, 1});
  ExpectClose(Vals(xl::linspace(0, 1, 7)), {0, 0.166666672, 0.333333343, 0.5, 0.666666627, 0.833333313, 1});
  ExpectClose(Vals(xl::linspace(-10, 10, 11)), {-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10});
}

TEST(OpsBreadth, LinspaceOfOneOrZeroStepsAndF64) {
  ExpectClose(Vals(xl::linspace(2, 7, 1)), {2});
  EXPECT_EQ(xl::linspace(2, 7, 0).shape(), (Shape{0}));
  Tensor d = xl::linspace(0, 1, 4, DType::f64);
  EXPECT_EQ(d.dtype(), DType::f64);
  std::vector<double> v = d.to_vector<double>();
  EXPECT_NEAR(v[1], 1.0 / 3, 1e-15);
  EXPECT_NEAR(v[2], 2.0 / 3, 1e-15);
  EXPECT_EQ(v[3], 1.0);
}

TEST(OpsBreadth, LinspaceWithNegativeStepsThrowsNamingLinspace) {
  ExpectOpError("linspace", [] { Vals(xl::linspace(0, 1, -1)); });
  ExpectOpError("logspace", [] { Vals(xl::logspace(0, 1, -1)); });
}

TEST(OpsBreadth, LogspaceRaisesTheBase) {
  ExpectClose(Vals(xl::logspace(0, 3, 4)), {1, 10, 100, 1000});
  ExpectClose(Vals(xl::logspace(-1, 2, 4, 2)), {0.5, 1, 2, 4});
  ExpectClose(Vals(xl::logspace(1, -1, 3)), {10, 1, 0.100000001});
  ExpectClose(Vals(xl::logspace(2, 5, 1)), {100});
  EXPECT_EQ(xl::logspace(0, 1, 0).shape(), (Shape{0}));
  Tensor d = xl::logspace(0, 2, 3, 10, DType::f64);
  EXPECT_EQ(d.dtype(), DType::f64);
  std::vector<double> v = d.to_vector<double>();
  EXPECT_NEAR(v[0], 1, 1e-12);
  EXPECT_NEAR(v[1], 10, 1e-12);
  EXPECT_NEAR(v[2], 100, 1e-12);
}

// ---------------------------------------------------------------- the cpu backend and the reference agree

TEST(OpsBreadth, NewOpsAgreeOnTheCpuBackendAndTheReference) {
  struct Case {
    std::string name;
    Tensor value;
    std::vector<double> want;
  };
  Tensor m = F32({3, 1, 2, 0, 5, 4}, {2, 3});
  std::vector<Case> cases = {
      {"logaddexp", xl::logaddexp(F32({1000, 1, -3}), F32({1000, 2, 5})), {1000.69318, 2.31326175, 5.00033522}},
      {"hypot", xl::hypot(F32({3, 1e30}), F32({4, 1e30})), {5, 1.41421351e+30}},
      {"softplus", xl::softplus(F32({-1, 0, 21})), {0.313261688, 0.693147182, 21}},
      {"cumsum", xl::cumsum(M23(), 1), {1, 3, 6, 4, 9, 15}},
      {"sort", xl::sort(m, -1, true).values, {3, 2, 1, 5, 4, 0}},
      {"topk", xl::topk(m, 2).values, {3, 2, 5, 4}},
      {"roll", xl::roll(Iota({2, 3}), {1, -1}, {0, 1}), {4, 5, 3, 1, 2, 0}},
      {"norm", xl::norm(F32({3, -4, 0, 1, 2, -2}, {2, 3}), 3, {1}), {4.49794149, 2.57128167}},
      {"einsum", xl::einsum("ij,jk->ik", {Iota({2, 3}), xl::sub(Iota({3, 4}), 4)}), {8, 11, 14, 17, 8, 20, 32, 44}},
      {"conv1d", xl::conv1d(Iota({2, 1, 6}), F32({1, 2}, {1, 1, 2}), F32({1}), 3), {3, 12, 21, 30}},
      {"interpolate",
       xl::interpolate(F32({1, 2, 3, 4}, {1, 1, 2, 2}), {3, 4}, "bilinear"),
       {1, 1.25, 1.75, 2, 2, 2.25, 2.75, 3, 3, 3.25, 3.75, 4}},
      {"adaptive_avg_pool2d", xl::adaptive_avg_pool2d(Iota({1, 1, 2, 2}), {3, 3}), {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(c.value.is_pending()) << c.name;
    for (const std::string& backend : Backends()) {
      SCOPED_TRACE(c.name + " on " + backend);
      ExpectClose(ValuesOn<float>(c.value, backend), c.want);
    }
  }
  // Integer results: the indices of a sort and of a cumulative max, and an integer cumsum.
  std::vector<std::pair<Tensor, std::vector<int64_t>>> ints = {
      {xl::sort(F32({3, 1, 2, 1, 3, 0})).indices, {5, 1, 3, 2, 0, 4}},
      {xl::cummax(F32({1, 3, 2, 3, 5, 5, 0}), 0).indices, {0, 1, 1, 3, 4, 5, 5}},
      {xl::cumsum(I32({1, 2, 3}), 0), {1, 3, 6}},
      {xl::max(F32({3, 7, 7, 1, 5, 2, 5, 2}, {2, 4}), 1).indices, {1, 0}},
  };
  for (const auto& [value, want] : ints) {
    ASSERT_TRUE(value.is_pending());
    ASSERT_EQ(value.dtype(), DType::i64);
    for (const std::string& backend : Backends()) EXPECT_EQ(ValuesOn<int64_t>(value, backend), want) << backend;
  }
}
