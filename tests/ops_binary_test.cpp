// Unit tests for the binary ops, where and clamp in xlite/ops.h: values, broadcasting and dtype promotion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

using namespace xlite_test;

// ---------------------------------------------------------------- add / sub / mul / div

TEST(OpsBinary, AddSameShape) {
  Tensor y = xlite::add(F32({1, 2, 3, 4}, {2, 2}), F32({10, 20, 30, 40}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {11, 22, 33, 44});
}

TEST(OpsBinary, AddBroadcastColumnAndRow) {
  Tensor col = F32({1, 2, 3}, {3, 1});
  Tensor row = F32({10, 20, 30, 40}, {1, 4});
  Tensor y = xlite::add(col, row);
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  ExpectClose(y.to_vector<float>(), {11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43});
}

TEST(OpsBinary, AddBroadcastLeadingDims) {
  Tensor y = xlite::add(F32({1, 2, 3, 4, 5, 6}, {2, 3}), F32({100, 200, 300}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ExpectClose(y.to_vector<float>(), {101, 202, 303, 104, 205, 306});
}

TEST(OpsBinary, AddBroadcastSizeOneInTheMiddle) {
  Tensor a = F32({0, 1, 2, 3, 4, 5}, {2, 1, 3});
  Tensor b = F32({10, 20, 30, 40}, {4, 1});
  Tensor y = a + b;
  EXPECT_EQ(y.shape(), (Shape{2, 4, 3}));
  std::vector<float> v = y.to_vector<float>();
  ASSERT_EQ(v.size(), 24u);
  // y[i][j][k] = a[i][0][k] + b[j][0]
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(v[i * 12 + j * 3 + k], float(i * 3 + k + 10 * (j + 1)));
}

TEST(OpsBinary, AddIncompatibleShapesThrowsNamingOp) {
  Tensor a = F32({1, 2, 3});
  Tensor b = F32({1, 2});
  std::string msg = ErrorMessage([&] { xlite::add(a, b).to_vector<float>(); });
  EXPECT_NE(msg.find("[add]"), std::string::npos) << msg;
  EXPECT_THROW(xlite::mul(F32({1, 2, 3, 4, 5, 6}, {2, 3}), F32({1, 2, 3, 4}, {2, 2})), xlite::Error);
}

TEST(OpsBinary, AddScalarBothSides) {
  Tensor x = F32({1, 2});
  ExpectClose(xlite::add(x, 0.5).to_vector<float>(), {1.5, 2.5});
  ExpectClose(xlite::add(3, x).to_vector<float>(), {4, 5});
  ExpectClose((x + 1).to_vector<float>(), {2, 3});
  ExpectClose((1.0 + x).to_vector<float>(), {2, 3});
}

TEST(OpsBinary, SubValuesAndScalars) {
  Tensor a = F32({5, 7, 9});
  Tensor b = F32({1, 2, 3});
  ExpectClose(xlite::sub(a, b).to_vector<float>(), {4, 5, 6});
  ExpectClose((a - b).to_vector<float>(), {4, 5, 6});
  ExpectClose(xlite::sub(a, 1).to_vector<float>(), {4, 6, 8});
  ExpectClose(xlite::sub(10, b).to_vector<float>(), {9, 8, 7});
  ExpectClose((10.0 - b).to_vector<float>(), {9, 8, 7});
}

TEST(OpsBinary, MulValuesAndScalars) {
  Tensor a = F32({1.5, -2, 3});
  ExpectClose(xlite::mul(a, F32({2, 3, -1})).to_vector<float>(), {3, -6, -3});
  ExpectClose((a * 2).to_vector<float>(), {3, -4, 6});
  ExpectClose((0.5 * a).to_vector<float>(), {0.75, -1, 1.5});
  ExpectClose(xlite::mul(-1, a).to_vector<float>(), {-1.5, 2, -3});
}

TEST(OpsBinary, DivFloat) {
  Tensor y = xlite::div(F32({1, 3, -9}), F32({4, 2, 3}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.25, 1.5, -3});
  ExpectClose((F32({1, 2}) / 4).to_vector<float>(), {0.25, 0.5});
  ExpectClose(xlite::div(1, F32({2, 4})).to_vector<float>(), {0.5, 0.25});
  ExpectClose((1.0 / F32({8})).to_vector<float>(), {0.125});
}

TEST(OpsBinary, DivByZeroGivesInfAndNaN) {
  ExpectClose(xlite::div(F32({1, -1, 0}), 0.0).to_vector<float>(), {INFINITY, -INFINITY, NAN});
}

TEST(OpsBinary, DivOfIntsIsTrueDivisionInF32) {
  Tensor y = xlite::div(I32({7, -7, 6}), I32({2, 2, 3}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {3.5, -3.5, 2});
}

TEST(OpsBinary, DivOfI64ByIntScalarGivesF32) {
  Tensor y = I64({1, 3}) / 2;
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.5, 1.5});
  Tensor z = xlite::div(3, I32({2}));
  EXPECT_EQ(z.dtype(), DType::f32);
  ExpectClose(z.to_vector<float>(), {1.5});
}

TEST(OpsBinary, DivOfBoolsGivesF32) {
  Tensor y = xlite::div(Bool({true, false}), Bool({true, true}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1, 0});
}

TEST(OpsBinary, DivF64StaysF64) {
  Tensor y = F64({1.0}) / 3;
  EXPECT_EQ(y.dtype(), DType::f64);
  EXPECT_NEAR(y.to_vector<double>()[0], 1.0 / 3.0, 1e-16);
}

// ---------------------------------------------------------------- dtype promotion

TEST(OpsBinary, PromoteIntAndFloatTensors) {
  Tensor y = xlite::add(I32({1, 2}), F32({0.5, 0.25}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1.5, 2.25});
}

TEST(OpsBinary, PromoteIntWidths) {
  Tensor y = xlite::add(I32({1, 2}), I64({10, 20}));
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{11, 22}));
  Tensor z = xlite::add(U8({200, 250}), I32({100, -300}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{300, -50}));
}

