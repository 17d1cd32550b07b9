// Unit tests for the reductions, softmax and log_softmax in xlite/ops.h.
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

// [[1,2,3],[4,5,6]]
Tensor M23() { return F32({1, 2, 3, 4, 5, 6}, {2, 3}); }
// 2x3x4 with values 0..23
Tensor A234() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = float(i);
  return xlite::tensor(v, Shape{2, 3, 4});
}

}  // namespace

// ---------------------------------------------------------------- sum

TEST(OpsReduce, SumAll) {
  Tensor s = xlite::sum(M23());
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_EQ(s.dtype(), DType::f32);
  EXPECT_FLOAT_EQ(s.item<float>(), 21.0f);
  EXPECT_FLOAT_EQ(M23().sum().item<float>(), 21.0f);
}

TEST(OpsReduce, SumAlongDims) {
  Tensor s0 = xlite::sum(M23(), {0});
  EXPECT_EQ(s0.shape(), (Shape{3}));
  ExpectClose(s0.to_vector<float>(), {5, 7, 9});
  Tensor s1 = xlite::sum(M23(), {1});
  EXPECT_EQ(s1.shape(), (Shape{2}));
  ExpectClose(s1.to_vector<float>(), {6, 15});
}

TEST(OpsReduce, SumNegativeDimAndKeepdim) {
  Tensor s = xlite::sum(M23(), {-1}, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  ExpectClose(s.to_vector<float>(), {6, 15});
  Tensor m = M23().sum({-2}, true);
  EXPECT_EQ(m.shape(), (Shape{1, 3}));
  ExpectClose(m.to_vector<float>(), {5, 7, 9});
}

TEST(OpsReduce, SumMultipleDims) {
  Tensor s = xlite::sum(A234(), {0, 2});
  EXPECT_EQ(s.shape(), (Shape{3}));
  // sum over i,k of (12 i + 4 j + k) = 12*4*1 + 8*4j + 2*6 ... computed directly:
  ExpectClose(s.to_vector<float>(), {60, 92, 124});
  Tensor k = xlite::sum(A234(), {2, 0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 3, 1}));
  ExpectClose(k.to_vector<float>(), {60, 92, 124});
}

TEST(OpsReduce, SumOfIntsIsI64) {
  Tensor s = xlite::sum(I32({1, 2, 3}));
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.item<int64_t>(), 6);
  Tensor d = xlite::sum(I32({1, 2, 3, 4}, {2, 2}), {1});
  EXPECT_EQ(d.dtype(), DType::i64);
  EXPECT_EQ(d.to_vector<int64_t>(), (std::vector<int64_t>{3, 7}));
}

TEST(OpsReduce, SumOfU8DoesNotWrap) {
  Tensor s = xlite::sum(U8({200, 100, 255}));
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.item<int64_t>(), 555);
}

TEST(OpsReduce, SumOfBoolCountsTrue) {
  Tensor s = xlite::sum(Bool({true, false, true, true}));
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.item<int64_t>(), 3);
}

TEST(OpsReduce, SumOfI32BeyondI32Range) {
  Tensor s = xlite::sum(I32({2000000000, 2000000000}));
  EXPECT_EQ(s.item<int64_t>(), 4000000000LL);
}

TEST(OpsReduce, SumHalfKeepsDtype) {
  Tensor s = xlite::sum(F32({1.5, 2.25}).to(DType::f16));
  EXPECT_EQ(s.dtype(), DType::f16);
  EXPECT_FLOAT_EQ(s.item<float>(), 3.75f);
  Tensor b = xlite::sum(F32({1, 2}).to(DType::bf16));
  EXPECT_EQ(b.dtype(), DType::bf16);
  EXPECT_FLOAT_EQ(b.item<float>(), 3.0f);
}

TEST(OpsReduce, SumF64) {
  Tensor s = xlite::sum(F64({0.1, 0.2, 0.3}));
  EXPECT_EQ(s.dtype(), DType::f64);
  EXPECT_NEAR(s.item<double>(), 0.6, 1e-15);
}

TEST(OpsReduce, SumManyOnes) {
  Tensor s = xlite::sum(xlite::ones({100, 100}));
  EXPECT_FLOAT_EQ(s.item<float>(), 10000.0f);
}

TEST(OpsReduce, SumOfEmpty) {
  Tensor s = xlite::sum(xlite::zeros({0}));
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(s.item<float>(), 0.0f);
  Tensor d = xlite::sum(xlite::zeros({0, 3}), {0});
  EXPECT_EQ(d.shape(), (Shape{3}));
  ExpectClose(d.to_vector<float>(), {0, 0, 0});
  Tensor e = xlite::sum(xlite::zeros({0, 3}), {1});
  EXPECT_EQ(e.shape(), (Shape{0}));
}

