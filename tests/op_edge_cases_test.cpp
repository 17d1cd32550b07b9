// Errors name the op the user called and the values they gave, on every backend, also for ops built from
// other ops (cross_entropy's gather); and empty inputs behave as in PyTorch 1.13 (softmax over an empty dim
// is empty, one_hot without classes raises, the mean loss of an empty batch is nan).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "backend_support.h"
#include "test_support.h"

namespace {
namespace xl = xlite;
namespace nn = xlite::nn;
using namespace xlite_test;

TEST(ErrorNames, RunTimeErrorsNameThePublicOp) {
  // The cpu backend named [parameter]: the exponent's instruction, not the pow.
  for (const std::string& backend : Backends()) {
    EXPECT_EQ(RunOn({xl::pow(I64({2, 3}), -1)}, backend).error,
              "[pow] integers to negative integer powers are not allowed (exponent -1)")
        << backend;
    EXPECT_EQ(RunOn({xl::pow(I32({2, 3}), I32({1, -2}))}, backend).error,
              "[pow] integers to negative integer powers are not allowed (exponent -2)")
        << backend;
  }
}

TEST(ErrorNames, LossesNameThemselvesNotTheGatherInside) {
  auto logits = xl::zeros({2, 3});
  auto target = I64({0, 5});
  for (const std::string& backend : Backends()) {
    EXPECT_EQ(RunOn({nn::cross_entropy(logits, target)}, backend).error,
              "[cross_entropy] index 5 is out of range for dim 1 of size 3 (in gather)")
        << backend;
    EXPECT_EQ(RunOn({nn::nll_loss(xl::log_softmax(logits, 1), I64({-3, 0}))}, backend).error,
              "[nll_loss] index -3 is out of range for dim 1 of size 3 (in gather)")
        << backend;
  }
  // In eager mode the loss runs when it returns, as one op.
  xl::EagerModeGuard eager(true);
  EXPECT_EQ(ErrorMessage([&] { nn::cross_entropy(logits, target); }),
            "[cross_entropy] index 5 is out of range for dim 1 of size 3 (in gather)");
  EXPECT_FLOAT_EQ(nn::cross_entropy(logits, I64({0, 2})).item<float>(), std::log(3.0f));
}

TEST(ErrorNames, CompositeOpNamesErrorsOfWhatItBuilds) {
  auto table = xl::zeros({3});
  auto picked = xl::composite_op("lookup", [&] { return xl::gather(table, 0, I64({4})) + 1; });
  for (const std::string& backend : Backends())
    EXPECT_EQ(RunOn({picked}, backend).error, "[lookup] index 4 is out of range for dim 0 of size 3 (in gather)")
        << backend;
  // A shape rule's error at trace time reads the same way.
  EXPECT_EQ(
      ErrorMessage([] { xl::composite_op("grow", [] { return xl::expand(xl::ones({1}), {int64_t{1} << 62}); }); }),
      "[grow] shape [4611686018427387904] of f32 is too large for 64-bit sizes: its non-zero dims times 4 bytes "
      "per element overflow (in broadcast)");
}

TEST(ErrorNames, ConvWithHugePaddingSaysSo) {
  // Used to report a kernel larger than the padded input, whose size had wrapped.
  EXPECT_EQ(
      ErrorMessage(
          [] { xl::conv2d(xl::ones({1, 1, 3, 3}), xl::ones({1, 1, 3, 3}), std::nullopt, {1}, {int64_t{1} << 62}); }),
      "[conv2d] input [1,1,3,3] padded by [4611686018427387904,4611686018427387904] does not fit in 64-bit sizes");
  EXPECT_EQ(
      ErrorMessage([] { xl::conv2d(xl::ones({1, 1, 3, 3}), xl::ones({1, 1, 5, 5}), std::nullopt, {1}, {0}, {2}); }),
      "[conv2d] kernel [1,1,5,5] dilated by [2,2] spans 9, more than the input [1,1,3,3] padded by [0,0] (3)");
  EXPECT_EQ(ErrorMessage([] {
              xl::conv2d(xl::ones({1, 1, 3, 3}), xl::ones({1, 1, 2, 2}), std::nullopt, {1}, {0}, {int64_t{1} << 62});
            }),
            "[conv2d] kernel [1,1,2,2] dilated by [4611686018427387904,4611686018427387904] spans 4611686018427387905, "
            "more than the input [1,1,3,3] padded by [0,0] (3)");
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(
      ErrorMessage([&] { xl::max_pool2d(xl::ones({1, 1, 3, 3}), {max}, {1}, {max / 2}); }),
      "[max_pool2d] input [1,1,3,3] padded by [4611686018427387903,4611686018427387903] does not fit in 64-bit sizes");
}

TEST(EmptyInputs, SoftmaxOverAnEmptyDimIsEmpty) {
  for (auto* fn : {&xl::softmax, &xl::log_softmax}) {
    Tensor y = fn(xl::zeros({3, 0}), -1);
    EXPECT_EQ(y.shape(), (Shape{3, 0}));
    EXPECT_EQ(y.dtype(), DType::f32);
    EXPECT_TRUE(y.to_vector<float>().empty());
    EXPECT_EQ(fn(xl::zeros({0, 4}), 1).shape(), (Shape{0, 4}));
    EXPECT_EQ(fn(xl::zeros({2, 0}, DType::i64), 1).dtype(), DType::f32);
  }
}

TEST(EmptyInputs, OneHotFollowsPyTorch) {
  EXPECT_EQ(ErrorMessage([] { xl::one_hot(I64({0, 1}), 0); }),
            "[one_hot] class values must be smaller than num_classes 0, and the input [2] has values");
  for (int64_t classes : {-1, 0})
    EXPECT_EQ(ErrorMessage([&] { xl::one_hot(I64({}), classes); }),
              "[one_hot] cannot infer the number of classes from an empty tensor [0]; give num_classes > 0");
  EXPECT_EQ(ErrorMessage([] { xl::one_hot(I64({-1, -2})); }),
            "[one_hot] class values must be non-negative, got a largest value of -1");
  EXPECT_EQ(xl::one_hot(I64({}), 3).shape(), (Shape{0, 3}));
  auto hot = xl::one_hot(I64({0, 2, 1}, {3}), 3);
  for (const std::string& backend : Backends()) {
    EXPECT_EQ(ValuesOn<int64_t>(hot, backend), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0})) << backend;
    EXPECT_EQ(RunOn({xl::one_hot(I32({1, 3}), 3)}, backend).error,
              "[one_hot] index 3 is out of range for dim 0 of size 3 (in index_select)")
        << backend;
  }
  EXPECT_EQ(xl::one_hot(I64({1, 0}, {2, 1})).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(xl::one_hot(I64({1, 0}, {2, 1})).shape(), (Shape{2, 1, 2}));
}

TEST(EmptyInputs, MeanLossOfAnEmptyBatchIsNan) {
  auto logits = xl::zeros({0, 3});
  auto target = I64({});
  for (const std::string& backend : Backends()) {
    for (const Tensor& loss : {nn::cross_entropy(logits, target), nn::cross_entropy(logits, target, -100, 0.1),
                               nn::nll_loss(xl::log_softmax(logits, 1), target)}) {
      std::vector<float> v = ValuesOn<float>(loss, backend);
      ASSERT_EQ(v.size(), 1u);
      EXPECT_TRUE(std::isnan(v[0])) << backend << ": " << v[0];
    }
  }
}

}  // namespace