TEST(OpsBinary, PromoteBoolWithU8) {
  Tensor y = xlite::add(Bool({true, false}), U8({3, 4}));
  EXPECT_EQ(y.dtype(), DType::u8);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{4, 4}));
}

TEST(OpsBinary, PromoteFloatWidths) {
  Tensor f16 = F32({1.5}).to(DType::f16);
  Tensor bf16 = F32({2.5}).to(DType::bf16);
  EXPECT_EQ(xlite::add(F32({1}), F64({2})).dtype(), DType::f64);
  EXPECT_EQ(xlite::add(f16, bf16).dtype(), DType::f32);
  EXPECT_EQ(xlite::add(f16, F32({1})).dtype(), DType::f32);
  EXPECT_EQ(xlite::add(bf16, F64({1})).dtype(), DType::f64);
  ExpectClose(xlite::add(f16, bf16).to_vector<float>(), {4.0});
}

TEST(OpsBinary, PromoteIntTensorWithHalfTensorGivesHalf) {
  Tensor y = xlite::mul(I64({3}), F32({0.5}).to(DType::f16));
  EXPECT_EQ(y.dtype(), DType::f16);
  ExpectClose(y.to_vector<float>(), {1.5});
  EXPECT_EQ(xlite::add(U8({1}), F32({1}).to(DType::bf16)).dtype(), DType::bf16);
}

