// Unit tests for the shape ops in xlite/ops.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

using namespace xlite_test;

// ---------------------------------------------------------------- reshape / view / flatten

TEST(OpsShape, ReshapeKeepsRowMajorOrder) {
  Tensor y = xlite::reshape(Iota({2, 3}), {3, 2});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Iota({6}).reshape({2, 1, 3}).shape(), (Shape{2, 1, 3}));
}

TEST(OpsShape, ReshapeInfersMinusOne) {
  EXPECT_EQ(xlite::reshape(Iota({2, 3, 4}), {-1, 4}).shape(), (Shape{6, 4}));
  EXPECT_EQ(xlite::reshape(Iota({2, 3, 4}), {2, -1}).shape(), (Shape{2, 12}));
  EXPECT_EQ(xlite::reshape(Iota({2, 3, 4}), {-1}).shape(), (Shape{24}));
}

TEST(OpsShape, ReshapeToAndFromZeroDim) {
  Tensor s = xlite::reshape(F32({7}), {});
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_FLOAT_EQ(s.item<float>(), 7.0f);
  Tensor back = xlite::reshape(xlite::tensor(3.0f), {1, 1});
  EXPECT_EQ(back.shape(), (Shape{1, 1}));
  EXPECT_EQ(Vals(back), (FV{3}));
}

TEST(OpsShape, ReshapeEmpty) {
  Tensor y = xlite::reshape(xlite::zeros({0, 3}), {3, 0});
  EXPECT_EQ(y.shape(), (Shape{3, 0}));
  EXPECT_EQ(y.numel(), 0);
}

TEST(OpsShape, ReshapeWrongNumelThrowsNamingOp) {
  Tensor x = Iota({2, 3});
  std::string msg = ErrorMessage([&] { xlite::reshape(x, {4, 2}).to_vector<float>(); });
  EXPECT_NE(msg.find("[reshape]"), std::string::npos) << msg;
  EXPECT_THROW(xlite::reshape(x, {-1, 4}), xlite::Error);
}

TEST(OpsShape, ReshapeTwoMinusOnesThrows) {
  Tensor x = Iota({2, 3});
  EXPECT_THROW(xlite::reshape(x, {-1, -1}), xlite::Error);
}

TEST(OpsShape, ReshapeOfTransposed) {
  Tensor y = xlite::reshape(Iota({2, 3}).t(), {6});
  EXPECT_EQ(Vals(y), (FV{0, 3, 1, 4, 2, 5}));
}

