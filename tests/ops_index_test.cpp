// Unit tests for the indexing ops in xlite/ops.h: index_select, gather, scatter_add, embedding, one_hot.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

using namespace xlite_test;

// ---------------------------------------------------------------- index_select

TEST(OpsIndex, IndexSelectRows) {
  Tensor x = Iota({3, 2});
  Tensor y = xlite::index_select(x, 0, I64({2, 0}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(Vals(y), (FV{4, 5, 0, 1}));
}

TEST(OpsIndex, IndexSelectColumnsNegativeDimI32Index) {
  Tensor x = Iota({2, 3});
  Tensor y = xlite::index_select(x, -1, I32({2, 2, 0}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(Vals(y), (FV{2, 2, 0, 5, 5, 3}));
}

TEST(OpsIndex, IndexSelectMiddleDim) {
  Tensor y = xlite::index_select(Iota({2, 3, 2}), 1, I64({1}));
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(Vals(y), (FV{2, 3, 8, 9}));
}

TEST(OpsIndex, IndexSelectEmptyIndex) {
  Tensor y = xlite::index_select(Iota({3, 2}), 0, xlite::zeros({0}, DType::i64));
  EXPECT_EQ(y.shape(), (Shape{0, 2}));
  EXPECT_TRUE(Vals(y).empty());
}

TEST(OpsIndex, IndexSelectOfTransposedAndIntData) {
  Tensor y = xlite::index_select(Iota({2, 3}).t(), 0, I64({1}));  // row 1 of [[0,3],[1,4],[2,5]]
  EXPECT_EQ(Vals(y), (FV{1, 4}));
  Tensor z = xlite::index_select(I32({10, 20, 30}), 0, I64({1, 1}));
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{20, 20}));
}

TEST(OpsIndex, IndexSelectComputedIndex) {
  // The index is itself a pending value.
  Tensor idx = xlite::sub(I64({3, 2}), 1);
  EXPECT_EQ(Vals(xlite::index_select(Iota({4}), 0, idx)), (FV{2, 1}));
}

TEST(OpsIndex, IndexSelectFloatIndexThrowsNamingOp) {
  Tensor x = Iota({3});
  Tensor idx = F32({0, 1});
  std::string msg = ErrorMessage([&] { xlite::index_select(x, 0, idx).to_vector<float>(); });
  EXPECT_NE(msg.find("[index_select]"), std::string::npos) << msg;
}

TEST(OpsIndex, IndexSelectBadDimOrIndexRankThrows) {
  Tensor x = Iota({3, 2});
  EXPECT_THROW(xlite::index_select(x, 2, I64({0})), xlite::Error);
  EXPECT_THROW(xlite::index_select(x, 0, I64({0, 1}, {1, 2})), xlite::Error);
}

TEST(OpsIndex, IndexSelectOutOfRangeValueThrowsWhenComputed) {
  Tensor x = Iota({3, 2});
  Tensor idx = I64({0, 3});
  EXPECT_THROW(
      {
        Tensor y = xlite::index_select(x, 0, idx);
        y.to_vector<float>();
      },
      xlite::Error);
}

TEST(OpsIndex, IndexSelectNegativeValueThrowsWhenComputed) {
  Tensor x = Iota({3});
  Tensor idx = I64({-1});
  EXPECT_THROW(
      {
        Tensor y = xlite::index_select(x, 0, idx);
        y.to_vector<float>();
      },
      xlite::Error);
}

TEST(OpsIndex, IndexSelectOutOfRangeThrowsAtSync) {
  Tensor x = Iota({3});
  Tensor idx = I32({5});
  EXPECT_THROW(
      {
        Tensor y = xlite::index_select(x, 0, idx);
        xlite::sync({y});
        y.to_vector<float>();
      },
      xlite::Error);
}

// ---------------------------------------------------------------- gather

TEST(OpsIndex, GatherDim1) {
  Tensor x = F32({1, 2, 3, 4}, {2, 2});
  Tensor y = xlite::gather(x, 1, I64({0, 0, 1, 0}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(Vals(y), (FV{1, 1, 4, 3}));
}

TEST(OpsIndex, GatherDim0AndNegativeDim) {
  Tensor x = Iota({3, 2});
  Tensor y = xlite::gather(x, 0, I64({2, 0, 1, 1}, {2, 2}));
  EXPECT_EQ(Vals(y), (FV{4, 1, 2, 3}));
  Tensor z = xlite::gather(x, -1, I64({1, 1, 0}, {3, 1}));
  EXPECT_EQ(z.shape(), (Shape{3, 1}));
  EXPECT_EQ(Vals(z), (FV{1, 3, 4}));
}

TEST(OpsIndex, GatherIndexSmallerThanInput) {
  // Index size may be smaller than the input in every dim.
  Tensor x = Iota({3, 4});
  Tensor y = xlite::gather(x, 1, I32({3, 0}, {2, 1}));
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(Vals(y), (FV{3, 4}));
}

TEST(OpsIndex, GatherOfTransposed) {
  Tensor x = Iota({2, 3}).t();  // [[0,3],[1,4],[2,5]]
  Tensor y = xlite::gather(x, 1, I64({1, 0, 1}, {3, 1}));
  EXPECT_EQ(Vals(y), (FV{3, 1, 5}));
}

TEST(OpsIndex, GatherFloatIndexThrows) {
  Tensor x = Iota({2, 2});
  Tensor idx = F32({0, 1, 0, 1}, {2, 2});
  EXPECT_THROW({ xlite::gather(x, 1, idx).to_vector<float>(); }, xlite::Error);
}

TEST(OpsIndex, GatherRankMismatchThrows) {
  Tensor x = Iota({2, 2});
  Tensor idx = I64({0, 1});
  std::string msg = ErrorMessage([&] { xlite::gather(x, 1, idx).to_vector<float>(); });
  EXPECT_NE(msg.find("[gather]"), std::string::npos) << msg;
}

TEST(OpsIndex, GatherIndexLargerThanInputInOtherDimThrows) {
  Tensor x = Iota({2, 2});
  Tensor idx = I64({0, 0, 0}, {3, 1});
  EXPECT_THROW({ xlite::gather(x, 1, idx).to_vector<float>(); }, xlite::Error);
}

TEST(OpsIndex, GatherOutOfRangeValueThrowsWhenComputed) {
  Tensor x = Iota({2, 2});
  Tensor idx = I64({0, 2, 1, 0}, {2, 2});
  std::string msg = ErrorMessage([&] {
    Tensor y = xlite::gather(x, 1, idx);
    y.to_vector<float>();
  });
  EXPECT_NE(msg.find("[gather]"), std::string::npos) << msg;
}

// ---------------------------------------------------------------- scatter_add

TEST(OpsIndex, ScatterAdd1DAccumulatesDuplicates) {
  Tensor x = xlite::zeros({3});
  Tensor y = xlite::scatter_add(x, 0, I64({0, 1, 0, 2}), F32({1, 2, 3, 4}));
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(Vals(y), (FV{4, 2, 4}));
  EXPECT_EQ(Vals(x), (FV{0, 0, 0}));  // not in place
}

TEST(OpsIndex, ScatterAddOntoNonZeroBase) {
  Tensor y = xlite::scatter_add(F32({10, 20}), 0, I64({1, 1}), F32({1, 2}));
  EXPECT_EQ(Vals(y), (FV{10, 23}));
}

TEST(OpsIndex, ScatterAdd2DDim0) {
  Tensor x = xlite::zeros({2, 3});
  Tensor idx = I64({0, 1, 0, 1, 0, 1}, {2, 3});
  Tensor src = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = xlite::scatter_add(x, 0, idx, src);
  // y[idx[i][j]][j] += src[i][j]
  EXPECT_EQ(Vals(y), (FV{1, 5, 3, 4, 2, 6}));
}

TEST(OpsIndex, ScatterAdd2DDim1WithSmallerIndex) {
  Tensor x = xlite::ones({2, 3});
  Tensor idx = I64({2, 2, 0, 1}, {2, 2});
  Tensor src = F32({1, 2, 3, 4, 5, 6}, {2, 3});  // only src[:, :2] is used
  Tensor y = xlite::scatter_add(x, -1, idx, src);
  EXPECT_EQ(Vals(y), (FV{1, 1, 4, 5, 6, 1}));
}

TEST(OpsIndex, ScatterAddInt) {
  Tensor y = xlite::scatter_add(xlite::zeros({2}, DType::i64), 0, I64({1, 1, 0}), I64({5, 6, 7}));
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (LV{7, 11}));
}

TEST(OpsIndex, ScatterAddOutOfRangeValueThrowsWhenComputed) {
  Tensor x = xlite::zeros({3});
  Tensor idx = I64({0, 3});
  Tensor src = F32({1, 1});
  EXPECT_THROW(
      {
        Tensor y = xlite::scatter_add(x, 0, idx, src);
        y.to_vector<float>();
      },
      xlite::Error);
}

// The shapes gradients of index_select and embedding take (an index as wide as x), which the CPU backend
// scatters in native code: rows added in order, repeats summed, over dim 0 and the last dim, i32 and i64 indices.
TEST(OpsIndex, ScatterAddOfWholeRowsMatchesTheHost) {
  const int64_t rows = 6, cols = 5, picks = 40;
  std::vector<float> x(rows * cols), src(picks * cols);
  std::vector<int64_t> idx(picks * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i);
  for (int64_t p = 0; p < picks; ++p)
    for (int64_t c = 0; c < cols; ++c) {
      idx[p * cols + c] = (p * 7 + c) % rows;
      src[p * cols + c] = 1.0f + static_cast<float>(p) * 0.5f - static_cast<float>(c);
    }
  std::vector<float> want = x;
  for (int64_t p = 0; p < picks; ++p)
    for (int64_t c = 0; c < cols; ++c) want[idx[p * cols + c] * cols + c] += src[p * cols + c];
  std::vector<int32_t> idx32(idx.begin(), idx.end());
  for (Tensor index : {I64(idx, {picks, cols}), I32(idx32, {picks, cols})})
    EXPECT_EQ(xlite::scatter_add(F32(x, {rows, cols}), 0, index, F32(src, {picks, cols})).to_vector<float>(), want);
  // Along the last dim: the transposed problem gives the transposed answer.
  Tensor by_col =
      xlite::scatter_add(F32(x, {rows, cols}).t(), 1, I64(idx, {picks, cols}).t(), F32(src, {picks, cols}).t());
  EXPECT_EQ(by_col.t().to_vector<float>(), want);
  EXPECT_NE(ErrorMessage([&] {
              xlite::scatter_add(xlite::zeros({4, 2}), 0, I64({0, 1, 7, 2}, {2, 2}), F32({1, 1, 1, 1}, {2, 2}))
                  .to_vector<float>();
            }).find("index 7 is out of range for dim 0 of size 4"),
            std::string::npos);
}

TEST(OpsIndex, ScatterAddInvalidArgumentsThrow) {
  Tensor x = xlite::zeros({3});
  EXPECT_THROW({ xlite::scatter_add(x, 0, F32({0}), F32({1})).to_vector<float>(); }, xlite::Error);
  EXPECT_THROW({ xlite::scatter_add(x, 1, I64({0}), F32({1})).to_vector<float>(); }, xlite::Error);
  // src smaller than index
  EXPECT_THROW({ xlite::scatter_add(x, 0, I64({0, 1}), F32({1})).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- embedding

TEST(OpsIndex, EmbeddingLooksUpRows) {
  Tensor w = Iota({4, 3});
  Tensor y = xlite::embedding(w, I64({2, 0, 2}));
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(Vals(y), (FV{6, 7, 8, 0, 1, 2, 6, 7, 8}));
}

TEST(OpsIndex, Embedding2DIndices) {
  Tensor w = Iota({4, 2});
  Tensor y = xlite::embedding(w, I32({3, 1, 0, 3}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(Vals(y), (FV{6, 7, 2, 3, 0, 1, 6, 7}));
}

TEST(OpsIndex, EmbeddingZeroDimIndex) {
  Tensor y = xlite::embedding(Iota({4, 2}), xlite::tensor(int64_t{1}));
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(Vals(y), (FV{2, 3}));
}

TEST(OpsIndex, EmbeddingEmptyIndices) {
  Tensor y = xlite::embedding(Iota({4, 2}), xlite::zeros({0}, DType::i64));
  EXPECT_EQ(y.shape(), (Shape{0, 2}));
}

TEST(OpsIndex, EmbeddingOutOfRangeThrowsWhenComputed) {
  Tensor w = Iota({4, 2});
  Tensor idx = I64({1, 4});
  std::string msg = ErrorMessage([&] {
    Tensor y = xlite::embedding(w, idx);
    y.to_vector<float>();
  });
  EXPECT_NE(msg.find("[embedding]"), std::string::npos) << msg;
  Tensor neg = I64({-1});
  EXPECT_THROW(
      {
        Tensor y = xlite::embedding(w, neg);
        y.to_vector<float>();
      },
      xlite::Error);
}

TEST(OpsIndex, EmbeddingInvalidArgumentsThrow) {
  Tensor w = Iota({4, 2});
  EXPECT_THROW({ xlite::embedding(w, F32({0, 1})).to_vector<float>(); }, xlite::Error);
  EXPECT_THROW({ xlite::embedding(Iota({4}), I64({0})).to_vector<float>(); }, xlite::Error);
}

// ---------------------------------------------------------------- one_hot

TEST(OpsIndex, OneHotWithNumClasses) {
  Tensor y = xlite::one_hot(I64({0, 2, 1}), 4);
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(y.to_vector<int64_t>(), (LV{1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0}));
}

TEST(OpsIndex, OneHotInfersNumClasses) {
  Tensor y = xlite::one_hot(I64({1, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_vector<int64_t>(), (LV{0, 1, 0, 0, 0, 0, 0, 1}));
}

TEST(OpsIndex, OneHot2DInput) {
  Tensor y = xlite::one_hot(I64({0, 1, 1, 0}, {2, 2}), 2);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(y.dtype(), DType::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (LV{1, 0, 0, 1, 0, 1, 1, 0}));
}

TEST(OpsIndex, OneHotEmptyInput) {
  Tensor y = xlite::one_hot(xlite::zeros({0}, DType::i64), 3);
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(OpsIndex, OneHotOutOfRangeThrows) {
  Tensor x = I64({0, 3});
  EXPECT_THROW({ xlite::one_hot(x, 3).to_vector<int64_t>(); }, xlite::Error);
  Tensor n = I64({-1, 0});
  EXPECT_THROW({ xlite::one_hot(n, 3).to_vector<int64_t>(); }, xlite::Error);
}

TEST(OpsIndex, OneHotFloatInputThrows) {
  Tensor x = F32({0, 1});
  std::string msg = ErrorMessage([&] { xlite::one_hot(x, 2).to_vector<int64_t>(); });
  EXPECT_NE(msg.find("[one_hot]"), std::string::npos) << msg;
}

// ---------------------------------------------------------------- eager mode

TEST(OpsIndex, EagerModeIndexOps) {
  xlite::EagerModeGuard guard(true);
  Tensor w = Iota({3, 2});
  Tensor e = xlite::embedding(w, I64({2, 1}));
  EXPECT_FALSE(e.is_pending());
  EXPECT_EQ(Vals(e), (FV{4, 5, 2, 3}));
  EXPECT_EQ(Vals(xlite::gather(w, 1, I64({1, 0, 1}, {3, 1}))), (FV{1, 2, 5}));
  EXPECT_EQ(xlite::one_hot(I64({1}), 2).to_vector<int64_t>(), (LV{0, 1}));
  Tensor bad = I64({7});
  EXPECT_THROW(
      {
        Tensor y = xlite::index_select(w, 0, bad);
        y.to_vector<float>();
      },
      xlite::Error);
}