TEST(OpsReduce, SumOfZeroDim) {
  Tensor s = xlite::sum(xlite::tensor(5.0f));
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(s.item<float>(), 5.0f);
}

TEST(OpsReduce, SumOfTransposedInput) {
  Tensor s = xlite::sum(M23().t(), {1});
  ExpectClose(s.to_vector<float>(), {5, 7, 9});
  Tensor p = xlite::sum(xlite::permute(A234(), {2, 0, 1}), {0});  // sums over the original last dim
  EXPECT_EQ(p.shape(), (Shape{2, 3}));
  ExpectClose(p.to_vector<float>(), {6, 22, 38, 54, 70, 86});
}

TEST(OpsReduce, SumDimOutOfRangeThrows) {
  Tensor x = M23();
  std::string msg = ErrorMessage([&] { xlite::sum(x, {2}).to_vector<float>(); });
  EXPECT_NE(msg.find("[sum]"), std::string::npos) << msg;
  EXPECT_THROW(xlite::sum(x, {-3}), xlite::Error);
}

TEST(OpsReduce, SumDuplicateDimThrows) {
  Tensor x = M23();
  EXPECT_THROW({ xlite::sum(x, {1, -1}).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- mean

TEST(OpsReduce, MeanAllAndDims) {
  EXPECT_FLOAT_EQ(xlite::mean(M23()).item<float>(), 3.5f);
  ExpectClose(xlite::mean(M23(), {0}).to_vector<float>(), {2.5, 3.5, 4.5});
  Tensor k = xlite::mean(M23(), {-1}, true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  ExpectClose(k.to_vector<float>(), {2, 5});
  ExpectClose(M23().mean({1}).to_vector<float>(), {2, 5});
  EXPECT_FLOAT_EQ(M23().mean().item<float>(), 3.5f);
}

TEST(OpsReduce, MeanMultipleDims) {
  Tensor m = xlite::mean(A234(), {0, 2});
  EXPECT_EQ(m.shape(), (Shape{3}));
  ExpectClose(m.to_vector<float>(), {7.5, 11.5, 15.5});
}

TEST(OpsReduce, MeanF64AndHalf) {
  Tensor m = xlite::mean(F64({1, 2}));
  EXPECT_EQ(m.dtype(), DType::f64);
  EXPECT_DOUBLE_EQ(m.item<double>(), 1.5);
  Tensor h = xlite::mean(F32({1, 2, 4, 5}).to(DType::f16));
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_FLOAT_EQ(h.item<float>(), 3.0f);
}

TEST(OpsReduce, MeanOfIntThrows) {
  Tensor x = I32({1, 2});
  std::string msg = ErrorMessage([&] { xlite::mean(x).to_vector<float>(); });
  EXPECT_NE(msg.find("[mean]"), std::string::npos) << msg;
  Tensor y = I64({1, 2});
  EXPECT_THROW(xlite::mean(y, {0}), xlite::Error);
}

TEST(OpsReduce, MeanOfEmptyIsNaN) { EXPECT_TRUE(std::isnan(xlite::mean(xlite::zeros({0})).item<float>())); }

// ---------------------------------------------------------------- prod

TEST(OpsReduce, ProdAllAndDims) {
  Tensor p = xlite::prod(M23());
  EXPECT_EQ(p.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(p.item<float>(), 720.0f);
  ExpectClose(xlite::prod(M23(), {1}).to_vector<float>(), {6, 120});
  Tensor k = xlite::prod(M23(), {0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 3}));
  ExpectClose(k.to_vector<float>(), {4, 10, 18});
  EXPECT_FLOAT_EQ(M23().prod().item<float>(), 720.0f);
}

TEST(OpsReduce, ProdOfIntsIsI64) {
  Tensor p = xlite::prod(I32({100000, 100000}));
  EXPECT_EQ(p.dtype(), DType::i64);
  EXPECT_EQ(p.item<int64_t>(), 10000000000LL);
}

TEST(OpsReduce, ProdOfEmptyIsOne) {
  EXPECT_FLOAT_EQ(xlite::prod(xlite::zeros({0})).item<float>(), 1.0f);
  Tensor d = xlite::prod(xlite::zeros({0, 2}), {0});
  EXPECT_EQ(d.shape(), (Shape{2}));
  ExpectClose(d.to_vector<float>(), {1, 1});
}

TEST(OpsReduce, ProdWithNegativesAndZero) {
  ExpectClose(xlite::prod(F32({-1, 2, -3, 0.5, 4, 0}, {2, 3}), {1}).to_vector<float>(), {6, 0});
}

// ---------------------------------------------------------------- max / min

TEST(OpsReduce, MaxMinAll) {
  Tensor x = F32({3, -7, 5, 1}, {2, 2});
  Tensor mx = xlite::max(x);
  EXPECT_EQ(mx.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(mx.item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(xlite::min(x).item<float>(), -7.0f);
  EXPECT_FLOAT_EQ(x.max().item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(x.min().item<float>(), -7.0f);
}

TEST(OpsReduce, MaxMinAlongDims) {
  Tensor x = F32({3, -7, 5, 1, 9, -2}, {2, 3});
  ExpectClose(xlite::amax(x, {0}).to_vector<float>(), {3, 9, 5});
  ExpectClose(xlite::amin(x, {1}).to_vector<float>(), {-7, -2});
  Tensor k = xlite::amax(x, {-1}, true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  ExpectClose(k.to_vector<float>(), {5, 9});
  ExpectClose(x.min({0}, true).to_vector<float>(), {1, -7, -2});
}

TEST(OpsReduce, MaxMinOfAllNegative) {
  // An implementation that starts from 0 instead of -inf would get this wrong.
  EXPECT_FLOAT_EQ(xlite::max(F32({-5, -3, -9})).item<float>(), -3.0f);
  EXPECT_FLOAT_EQ(xlite::min(F32({5, 3, 9})).item<float>(), 3.0f);
}

TEST(OpsReduce, MaxMinKeepIntDtype) {
  Tensor x = I32({4, -1, 9, 2}, {2, 2});
  Tensor mx = xlite::amax(x, {1});
  EXPECT_EQ(mx.dtype(), DType::i32);
  EXPECT_EQ(mx.to_vector<int32_t>(), (std::vector<int32_t>{4, 9}));
  Tensor mn = xlite::min(x);
  EXPECT_EQ(mn.dtype(), DType::i32);
  EXPECT_EQ(mn.item<int32_t>(), -1);
}

TEST(OpsReduce, MaxMinPropagateNaN) {
  Tensor x = F32({1, kNaN, 3});
  EXPECT_TRUE(std::isnan(xlite::max(x).item<float>()));
  EXPECT_TRUE(std::isnan(xlite::min(x).item<float>()));
}

TEST(OpsReduce, MaxOfEmptyThrows) {
  Tensor e = xlite::zeros({0});
  EXPECT_THROW({ xlite::max(e).item<float>(); }, xlite::Error);
  Tensor e2 = xlite::zeros({2, 0});
  EXPECT_THROW({ xlite::amin(e2, {1}).to_vector<float>(); }, xlite::Error);
}

TEST(OpsReduce, MaxOverNonEmptyDimOfEmptyTensor) {
  Tensor m = xlite::amax(xlite::zeros({2, 0}), {0});
  EXPECT_EQ(m.shape(), (Shape{0}));
  EXPECT_TRUE(m.to_vector<float>().empty());
}

// ---------------------------------------------------------------- argmax / argmin

TEST(OpsReduce, ArgmaxFirstIndexOfMax) {
  Tensor x = F32({1, 5, 5, 7, 7, 2}, {2, 3});
  Tensor a = xlite::argmax(x, 1);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(xlite::argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 0}));
}

TEST(OpsReduce, ArgminFirstIndexOfMin) {
  Tensor x = F32({3, 1, 1, 0, 2, 0}, {2, 3});
  Tensor a = xlite::argmin(x, -1);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(x.argmin(0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
}

TEST(OpsReduce, ArgmaxKeepdim) {
  Tensor x = F32({1, 9, 3, 4}, {2, 2});
  Tensor a = xlite::argmax(x, 0, true);
  EXPECT_EQ(a.shape(), (Shape{1, 2}));
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  Tensor b = x.argmax(-1, true);
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
}

TEST(OpsReduce, ArgmaxArgminFlattened) {
  Tensor x = F32({3, 8, -1, 8, 2, -1}, {2, 3});
  Tensor a = xlite::argmax(x);
  EXPECT_EQ(a.shape(), (Shape{}));
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(a.item<int64_t>(), 1);
  EXPECT_EQ(xlite::argmin(x).item<int64_t>(), 2);
}

TEST(OpsReduce, ArgmaxOfIntsAndNegatives) {
  EXPECT_EQ(xlite::argmax(I32({-5, -2, -9})).item<int64_t>(), 1);
  EXPECT_EQ(xlite::argmin(I64({4, 4, 4})).item<int64_t>(), 0);
}

TEST(OpsReduce, ArgmaxOfTransposed) {
  Tensor x = F32({1, 5, 5, 7, 7, 2}, {2, 3});
  EXPECT_EQ(xlite::argmax(x.t(), 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(OpsReduce, ArgmaxBadDimOrEmptyThrows) {
  Tensor x = F32({1, 2});
  EXPECT_THROW(xlite::argmax(x, 1), xlite::Error);
  Tensor e = xlite::zeros({0});
  EXPECT_THROW({ xlite::argmax(e, 0).to_vector<int64_t>(); }, xlite::Error);
  EXPECT_THROW({ xlite::argmin(e).item<int64_t>(); }, xlite::Error);
}

// ---------------------------------------------------------------- logsumexp

TEST(OpsReduce, LogsumexpValues) {
  Tensor l = xlite::logsumexp(F32({1, 2, 3}), {0});
  EXPECT_EQ(l.shape(), (Shape{}));
  EXPECT_NEAR(l.item<float>(), 3.40760596f, 1e-5);
  ExpectClose(xlite::logsumexp(M23(), {1}).to_vector<float>(), {3.40760596, 6.40760596});
  ExpectClose(xlite::logsumexp(M23(), {0}).to_vector<float>(), {4.04858735, 5.04858735, 6.04858735});
}

TEST(OpsReduce, LogsumexpAllDimsAndKeepdim) {
  Tensor l = xlite::logsumexp(M23(), {0, 1}, true);
  EXPECT_EQ(l.shape(), (Shape{1, 1}));
  ExpectClose(l.to_vector<float>(), {6.45619332});
  Tensor n = xlite::logsumexp(M23(), {-1}, true);
  EXPECT_EQ(n.shape(), (Shape{2, 1}));
}

TEST(OpsReduce, LogsumexpIsStableForLargeInputs) {
  ExpectClose(xlite::logsumexp(F32({1000, 1000}), {0}).to_vector<float>(), {1000.69315});
  ExpectClose(xlite::logsumexp(F32({-1000, -1000}), {0}).to_vector<float>(), {-999.306853});
}

TEST(OpsReduce, LogsumexpOfAllMinusInf) {
  ExpectClose(xlite::logsumexp(F32({-kInf, -kInf}), {0}).to_vector<float>(), {-INFINITY});
}

// ---------------------------------------------------------------- var

TEST(OpsReduce, VarCorrection) {
  Tensor x = F32({1, 2, 3, 4});
  Tensor v1 = xlite::var(x);
  EXPECT_EQ(v1.shape(), (Shape{}));
  EXPECT_NEAR(v1.item<float>(), 1.66666667f, 1e-5);
  EXPECT_NEAR(xlite::var(x, {}, 0).item<float>(), 1.25f, 1e-6);
  EXPECT_NEAR(xlite::var(x, {0}, 1).item<float>(), 1.66666667f, 1e-5);
}

TEST(OpsReduce, VarAlongDims) {
  ExpectClose(xlite::var(M23(), {1}).to_vector<float>(), {1, 1});
  ExpectClose(xlite::var(M23(), {0}, 0).to_vector<float>(), {2.25, 2.25, 2.25});
  Tensor k = xlite::var(M23(), {-1}, 1, true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  ExpectClose(k.to_vector<float>(), {1, 1});
  EXPECT_NEAR(xlite::var(M23()).item<float>(), 3.5f, 1e-5);
}

TEST(OpsReduce, VarIsNumericallyStable) {
  // Large offset: a naive E[x^2] - E[x]^2 in f32 loses everything.
  Tensor x = F32({10000.0f, 10001.0f, 10002.0f});
  EXPECT_NEAR(xlite::var(x).item<float>(), 1.0f, 1e-3);
}

TEST(OpsReduce, VarF64) {
  Tensor v = xlite::var(F64({1, 2, 3, 4}), {}, 0);
  EXPECT_EQ(v.dtype(), DType::f64);
  EXPECT_DOUBLE_EQ(v.item<double>(), 1.25);
}

TEST(OpsReduce, VarOfSingleElementWithCorrectionIsNaN) {
  EXPECT_TRUE(std::isnan(xlite::var(F32({3})).item<float>()));
  EXPECT_FLOAT_EQ(xlite::var(F32({3}), {}, 0).item<float>(), 0.0f);
}

TEST(OpsReduce, VarOfIntThrows) {
  Tensor x = I32({1, 2, 3});
  EXPECT_THROW({ xlite::var(x).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- softmax / log_softmax

TEST(OpsReduce, SoftmaxValues) {
  Tensor s = xlite::softmax(F32({1, 2, 3}), 0);
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_EQ(s.dtype(), DType::f32);
  ExpectClose(s.to_vector<float>(), {0.0900305732, 0.244728471, 0.665240956});
}

TEST(OpsReduce, SoftmaxAlongEachDim) {
  ExpectClose(xlite::softmax(M23(), 1).to_vector<float>(),
              {0.0900305732, 0.244728471, 0.665240956, 0.0900305732, 0.244728471, 0.665240956});
  ExpectClose(xlite::softmax(M23(), 0).to_vector<float>(),
              {0.0474258732, 0.0474258732, 0.0474258732, 0.952574127, 0.952574127, 0.952574127});
  ExpectClose(M23().softmax(-1).to_vector<float>(),
              {0.0900305732, 0.244728471, 0.665240956, 0.0900305732, 0.244728471, 0.665240956});
}

TEST(OpsReduce, SoftmaxIsStableForLargeInputs) {
  ExpectClose(xlite::softmax(F32({1000, 1001}), 0).to_vector<float>(), {0.268941421, 0.731058579});
  ExpectClose(xlite::softmax(F32({-1000, -1001}), 0).to_vector<float>(), {0.731058579, 0.268941421});
}

TEST(OpsReduce, SoftmaxWithMinusInfGivesZero) {
  ExpectClose(xlite::softmax(F32({0, -kInf, 0}), 0).to_vector<float>(), {0.5, 0, 0.5});
}

TEST(OpsReduce, SoftmaxRowsSumToOne) {
  Tensor s = xlite::softmax(A234(), 1);
  EXPECT_EQ(s.shape(), (Shape{2, 3, 4}));
  ExpectClose(xlite::sum(s, {1}).to_vector<float>(), {1, 1, 1, 1, 1, 1, 1, 1});
}

TEST(OpsReduce, SoftmaxOfTransposed) {
  ExpectClose(xlite::softmax(M23().t(), 0).to_vector<float>(),
              {0.0900305732, 0.0900305732, 0.244728471, 0.244728471, 0.665240956, 0.665240956});
}

TEST(OpsReduce, SoftmaxHalfKeepsDtype) {
  Tensor s = xlite::softmax(F32({1, 2, 3}).to(DType::f16), 0);
  EXPECT_EQ(s.dtype(), DType::f16);
  ExpectClose(s.to_vector<float>(), {0.0900268555, 0.244750977, 0.665039062}, 2e-3, 0);
}

TEST(OpsReduce, SoftmaxBadDimThrows) {
  Tensor x = M23();
  std::string msg = ErrorMessage([&] { xlite::softmax(x, 2).to_vector<float>(); });
  EXPECT_NE(msg.find("[softmax]"), std::string::npos) << msg;
}

TEST(OpsReduce, LogSoftmaxValues) {
  Tensor l = xlite::log_softmax(F32({1, 2, 3}), 0);
  EXPECT_EQ(l.dtype(), DType::f32);
  ExpectClose(l.to_vector<float>(), {-2.40760596, -1.40760596, -0.407605964});
  ExpectClose(M23().log_softmax(1).to_vector<float>(),
              {-2.40760596, -1.40760596, -0.407605964, -2.40760596, -1.40760596, -0.407605964});
}

TEST(OpsReduce, LogSoftmaxIsStable) {
  // log(softmax) computed naively would give log(0) = -inf for the second entry.
  ExpectClose(xlite::log_softmax(F32({1000, 0}), 0).to_vector<float>(), {0, -1000});
}

TEST(OpsReduce, LogSoftmaxBadDimThrows) {
  Tensor x = F32({1, 2});
  EXPECT_THROW({ xlite::log_softmax(x, -2).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- eager mode

TEST(OpsReduce, EagerModeReductions) {
  xlite::EagerModeGuard guard(true);
  Tensor x = M23();
  Tensor s = xlite::sum(x, {1});
  EXPECT_FALSE(s.is_pending());
  ExpectClose(s.to_vector<float>(), {6, 15});
  EXPECT_EQ(xlite::argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  ExpectClose(xlite::softmax(F32({1, 2, 3}), 0).to_vector<float>(), {0.0900305732, 0.244728471, 0.665240956});
  EXPECT_EQ(xlite::sum(I32({1, 2})).dtype(), DType::i64);
  EXPECT_THROW(xlite::mean(I32({1, 2})), xlite::Error);
}