TEST(OpsShape, ViewBehavesLikeReshape) {
  Tensor y = xlite::view(Iota({2, 3}), {3, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Iota({4}).view({2, 2}).shape(), (Shape{2, 2}));
  Tensor x = Iota({5});
  EXPECT_THROW(xlite::view(x, {2, 2}), xlite::Error);
}

TEST(OpsShape, ViewOfPermutedIsRefusedAndReshapeCopies) {
  EXPECT_THROW(xlite::view(xlite::permute(Iota({2, 3}), {1, 0}), {6}), xlite::Error);  // as PyTorch
  Tensor y = xlite::reshape(xlite::permute(Iota({2, 3}), {1, 0}), {6});
  EXPECT_EQ(Vals(y), (FV{0, 3, 1, 4, 2, 5}));
}

TEST(OpsShape, ShapeOpsAreViewsOfTheirInput) {
  Tensor x = Iota({2, 2});
  Tensor v = x.view({4});
  Tensor r = xlite::reshape(x, {4});
  Tensor t = x.t();
  x.add_(10);
  EXPECT_EQ(Vals(x), (FV{10, 11, 12, 13}));
  EXPECT_EQ(Vals(v), (FV{10, 11, 12, 13}));
  EXPECT_EQ(Vals(r), (FV{10, 11, 12, 13}));
  EXPECT_EQ(Vals(t), (FV{10, 12, 11, 13}));
}

TEST(OpsShape, FlattenVariants) {
  EXPECT_EQ(xlite::flatten(Iota({2, 3, 4})).shape(), (Shape{24}));
  EXPECT_EQ(xlite::flatten(Iota({2, 3, 4}), 1).shape(), (Shape{2, 12}));
  EXPECT_EQ(xlite::flatten(Iota({2, 3, 4}), 0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(xlite::flatten(Iota({2, 3, 4, 5}), -3, -2).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(Iota({2, 2}).flatten().shape(), (Shape{4}));
  EXPECT_EQ(Vals(xlite::flatten(Iota({2, 3}).t())), (FV{0, 3, 1, 4, 2, 5}));
}

TEST(OpsShape, FlattenZeroDimGivesOneElement) {
  Tensor y = xlite::flatten(xlite::tensor(4.0f));
  EXPECT_EQ(y.shape(), (Shape{1}));
  EXPECT_EQ(Vals(y), (FV{4}));
}

TEST(OpsShape, FlattenBadDimsThrow) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_THROW(xlite::flatten(x, 2, 1), xlite::Error);
  EXPECT_THROW(xlite::flatten(x, 0, 3), xlite::Error);
}

// ---------------------------------------------------------------- squeeze / unsqueeze

TEST(OpsShape, SqueezeAll) {
  Tensor y = xlite::squeeze(Iota({1, 3, 1, 2}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(xlite::squeeze(Iota({1, 1})).shape(), (Shape{}));
  EXPECT_EQ(Iota({1, 4}).squeeze().shape(), (Shape{4}));
}

TEST(OpsShape, SqueezeOneDim) {
  EXPECT_EQ(xlite::squeeze(Iota({1, 3, 1, 2}), 0).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(xlite::squeeze(Iota({1, 3, 1, 2}), -2).shape(), (Shape{1, 3, 2}));
  // Squeezing a dim that is not 1 is a no-op, like PyTorch.
  EXPECT_EQ(xlite::squeeze(Iota({1, 3, 1, 2}), 1).shape(), (Shape{1, 3, 1, 2}));
  EXPECT_EQ(Iota({2, 1}).squeeze(1).shape(), (Shape{2}));
}

TEST(OpsShape, SqueezeBadDimThrows) {
  Tensor x = Iota({1, 3});
  EXPECT_THROW(xlite::squeeze(x, 2), xlite::Error);
  EXPECT_THROW(xlite::squeeze(x, -3), xlite::Error);
}

TEST(OpsShape, UnsqueezePositions) {
  Tensor x = Iota({2, 3});
  EXPECT_EQ(xlite::unsqueeze(x, 0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(xlite::unsqueeze(x, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(xlite::unsqueeze(x, 2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(xlite::unsqueeze(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(xlite::unsqueeze(x, -3).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(Vals(x.unsqueeze(1)), (FV{0, 1, 2, 3, 4, 5}));
}

TEST(OpsShape, UnsqueezeZeroDim) {
  Tensor y = xlite::unsqueeze(xlite::tensor(2.0f), 0);
  EXPECT_EQ(y.shape(), (Shape{1}));
  EXPECT_EQ(Vals(y), (FV{2}));
}

TEST(OpsShape, UnsqueezeBadDimThrows) {
  Tensor x = Iota({2, 3});
  EXPECT_THROW(xlite::unsqueeze(x, 3 + 1), xlite::Error);
  EXPECT_THROW(xlite::unsqueeze(x, -4), xlite::Error);
}

// ---------------------------------------------------------------- transpose / permute

TEST(OpsShape, TransposeValues) {
  Tensor y = xlite::transpose(Iota({2, 3}), 0, 1);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(Vals(xlite::transpose(Iota({2, 3}), -1, -2)), (FV{0, 3, 1, 4, 2, 5}));
}

TEST(OpsShape, TransposeSameDimIsIdentity) {
  Tensor y = xlite::transpose(Iota({2, 3}), 1, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3, 4, 5}));
}

TEST(OpsShape, Transpose3D) {
  Tensor y = Iota({2, 3, 4}).transpose(0, 2);
  EXPECT_EQ(y.shape(), (Shape{4, 3, 2}));
  std::vector<float> v = Vals(y);
  // y[k][j][i] = 12 i + 4 j + k
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) EXPECT_EQ(v[k * 6 + j * 2 + i], float(12 * i + 4 * j + k));
}

TEST(OpsShape, TransposeBadDimThrows) {
  Tensor x = Iota({2, 3});
  EXPECT_THROW(xlite::transpose(x, 0, 2), xlite::Error);
}

TEST(OpsShape, TOfTwoDAndOneDim) {
  EXPECT_EQ(Iota({2, 3}).t().shape(), (Shape{3, 2}));
  EXPECT_EQ(Iota({3}).t().shape(), (Shape{3}));
  Tensor x = Iota({2, 3, 4});
  EXPECT_THROW(x.t(), xlite::Error);
}

TEST(OpsShape, PermuteValues) {
  Tensor y = xlite::permute(Iota({2, 3, 4}), {2, 0, 1});
  EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
  std::vector<float> v = Vals(y);
  // y[k][i][j] = 12 i + 4 j + k
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(v[k * 6 + i * 3 + j], float(12 * i + 4 * j + k));
}

TEST(OpsShape, PermuteNegativeDims) {
  Tensor y = Iota({2, 3, 4}).permute({-1, -3, -2});
  EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
}

TEST(OpsShape, PermuteInvalidThrows) {
  Tensor x = Iota({2, 3, 4});
  EXPECT_THROW(xlite::permute(x, {0, 0, 1}), xlite::Error);
  EXPECT_THROW(xlite::permute(x, {0, 1}), xlite::Error);
  EXPECT_THROW(xlite::permute(x, {0, 1, 3}), xlite::Error);
}

TEST(OpsShape, PermuteBool) {
  Tensor y = xlite::permute(Bool({true, false, false, true, true, false}, {2, 3}), {1, 0});
  EXPECT_EQ(y.dtype(), DType::bool_);
  EXPECT_EQ(y.to_vector<bool>(), (std::vector<bool>{true, true, false, true, false, false}));
}

// ---------------------------------------------------------------- expand / broadcast_to

TEST(OpsShape, ExpandSizeOneDims) {
  Tensor y = xlite::expand(F32({1, 2, 3}, {3, 1}), {3, 4});
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(Vals(y), (FV{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
}

TEST(OpsShape, ExpandMinusOneAndNewLeadingDims) {
  Tensor y = xlite::expand(F32({1, 2}, {1, 2}), {3, -1, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(Vals(y), (FV{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(F32({5}).expand({2, 2}).shape(), (Shape{2, 2}));
}

TEST(OpsShape, ExpandZeroDim) {
  Tensor y = xlite::expand(xlite::tensor(7.0f), {2, 3});
  EXPECT_EQ(Vals(y), (FV{7, 7, 7, 7, 7, 7}));
}

TEST(OpsShape, ExpandInvalidThrows) {
  Tensor x = F32({1, 2, 3});
  EXPECT_THROW(xlite::expand(x, {2, 4}), xlite::Error);          // 3 is not 1
  EXPECT_THROW(xlite::expand(Iota({2, 3}), {3}), xlite::Error);  // fewer dims
}

TEST(OpsShape, BroadcastTo) {
  Tensor y = xlite::broadcast_to(F32({1, 2, 3}), {2, 3});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(y), (FV{1, 2, 3, 1, 2, 3}));
  Tensor x = F32({1, 2, 3});
  std::string msg = ErrorMessage([&] { xlite::broadcast_to(x, {2, 2}).to_vector<float>(); });
  EXPECT_NE(msg.find("[broadcast_to]"), std::string::npos) << msg;
}

TEST(OpsShape, ExpandedThenReducedAndCombined) {
  Tensor e = xlite::expand(F32({1, 2}, {2, 1}), {2, 3});
  EXPECT_EQ(Vals(xlite::add(e, Iota({2, 3}))), (FV{1, 2, 3, 5, 6, 7}));
}

// ---------------------------------------------------------------- slice / narrow

TEST(OpsShape, SliceBasic) {
  Tensor y = xlite::slice(Iota({6}), 0, 1, 4);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(Vals(y), (FV{1, 2, 3}));
  EXPECT_EQ(Vals(xlite::slice(Iota({6}), 0)), (FV{0, 1, 2, 3, 4, 5}));
}

TEST(OpsShape, SliceWithStep) {
  EXPECT_EQ(Vals(xlite::slice(Iota({7}), 0, 0, 7, 3)), (FV{0, 3, 6}));
  EXPECT_EQ(Vals(xlite::slice(Iota({7}), 0, 1, INT64_MAX, 2)), (FV{1, 3, 5}));
}

TEST(OpsShape, SliceNegativeBounds) {
  EXPECT_EQ(Vals(xlite::slice(Iota({6}), 0, -2)), (FV{4, 5}));
  EXPECT_EQ(Vals(xlite::slice(Iota({6}), 0, 1, -1)), (FV{1, 2, 3, 4}));
  EXPECT_EQ(Vals(xlite::slice(Iota({6}), 0, -100, 2)), (FV{0, 1}));
}

TEST(OpsShape, SliceClampsOutOfRange) {
  EXPECT_EQ(Vals(xlite::slice(Iota({4}), 0, 2, 100)), (FV{2, 3}));
  Tensor e = xlite::slice(Iota({4}), 0, 10, 20);
  EXPECT_EQ(e.shape(), (Shape{0}));
  Tensor r = xlite::slice(Iota({4}), 0, 3, 1);
  EXPECT_EQ(r.shape(), (Shape{0}));
  EXPECT_TRUE(Vals(r).empty());
}

TEST(OpsShape, SliceInnerAndNegativeDim) {
  Tensor y = xlite::slice(Iota({2, 4}), 1, 1, 3);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(y), (FV{1, 2, 5, 6}));
  EXPECT_EQ(Vals(Iota({2, 4}).slice(-1, 0, 4, 2)), (FV{0, 2, 4, 6}));
}

TEST(OpsShape, SliceBadStepOrDimThrows) {
  Tensor x = Iota({4});
  EXPECT_THROW(xlite::slice(x, 0, 0, 4, 0), xlite::Error);
  EXPECT_THROW(xlite::slice(x, 0, 0, 4, -1), xlite::Error);
  EXPECT_THROW(xlite::slice(x, 1, 0, 4), xlite::Error);
}

TEST(OpsShape, SliceOfSlice) {
  Tensor y = xlite::slice(xlite::slice(Iota({10}), 0, 1, 10, 2), 0, 1, 4, 2);  // [1,3,5,7,9] -> [3,7]
  EXPECT_EQ(Vals(y), (FV{3, 7}));
}

TEST(OpsShape, NarrowValues) {
  EXPECT_EQ(Vals(xlite::narrow(Iota({5}), 0, 1, 3)), (FV{1, 2, 3}));
  Tensor y = xlite::narrow(Iota({2, 4}), -1, 2, 2);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(y), (FV{2, 3, 6, 7}));
  EXPECT_EQ(xlite::narrow(Iota({5}), 0, 5, 0).shape(), (Shape{0}));
}

TEST(OpsShape, NarrowNegativeStartCountsFromEnd) { EXPECT_EQ(Vals(xlite::narrow(Iota({5}), 0, -2, 2)), (FV{3, 4})); }

TEST(OpsShape, NarrowOutOfRangeThrows) {
  Tensor x = Iota({5});
  std::string msg = ErrorMessage([&] { xlite::narrow(x, 0, 3, 3).to_vector<float>(); });
  EXPECT_NE(msg.find("[narrow]"), std::string::npos) << msg;
  EXPECT_THROW(xlite::narrow(x, 0, 0, -1), xlite::Error);
}

// ---------------------------------------------------------------- concat / stack

TEST(OpsShape, ConcatDim0) {
  Tensor y = xlite::concat({Iota({1, 2}), F32({7, 8, 9, 10}, {2, 2})}, 0);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 7, 8, 9, 10}));
}

TEST(OpsShape, ConcatDim1AndNegative) {
  Tensor a = Iota({2, 2});
  Tensor b = F32({7, 8}, {2, 1});
  Tensor y = xlite::concat({a, b}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 7, 2, 3, 8}));
  EXPECT_EQ(Vals(xlite::cat({a, b}, -1)), (FV{0, 1, 7, 2, 3, 8}));
}

TEST(OpsShape, CatThreeTensorsIncludingEmpty) {
  Tensor y = xlite::cat({F32({1, 2}), xlite::zeros({0}), F32({3})});
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(Vals(y), (FV{1, 2, 3}));
}

TEST(OpsShape, CatSingleTensor) {
  Tensor y = xlite::cat({Iota({2, 2})}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3}));
}

TEST(OpsShape, CatPromotesDtypes) {
  Tensor y = xlite::cat({I32({1, 2}), F32({0.5})});
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(Vals(y), (FV{1, 2, 0.5}));
  Tensor z = xlite::cat({I32({1}), I64({2})});
  EXPECT_EQ(z.dtype(), DType::i64);
  EXPECT_EQ(z.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(OpsShape, CatOfNonContiguousInputs) {
  Tensor a = Iota({2, 3});
  Tensor y = xlite::cat({a.t(), xlite::slice(Iota({3, 4}), 1, 0, 4, 3)}, 1);  // [3,2] ++ [3,2]
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(Vals(y), (FV{0, 3, 0, 3, 1, 4, 4, 7, 2, 5, 8, 11}));
}

TEST(OpsShape, ConcatShapeMismatchThrowsNamingOp) {
  Tensor a = Iota({2, 2});
  Tensor b = Iota({2, 3});
  std::string msg = ErrorMessage([&] { xlite::concat({a, b}, 0).to_vector<float>(); });
  EXPECT_TRUE(msg.find("[concat]") != std::string::npos || msg.find("[cat]") != std::string::npos) << msg;
  EXPECT_THROW(xlite::cat({a, Iota({2})}, 0), xlite::Error);  // rank mismatch
  EXPECT_THROW(xlite::cat({a, a}, 2), xlite::Error);          // bad dim
}

TEST(OpsShape, ConcatEmptyListThrows) { EXPECT_THROW(xlite::concat({}, 0), xlite::Error); }

TEST(OpsShape, StackDims) {
  Tensor a = F32({1, 2});
  Tensor b = F32({3, 4});
  Tensor s0 = xlite::stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(s0), (FV{1, 2, 3, 4}));
  Tensor s1 = xlite::stack({a, b}, 1);
  EXPECT_EQ(s1.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(s1), (FV{1, 3, 2, 4}));
  Tensor sn = xlite::stack({a, b, a}, -1);
  EXPECT_EQ(sn.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(sn), (FV{1, 3, 1, 2, 4, 2}));
}

TEST(OpsShape, StackZeroDimTensors) {
  Tensor y = xlite::stack({xlite::tensor(1.0f), xlite::tensor(2.0f)});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(Vals(y), (FV{1, 2}));
}

TEST(OpsShape, StackInvalidThrows) {
  Tensor a = F32({1, 2});
  Tensor b = F32({1, 2, 3});
  EXPECT_THROW(xlite::stack({a, b}), xlite::Error);
  EXPECT_THROW(xlite::stack({a, a}, 3), xlite::Error);
  EXPECT_THROW(xlite::stack({}, 0), xlite::Error);
}

// ---------------------------------------------------------------- split / chunk

TEST(OpsShape, SplitBySize) {
  std::vector<Tensor> parts = xlite::split(Iota({5}), 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(Vals(parts[0]), (FV{0, 1}));
  EXPECT_EQ(Vals(parts[1]), (FV{2, 3}));
  EXPECT_EQ(Vals(parts[2]), (FV{4}));
}

TEST(OpsShape, SplitBySizesAlongDim1) {
  std::vector<Tensor> parts = xlite::split(Iota({2, 5}), std::vector<int64_t>{1, 4}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(parts[1].shape(), (Shape{2, 4}));
  EXPECT_EQ(Vals(parts[0]), (FV{0, 5}));
  EXPECT_EQ(Vals(parts[1]), (FV{1, 2, 3, 4, 6, 7, 8, 9}));
}

TEST(OpsShape, SplitNegativeDim) {
  std::vector<Tensor> parts = xlite::split(Iota({2, 4}), 2, -1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Vals(parts[1]), (FV{2, 3, 6, 7}));
}

TEST(OpsShape, SplitSizesMustSumToDim) {
  Tensor x = Iota({5});
  EXPECT_THROW(xlite::split(x, std::vector<int64_t>{2, 2}), xlite::Error);
  EXPECT_THROW(xlite::split(x, 0), xlite::Error);
}

TEST(OpsShape, ChunkSizes) {
  std::vector<Tensor> c = xlite::chunk(Iota({5}), 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(Vals(c[0]), (FV{0, 1}));
  EXPECT_EQ(Vals(c[1]), (FV{2, 3}));
  EXPECT_EQ(Vals(c[2]), (FV{4}));
}

TEST(OpsShape, ChunkMayReturnFewerChunks) {
  // torch.chunk(arange(6), 4): chunk size ceil(6/4) = 2, so 3 chunks.
  std::vector<Tensor> c = xlite::chunk(Iota({6}), 4);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(Vals(c[2]), (FV{4, 5}));
}

TEST(OpsShape, ChunkAlongDim1AndInvalid) {
  std::vector<Tensor> c = xlite::chunk(Iota({2, 4}), 2, 1);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(c[1]), (FV{2, 3, 6, 7}));
  Tensor x = Iota({4});
  EXPECT_THROW(xlite::chunk(x, 0), xlite::Error);
}

// ---------------------------------------------------------------- pad

TEST(OpsShape, PadLastDim) {
  Tensor y = xlite::pad(F32({1, 2, 3}), {1, 2});
  EXPECT_EQ(y.shape(), (Shape{6}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 2, 3, 0, 0}));
  EXPECT_EQ(Vals(xlite::pad(F32({1}), {2, 0}, 9)), (FV{9, 9, 1}));
}

TEST(OpsShape, PadTwoDimsInTorchOrder) {
  // {left, right, top, bottom}: last dim (1, 0), then dim 0 (0, 2).
  Tensor y = xlite::pad(F32({1, 2, 3, 4}, {2, 2}), {1, 0, 0, 2}, -1);
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(Vals(y), (FV{-1, 1, 2, -1, 3, 4, -1, -1, -1, -1, -1, -1}));
}

TEST(OpsShape, PadOnlyLastDimOf3D) {
  Tensor y = xlite::pad(Iota({2, 1, 2}), {0, 1});
  EXPECT_EQ(y.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(Vals(y), (FV{0, 1, 0, 2, 3, 0}));
}

TEST(OpsShape, PadNegativeCrops) {
  EXPECT_EQ(Vals(xlite::pad(F32({1, 2, 3}), {-1, 0})), (FV{2, 3}));
  EXPECT_EQ(Vals(xlite::pad(F32({1, 2, 3}), {-1, 1})), (FV{2, 3, 0}));
}

TEST(OpsShape, PadIntKeepsDtype) {
  Tensor y = xlite::pad(I32({5}), {1, 1}, 7);
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{7, 5, 7}));
}

TEST(OpsShape, PadInvalidThrows) {
  Tensor x = F32({1, 2, 3});
  std::string msg = ErrorMessage([&] { xlite::pad(x, {1}).to_vector<float>(); });
  EXPECT_NE(msg.find("[pad]"), std::string::npos) << msg;
  EXPECT_THROW(xlite::pad(x, {1, 1, 1, 1}), xlite::Error);  // more pairs than dims
}

// ---------------------------------------------------------------- flip / tril / triu

TEST(OpsShape, FlipOneAndTwoDims) {
  EXPECT_EQ(Vals(xlite::flip(Iota({4}), {0})), (FV{3, 2, 1, 0}));
  EXPECT_EQ(Vals(xlite::flip(Iota({2, 3}), {0})), (FV{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(Vals(xlite::flip(Iota({2, 3}), {-1})), (FV{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Vals(xlite::flip(Iota({2, 3}), {0, 1})), (FV{5, 4, 3, 2, 1, 0}));
}

TEST(OpsShape, FlipOfTransposedAndBadDim) {
  EXPECT_EQ(Vals(xlite::flip(Iota({2, 3}).t(), {0})), (FV{2, 5, 1, 4, 0, 3}));
  Tensor x = Iota({2, 3});
  EXPECT_THROW(xlite::flip(x, {2}), xlite::Error);
}

TEST(OpsShape, TrilTriuDefault) {
  Tensor x = Iota({3, 3});
  EXPECT_EQ(Vals(xlite::tril(x)), (FV{0, 0, 0, 3, 4, 0, 6, 7, 8}));
  EXPECT_EQ(Vals(xlite::triu(x)), (FV{0, 1, 2, 0, 4, 5, 0, 0, 8}));
}

TEST(OpsShape, TrilTriuDiagonalOffsets) {
  Tensor x = xlite::ones({3, 3});
  EXPECT_EQ(Vals(xlite::tril(x, 1)), (FV{1, 1, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Vals(xlite::tril(x, -1)), (FV{0, 0, 0, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(Vals(xlite::triu(x, 1)), (FV{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(Vals(xlite::triu(x, -1)), (FV{1, 1, 1, 1, 1, 1, 0, 1, 1}));
}

TEST(OpsShape, TrilTriuNonSquareAndBatched) {
  EXPECT_EQ(Vals(xlite::triu(xlite::ones({2, 4}))), (FV{1, 1, 1, 1, 0, 1, 1, 1}));
  Tensor b = xlite::tril(xlite::ones({2, 2, 2}));
  EXPECT_EQ(b.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(Vals(b), (FV{1, 0, 1, 1, 1, 0, 1, 1}));
}

TEST(OpsShape, TrilOfOneDimThrows) {
  Tensor x = Iota({3});
  EXPECT_THROW({ xlite::tril(x).to_vector<float>(); }, xlite::Error);
  EXPECT_THROW({ xlite::triu(x).to_vector<float>(); }, xlite::Error);
}

TEST(OpsShape, TrilKeepsIntDtype) {
  Tensor y = xlite::tril(I32({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 3, 4}));
}

// ---------------------------------------------------------------- chains and modes

TEST(OpsShape, PermuteSliceReshapeChain) {
  Tensor x = Iota({2, 3, 4});
  Tensor p = xlite::permute(x, {2, 1, 0});  // [4,3,2], p[k][j][i] = 12 i + 4 j + k
  Tensor s = xlite::slice(p, 0, 1, 4, 2);   // k = 1, 3
  Tensor r = xlite::reshape(s, {2, 6});
  EXPECT_EQ(Vals(r), (FV{1, 13, 5, 17, 9, 21, 3, 15, 7, 19, 11, 23}));
}

TEST(OpsShape, UndefinedTensorThrows) {
  Tensor undefined;
  EXPECT_THROW(xlite::reshape(undefined, {1}), xlite::Error);
  EXPECT_THROW(xlite::cat({undefined, undefined}), xlite::Error);
}

TEST(OpsShape, EagerModeShapeOps) {
  xlite::EagerModeGuard guard(true);
  Tensor x = Iota({2, 3});
  Tensor y = xlite::transpose(x, 0, 1);
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(Vals(y), (FV{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(Vals(xlite::cat({x, x}, 0)).size(), 12u);
  EXPECT_EQ(Vals(xlite::pad(F32({1}), {1, 1})), (FV{0, 1, 0}));
  EXPECT_EQ(Vals(xlite::slice(Iota({5}), 0, -3, INT64_MAX, 2)), (FV{2, 4}));
  EXPECT_THROW(xlite::reshape(x, {5}), xlite::Error);
}