TEST(OpsBinary, ScalarDoesNotWidenWithinCategory) {
  EXPECT_EQ((F32({1}).to(DType::f16) * 2.5).dtype(), DType::f16);
  EXPECT_EQ((F32({1}).to(DType::bf16) + 1).dtype(), DType::bf16);
  EXPECT_EQ((F32({1}) + 1.0).dtype(), DType::f32);
  EXPECT_EQ((I32({1}) + 1).dtype(), DType::i32);
  EXPECT_EQ((I32({1}) + int64_t{5}).dtype(), DType::i32);
  EXPECT_EQ((U8({1}) + 1).dtype(), DType::u8);
  EXPECT_EQ((I64({1}) + true).dtype(), DType::i64);
  EXPECT_EQ((F32({1}).to(DType::f16) + 1).dtype(), DType::f16);
}

TEST(OpsBinary, ScalarOfHigherCategoryPromotes) {
  Tensor y = I32({1, 2}) * 2.5;
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {2.5, 5});
  Tensor b = Bool({true, false}) + 1;
  EXPECT_EQ(b.dtype(), DType::i64);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  Tensor c = xlite::mul(1.5, Bool({true, false}));
  EXPECT_EQ(c.dtype(), DType::f32);
  ExpectClose(c.to_vector<float>(), {1.5, 0});
}

TEST(OpsBinary, F32PlusDoubleScalarComputesInF32) {
  // 1 + 1e-8 is 1 in f32.
  Tensor y = F32({1}) + 1e-8;
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.to_vector<float>()[0], 1.0f);
}

TEST(OpsBinary, U8ArithmeticWrapsAround) {
  Tensor y = U8({250, 5}) + 10;
  EXPECT_EQ(y.dtype(), DType::u8);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{4, 15}));
}

TEST(OpsBinary, F16ArithmeticRoundsTo16Bits) {
  Tensor x = F32({1.0f, 2048.0f}).to(DType::f16);
  Tensor y = x + F32({0.0001f, 1.0f}).to(DType::f16);
  EXPECT_EQ(y.dtype(), DType::f16);
  // 1 + 1e-4 -> 1 (f16 spacing near 1 is ~1e-3); 2049 is a tie between 2048 and 2050 -> even 2048.
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.0f, 2048.0f}));
  Tensor z = F32({1.0f}).to(DType::f16) / 3;
  EXPECT_EQ(z.to_vector<float>()[0], 0.333251953125f);
}

TEST(OpsBinary, BF16ArithmeticRoundsTo16Bits) {
  Tensor x = F32({256.0f, 1.0f}).to(DType::bf16);
  Tensor y = x + 1;
  EXPECT_EQ(y.dtype(), DType::bf16);
  // bf16 spacing at 256 is 2: 257 is a tie -> 256. 1 + 1 = 2 exactly.
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{256.0f, 2.0f}));
  Tensor z = F32({1.0f}).to(DType::bf16) / 3;
  EXPECT_EQ(z.to_vector<float>()[0], 0.333984375f);
}

TEST(OpsBinary, F64KeepsPrecision) {
  Tensor y = F64({1.0}) + F64({1e-12});
  EXPECT_EQ(y.dtype(), DType::f64);
  // In f32 the sum would be exactly 1; in f64 it is 1 + 1e-12 up to double rounding (~2e-16).
  EXPECT_NEAR(y.to_vector<double>()[0] - 1.0, 1e-12, 1e-15);
}

// ---------------------------------------------------------------- pow

TEST(OpsBinary, PowTensorScalar) {
  ExpectClose(xlite::pow(F32({1, 2, 3}), 2).to_vector<float>(), {1, 4, 9});
  ExpectClose(F32({4, 9}).pow(0.5).to_vector<float>(), {2, 3});
  ExpectClose(F32({0, 2}).pow(0).to_vector<float>(), {1, 1});
  ExpectClose(F32({2, 4}).pow(-1).to_vector<float>(), {0.5, 0.25});
}

