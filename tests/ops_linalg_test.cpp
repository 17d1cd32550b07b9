// Unit tests for matmul and linear in xlite/ops.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

namespace {

// Using-declarations rather than `using namespace xlite_test;`: this file keeps its own ExpectClose.
using xlite::DType;
using xlite::Shape;
using xlite::Tensor;
using xlite_test::ErrorMessage;
using xlite_test::F32;
using xlite_test::F64;
using xlite_test::I32;
using xlite_test::I64;
using xlite_test::Iota;

// Unlike xlite_test::ExpectClose: default atol 1e-5 (not 1e-6) and a plain EXPECT_NEAR per element,
// with no NaN/infinity cases.
void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, double rtol = 1e-5,
                 double atol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
}

Tensor A23() { return F32({1, 2, 3, 4, 5, 6}, {2, 3}); }
Tensor B32() { return F32({7, 8, 9, 10, 11, 12}, {3, 2}); }

}  // namespace

// ---------------------------------------------------------------- matmul

TEST(OpsLinalg, Matmul2D) {
  Tensor y = xlite::matmul(A23(), B32());
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {58, 64, 139, 154});
}

TEST(OpsLinalg, MatmulMethod) {
  ExpectClose(A23().matmul(B32()).to_vector<float>(), {58, 64, 139, 154});
  ExpectClose(B32().matmul(A23()).to_vector<float>(), {39, 54, 69, 49, 68, 87, 59, 82, 105});
}

TEST(OpsLinalg, MatmulVectorVectorIsZeroDim) {
  Tensor y = xlite::matmul(F32({1, 2, 3}), F32({4, 5, 6}));
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(y.item<float>(), 32.0f);
}

TEST(OpsLinalg, MatmulVectorMatrix) {
  Tensor y = xlite::matmul(F32({1, 2}), A23());
  EXPECT_EQ(y.shape(), (Shape{3}));
  ExpectClose(y.to_vector<float>(), {9, 12, 15});
}

TEST(OpsLinalg, MatmulMatrixVector) {
  Tensor y = xlite::matmul(A23(), F32({1, 0, -1}));
  EXPECT_EQ(y.shape(), (Shape{2}));
  ExpectClose(y.to_vector<float>(), {-2, -2});
}