TEST(OpsBinary, PowTensorTensorBroadcast) {
  Tensor y = xlite::pow(F32({2, 3}, {2, 1}), F32({0, 1, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ExpectClose(y.to_vector<float>(), {1, 2, 4, 1, 3, 9});
}

TEST(OpsBinary, PowScalarBase) {
  ExpectClose(xlite::pow(2.0, F32({0, 1, 3, -1})).to_vector<float>(), {1, 2, 8, 0.5});
  Tensor y = xlite::pow(2.0, I32({1, 2, 3}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {2, 4, 8});
  Tensor z = xlite::pow(2, I32({1, 2, 10}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 1024}));
}

TEST(OpsBinary, PowIntStaysInt) {
  Tensor y = xlite::pow(I32({2, 3, -2}), 3);
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{8, 27, -8}));
  Tensor z = xlite::pow(I64({3, 2}), I64({2, 10}));
  EXPECT_EQ(z.dtype(), DType::i64);
  EXPECT_EQ(z.to_vector<int64_t>(), (std::vector<int64_t>{9, 1024}));
}

TEST(OpsBinary, PowIntWithFloatExponentGivesF32) {
  Tensor y = xlite::pow(I32({2, 3}), 0.5);
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1.41421356, 1.73205081});
}

TEST(OpsBinary, PowNegativeBaseFractionalExponentIsNaN) {
  ExpectClose(xlite::pow(F32({-8}), 1.0 / 3.0).to_vector<float>(), {NAN});
  ExpectClose(xlite::pow(F32({-2}), 3).to_vector<float>(), {-8});
}

// ---------------------------------------------------------------- maximum / minimum

TEST(OpsBinary, MaximumMinimumValues) {
  Tensor a = F32({1, 5, -3});
  Tensor b = F32({2, 4, -3});
  ExpectClose(xlite::maximum(a, b).to_vector<float>(), {2, 5, -3});
  ExpectClose(xlite::minimum(a, b).to_vector<float>(), {1, 4, -3});
}

TEST(OpsBinary, MaximumMinimumBroadcastAndScalar) {
  Tensor a = F32({1, 5, 3, 0}, {2, 2});
  ExpectClose(xlite::maximum(a, F32({2, 2})).to_vector<float>(), {2, 5, 3, 2});
  ExpectClose(xlite::minimum(a, 2).to_vector<float>(), {1, 2, 2, 0});
  ExpectClose(xlite::maximum(2.5, a).to_vector<float>(), {2.5, 5, 3, 2.5});
}

TEST(OpsBinary, MaximumPromotesAndKeepsInts) {
  Tensor y = xlite::maximum(I32({1, 7}), F32({1.5, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1.5, 7});
  Tensor z = xlite::minimum(I32({1, 7}), I32({3, -2}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{1, -2}));
}

TEST(OpsBinary, MaximumMinimumPropagateNaN) {
  Tensor a = F32({kNaN, 1, 2});
  Tensor b = F32({0, kNaN, 1});
  ExpectClose(xlite::maximum(a, b).to_vector<float>(), {NAN, NAN, 2});
  ExpectClose(xlite::minimum(a, b).to_vector<float>(), {NAN, NAN, 1});
}

// ---------------------------------------------------------------- remainder

TEST(OpsBinary, RemainderFloatTakesDivisorSign) {
  Tensor y = xlite::remainder(F32({-7.5, 7.5, -3, 3, 5.5}), F32({2, -2, 2, -2, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {0.5, -0.5, 1, -1, 1.5});
}

TEST(OpsBinary, RemainderIntTakesDivisorSign) {
  Tensor y = xlite::remainder(I32({-7, 7, -7, 7, -6}), I32({3, 3, -3, -3, 3}));
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{2, 1, -1, -2, 0}));
}

TEST(OpsBinary, RemainderScalarOverloads) {
  Tensor y = xlite::remainder(I64({-5, 5, 9}), 4);
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{3, 1, 1}));
  Tensor z = xlite::remainder(5, I32({3, -3}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{2, -1}));
  ExpectClose(xlite::remainder(F32({-1, 4.25}), 1.5).to_vector<float>(), {0.5, 1.25});
}

// ---------------------------------------------------------------- comparisons