TEST(OpsLinalg, MatmulBatched) {
  Tensor y = xlite::matmul(Iota({2, 2, 3}), Iota({2, 3, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  ExpectClose(y.to_vector<float>(), {10, 13, 28, 40, 172, 193, 244, 274});
}

TEST(OpsLinalg, MatmulBroadcastsBatchDims) {
  Tensor y = xlite::matmul(Iota({2, 1, 2, 3}), Iota({3, 3, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  ExpectClose(y.to_vector<float>(), {10, 13, 28, 40, 28,  31,  100, 112, 46,  49,  172, 184,
                                     46, 67, 64, 94, 172, 193, 244, 274, 298, 319, 424, 454});
}

TEST(OpsLinalg, MatmulBatchTimesMatrix) {
  Tensor y = xlite::matmul(Iota({2, 2, 3}), B32());
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  // batch 0 = [[0,1,2],[3,4,5]] @ B, batch 1 = [[6,7,8],[9,10,11]] @ B
  ExpectClose(y.to_vector<float>(), {31, 34, 112, 124, 193, 214, 274, 304});
}

TEST(OpsLinalg, MatmulBatchWithVector) {
  Tensor y = xlite::matmul(Iota({2, 2, 3}), F32({1, 2, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  ExpectClose(y.to_vector<float>(), {8, 26, 44, 62});
  Tensor z = xlite::matmul(F32({1, 2}), Iota({2, 2, 3}));
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  ExpectClose(z.to_vector<float>(), {6, 9, 12, 24, 27, 30});
}

TEST(OpsLinalg, MatmulOfTransposedOperands) {
  Tensor y = xlite::matmul(Iota({2, 3}).t(), F32({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  ExpectClose(y.to_vector<float>(), {9, 12, 13, 18, 17, 24});
  // A @ A^T with the transpose fed directly
  ExpectClose(xlite::matmul(A23(), A23().t()).to_vector<float>(), {14, 32, 32, 77});
}

TEST(OpsLinalg, MatmulOfStridedSlice) {
  // Columns 0 and 2 of A23: [[1,3],[4,6]]
  Tensor a = xlite::slice(A23(), 1, 0, 3, 2);
  ExpectClose(xlite::matmul(a, F32({1, 1})).to_vector<float>(), {4, 10});
}

TEST(OpsLinalg, MatmulEmptyInnerDimGivesZeros) {
  Tensor y = xlite::matmul(xlite::zeros({2, 0}), xlite::zeros({0, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ExpectClose(y.to_vector<float>(), {0, 0, 0, 0, 0, 0});
}

TEST(OpsLinalg, MatmulEmptyOuterDim) {
  Tensor y = xlite::matmul(xlite::zeros({0, 4}), xlite::ones({4, 3}));
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  EXPECT_TRUE(y.to_vector<float>().empty());
}

TEST(OpsLinalg, MatmulIntegers) {
  Tensor y = xlite::matmul(I32({1, 2, 3, 4}, {2, 2}), I32({5, 6, 7, 8}, {2, 2}));
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{19, 22, 43, 50}));
  Tensor z = xlite::matmul(I64({3000000000LL, 1}, {1, 2}), I64({2, 5}, {2, 1}));
  EXPECT_EQ(z.dtype(), DType::i64);
  EXPECT_EQ(z.to_vector<int64_t>(), (std::vector<int64_t>{6000000005LL}));
}

TEST(OpsLinalg, MatmulF64Precision) {
  Tensor y = xlite::matmul(F64({1.0, 1e-10}, {1, 2}), F64({1.0, 1.0}, {2, 1}));
  EXPECT_EQ(y.dtype(), DType::f64);
  EXPECT_NEAR(y.to_vector<double>()[0], 1.0 + 1e-10, 1e-15);
}

TEST(OpsLinalg, MatmulHalfKeepsDtype) {
  Tensor y = xlite::matmul(A23().to(DType::f16), B32().to(DType::f16));
  EXPECT_EQ(y.dtype(), DType::f16);
  ExpectClose(y.to_vector<float>(), {58, 64, 139, 154}, 0, 0);
  Tensor b = xlite::matmul(A23().to(DType::bf16), B32().to(DType::bf16));
  EXPECT_EQ(b.dtype(), DType::bf16);
  ExpectClose(b.to_vector<float>(), {58, 64, 139, 154}, 0, 0);  // all exactly representable in bf16
}

TEST(OpsLinalg, MatmulLargerAgainstReference) {
  const int m = 17, k = 33, n = 9;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  std::vector<double> want(m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) want[i * n + j] += double(a[i * k + p]) * double(b[p * n + j]);
  Tensor y = xlite::matmul(xlite::tensor(a, Shape{m, k}), xlite::tensor(b, Shape{k, n}));
  EXPECT_EQ(y.shape(), (Shape{m, n}));
  ExpectClose(y.to_vector<float>(), want, 1e-5, 1e-5);
}

TEST(OpsLinalg, MatmulInnerDimMismatchThrowsNamingOp) {
  Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = xlite::ones({4, 5});
  std::string msg = ErrorMessage([&] { xlite::matmul(a, b).to_vector<float>(); });
  EXPECT_NE(msg.find("[matmul]"), std::string::npos) << msg;
  Tensor v = F32({1, 2});
  EXPECT_THROW(xlite::matmul(v, F32({1, 2, 3})), xlite::Error);
}

TEST(OpsLinalg, MatmulBatchMismatchThrows) {
  Tensor a = xlite::ones({2, 2, 3});
  Tensor b = xlite::ones({3, 3, 2});
  EXPECT_THROW({ xlite::matmul(a, b).to_vector<float>(); }, xlite::Error);
}

TEST(OpsLinalg, MatmulZeroDimThrows) {
  Tensor s = xlite::tensor(2.0f);
  Tensor m = xlite::ones({2, 2});
  EXPECT_THROW({ xlite::matmul(s, m).to_vector<float>(); }, xlite::Error);
  EXPECT_THROW({ xlite::matmul(m, s).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- linear

TEST(OpsLinalg, LinearWithBias) {
  Tensor x = A23();
  Tensor w = F32({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3});
  Tensor b = F32({0.5, -0.5, 0, 1});
  Tensor y = xlite::linear(x, w, b);
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  ExpectClose(y.to_vector<float>(), {1.5, 1.5, 3, 7, 4.5, 4.5, 6, 16});
}

TEST(OpsLinalg, LinearWithoutBias) {
  Tensor w = F32({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3});
  ExpectClose(xlite::linear(A23(), w).to_vector<float>(), {1, 2, 3, 6, 4, 5, 6, 15});
  ExpectClose(xlite::linear(A23(), w, std::nullopt).to_vector<float>(), {1, 2, 3, 6, 4, 5, 6, 15});
}

TEST(OpsLinalg, LinearOneDimInput) {
  Tensor w = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = xlite::linear(F32({1, 1, 1}), w, F32({10, 20}));
  EXPECT_EQ(y.shape(), (Shape{2}));
  ExpectClose(y.to_vector<float>(), {16, 35});
}

TEST(OpsLinalg, LinearBatchedInput) {
  Tensor w = F32({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3});
  Tensor b = F32({0.5, -0.5, 0, 1});
  Tensor y = xlite::linear(Iota({2, 2, 3}), w, b);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 4}));
  ExpectClose(y.to_vector<float>(), {0.5, 0.5, 2, 4, 3.5, 3.5, 5, 13, 6.5, 6.5, 8, 22, 9.5, 9.5, 11, 31});
}

TEST(OpsLinalg, LinearWithTransposedWeight) {
  // w given as the transpose of a [3,2] tensor: w = [[7,9,11],[8,10,12]]
  Tensor y = xlite::linear(A23(), B32().t());
  ExpectClose(y.to_vector<float>(), {58, 64, 139, 154});
}

TEST(OpsLinalg, LinearShapeMismatchThrowsNamingOp) {
  Tensor x = A23();
  Tensor w = xlite::ones({4, 2});
  std::string msg = ErrorMessage([&] { xlite::linear(x, w).to_vector<float>(); });
  EXPECT_NE(msg.find("[linear]"), std::string::npos) << msg;
}

TEST(OpsLinalg, LinearBadBiasThrows) {
  Tensor x = A23();
  Tensor w = xlite::ones({4, 3});
  Tensor b = xlite::ones({3});
  EXPECT_THROW({ xlite::linear(x, w, b).to_vector<float>(); }, xlite::Error);
}

TEST(OpsLinalg, LinearOneDimWeightThrows) {
  Tensor x = A23();
  Tensor w = xlite::ones({3});
  EXPECT_THROW({ xlite::linear(x, w).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- eager mode

TEST(OpsLinalg, EagerModeMatmulAndLinear) {
  xlite::EagerModeGuard guard(true);
  Tensor y = xlite::matmul(A23(), B32());
  EXPECT_FALSE(y.is_pending());
  ExpectClose(y.to_vector<float>(), {58, 64, 139, 154});
  Tensor w = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectClose(xlite::linear(F32({1, 1, 1}), w, F32({10, 20})).to_vector<float>(), {16, 35});
  Tensor bad = xlite::ones({4, 5});
  Tensor a = A23();
  EXPECT_THROW(xlite::matmul(a, bad), xlite::Error);
}