TEST(OpsBinary, ComparisonsGiveBool) {
  Tensor a = F32({1, 2, 3});
  Tensor b = F32({2, 2, 2});
  Tensor e = xlite::eq(a, b);
  EXPECT_EQ(e.dtype(), DType::bool_);
  EXPECT_EQ(e.to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(xlite::ne(a, b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(xlite::lt(a, b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(xlite::le(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(xlite::gt(a, b).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(xlite::ge(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(OpsBinary, ComparisonOperators) {
  Tensor a = I32({1, 2, 3});
  EXPECT_EQ((a == 2).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((a != 2).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((a < 2).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a <= 2).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ((a > 2).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ((a >= 2).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ((a == I32({3, 2, 1})).to_vector<bool>(), (std::vector<bool>{false, true, false}));
}

TEST(OpsBinary, ComparisonScalarOnTheLeft) {
  Tensor a = F32({1, 2, 3});
  EXPECT_EQ(xlite::lt(2, a).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(xlite::ge(2, a).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(xlite::eq(1.0, a).to_vector<bool>(), (std::vector<bool>{true, false, false}));
}

TEST(OpsBinary, ComparisonPromotesMixedDtypes) {
  // 2.5 must not be truncated to 2 when compared with an int tensor.
  EXPECT_EQ((I32({2, 3}) < 2.5).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(xlite::eq(I32({1, 2}), F32({1.0, 2.5})).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(OpsBinary, ComparisonBroadcasts) {
  Tensor y = xlite::gt(F32({1, 2, 3}, {3, 1}), F32({2, 0}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{false, true, false, true, true, true}));
}

TEST(OpsBinary, ComparisonWithNaN) {
  Tensor a = F32({kNaN, 1});
  EXPECT_EQ(xlite::eq(a, a).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(xlite::ne(a, a).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(xlite::lt(a, 5).to_vector<bool>(), (std::vector<bool>{false, true}));
}

// ---------------------------------------------------------------- logical

TEST(OpsBinary, LogicalOpsOnBool) {
  Tensor a = Bool({true, true, false, false});
  Tensor b = Bool({true, false, true, false});
  Tensor y = xlite::logical_and(a, b);
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(xlite::logical_or(a, b).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(xlite::logical_xor(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
}

TEST(OpsBinary, LogicalOperators) {
  Tensor a = Bool({true, true, false, false});
  Tensor b = Bool({true, false, true, false});
  EXPECT_EQ((a & b).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ((a | b).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ((a ^ b).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
}

TEST(OpsBinary, LogicalOpsOnNumbersUseTruthiness) {
  Tensor a = F32({0, 1.5, -2, 0});
  Tensor b = I32({1, 0, 3, 0});
  Tensor y = xlite::logical_and(a, b);
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(xlite::logical_or(a, b).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(xlite::logical_xor(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  // 0.5 is truthy (must not be truncated to 0).
  EXPECT_EQ(xlite::logical_and(F32({0.5}), Bool({true})).to_vector<bool>(), (std::vector<bool>{true}));
}

TEST(OpsBinary, LogicalOpsWithScalars) {
  Tensor a = Bool({true, false});
  EXPECT_EQ(xlite::logical_or(a, true).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(xlite::logical_and(a, 0).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(xlite::logical_xor(true, a).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(OpsBinary, LogicalOpsBroadcast) {
  Tensor y = xlite::logical_and(Bool({true, false}, {2, 1}), Bool({true, false, true}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{true, false, true, false, false, false}));
}

// ---------------------------------------------------------------- where / clamp

TEST(OpsBinary, WhereBasic) {
  Tensor c = Bool({true, false, true});
  Tensor y = xlite::where(c, F32({1, 2, 3}), F32({10, 20, 30}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1, 20, 3});
}

TEST(OpsBinary, WhereBroadcastsAllThree) {
  Tensor c = Bool({true, false}, {2, 1});
  Tensor a = F32({1, 2, 3});
  Tensor b = F32({-1});
  Tensor y = xlite::where(c, a, b);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  ExpectClose(y.to_vector<float>(), {1, 2, 3, -1, -1, -1});
}

TEST(OpsBinary, WhereScalarOverloads) {
  Tensor c = Bool({true, false});
  Tensor x = F32({5, 6});
  ExpectClose(xlite::where(c, x, 0.5).to_vector<float>(), {5, 0.5});
  ExpectClose(xlite::where(c, -1, x).to_vector<float>(), {-1, 6});
  Tensor f = xlite::where(c, 1.0, 0.0);
  EXPECT_EQ(f.dtype(), DType::f32);
  ExpectClose(f.to_vector<float>(), {1, 0});
  Tensor i = xlite::where(c, 1, 0);
  EXPECT_EQ(i.dtype(), DType::i64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(OpsBinary, WherePromotesDtypes) {
  Tensor c = Bool({true, false});
  Tensor y = xlite::where(c, I32({1, 2}), F32({0.5, 0.25}));
  EXPECT_EQ(y.dtype(), DType::f32);
  ExpectClose(y.to_vector<float>(), {1, 0.25});
  EXPECT_EQ(xlite::where(c, F32({1, 2}).to(DType::f16), 2.5).dtype(), DType::f16);
  EXPECT_EQ(xlite::where(c, I32({1, 2}), 7).dtype(), DType::i32);
}

TEST(OpsBinary, WhereNonBoolConditionThrows) {
  Tensor c = F32({1, 0});
  Tensor a = F32({1, 2});
  EXPECT_THROW({ xlite::where(c, a, a).to_vector<float>(); }, xlite::Error);
}

TEST(OpsBinary, WhereShapeMismatchThrows) {
  Tensor c = Bool({true, false, true});
  Tensor a = F32({1, 2});
  std::string msg = ErrorMessage([&] { xlite::where(c, a, a).to_vector<float>(); });
  EXPECT_NE(msg.find("[where]"), std::string::npos) << msg;
}

TEST(OpsBinary, ClampScalarBounds) {
  Tensor x = F32({-2, 0.5, 3});
  ExpectClose(xlite::clamp(x, 0.0, 1.0).to_vector<float>(), {0, 0.5, 1});
  ExpectClose(xlite::clamp(x, 0.0, std::nullopt).to_vector<float>(), {0, 0.5, 3});
  ExpectClose(xlite::clamp(x, std::nullopt, 1).to_vector<float>(), {-2, 0.5, 1});
}

TEST(OpsBinary, ClampIntKeepsDtype) {
  Tensor y = xlite::clamp(I32({-5, 3, 10}), 0, 5);
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 5}));
}

TEST(OpsBinary, ClampPropagatesNaN) {
  ExpectClose(xlite::clamp(F32({kNaN, 5}), 0.0, 1.0).to_vector<float>(), {NAN, 1});
}

TEST(OpsBinary, ClampWithoutBoundsThrows) {
  Tensor x = F32({1});
  EXPECT_THROW({ xlite::clamp(x, std::nullopt, std::nullopt).to_vector<float>(); }, xlite::Error);
}

TEST(OpsBinary, ClampTensorBoundsBroadcast) {
  Tensor x = F32({-1, 5, 2, 8}, {2, 2});
  Tensor lo = F32({0, 3});
  Tensor hi = F32({4, 6, 1, 7}, {2, 2});
  ExpectClose(xlite::clamp(x, lo, hi).to_vector<float>(), {0, 5, 1, 7});
}

// ---------------------------------------------------------------- layouts and special shapes

TEST(OpsBinary, OnTransposedInput) {
  Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = xlite::add(a.t(), F32({10, 20}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  ExpectClose(y.to_vector<float>(), {11, 24, 12, 25, 13, 26});
}

TEST(OpsBinary, OnStridedSlices) {
  Tensor a = F32({0, 1, 2, 3, 4, 5, 6, 7});
  Tensor even = xlite::slice(a, 0, 0, 8, 2);
  Tensor odd = xlite::slice(a, 0, 1, 8, 2);
  ExpectClose(xlite::mul(even, odd).to_vector<float>(), {0, 6, 20, 42});
}

TEST(OpsBinary, BothOperandsPermuted) {
  Tensor a = F32({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  Tensor p = xlite::permute(a, {2, 1, 0});  // [3,2,1]
  Tensor y = xlite::sub(p, xlite::transpose(a, 0, 2));
  EXPECT_EQ(y.shape(), (Shape{3, 2, 1}));
  ExpectClose(y.to_vector<float>(), {0, 0, 0, 0, 0, 0});
  ExpectClose(p.to_vector<float>(), {1, 4, 2, 5, 3, 6});
}

TEST(OpsBinary, EmptyTensors) {
  Tensor e = xlite::zeros({0, 3});
  Tensor y = xlite::add(e, F32({1, 2, 3}));
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  EXPECT_TRUE(y.to_vector<float>().empty());
  Tensor z = xlite::mul(xlite::zeros({0}), F32({5}));
  EXPECT_EQ(z.shape(), (Shape{0}));
  Tensor c = xlite::lt(xlite::zeros({2, 0}), 1);
  EXPECT_EQ(c.shape(), (Shape{2, 0}));
  EXPECT_EQ(c.dtype(), DType::bool_);
}

TEST(OpsBinary, EmptyDoesNotBroadcastWithTwo) {
  Tensor e = xlite::zeros({0});
  Tensor two = F32({1, 2});
  EXPECT_THROW({ xlite::add(e, two).to_vector<float>(); }, xlite::Error);
}

TEST(OpsBinary, ZeroDimOperands) {
  Tensor s = xlite::tensor(2.0f);
  Tensor y = s * F32({1, 2, 3});
  EXPECT_EQ(y.shape(), (Shape{3}));
  ExpectClose(y.to_vector<float>(), {2, 4, 6});
  Tensor z = xlite::add(s, xlite::tensor(0.5f));
  EXPECT_EQ(z.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(z.item<float>(), 2.5f);
}

TEST(OpsBinary, UndefinedOperandThrows) {
  Tensor undefined;
  EXPECT_THROW(xlite::add(undefined, F32({1})), xlite::Error);
  EXPECT_THROW(xlite::mul(F32({1}), undefined), xlite::Error);
}

TEST(OpsBinary, EagerModeValues) {
  xlite::EagerModeGuard guard(true);
  Tensor a = F32({1, 2, 3});
  Tensor b = F32({4, 5, 6}, {3, 1});
  Tensor y = a * b;
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  ExpectClose(y.to_vector<float>(), {4, 8, 12, 5, 10, 15, 6, 12, 18});
  Tensor d = xlite::div(I32({1}), I32({4}));
  EXPECT_EQ(d.dtype(), DType::f32);
  ExpectClose(d.to_vector<float>(), {0.25});
  EXPECT_EQ(xlite::remainder(I32({-7}), 3).to_vector<int32_t>(), (std::vector<int32_t>{2}));
}

TEST(OpsBinary, EagerModeShapeErrorThrows) {
  xlite::EagerModeGuard guard(true);
  Tensor a = F32({1, 2, 3});
  Tensor b = F32({1, 2});
  std::string msg = ErrorMessage([&] { xlite::sub(a, b); });
  EXPECT_NE(msg.find("[sub]"), std::string::npos) << msg;
}

TEST(OpsBinary, LongLazyChain) {
  Tensor x = F32({1, 2, 3});
  Tensor y = x;
  for (int i = 0; i < 50; ++i) y = y * 2 - x;  // y_{n+1} = 2 y_n - x keeps y == x
  ExpectClose(y.to_vector<float>(), {1, 2, 3});
}
