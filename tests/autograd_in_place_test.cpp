// In-place updates and autograd follow PyTorch: a leaf that requires grad is updated only under
// NoGradGuard, and backward refuses a value its gradient needs that an in-place op changed since.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

namespace {

TEST(AutogradInPlace, ALeafThatRequiresGradIsUpdatedOnlyWithoutGradMode) {
  xl::Tensor w = xl::ones({2}).requires_grad_();
  const std::string message = ErrorMessage([&] { w.add_(1.0f); });
  EXPECT_NE(message.find("[add_] a leaf tensor that requires grad cannot be updated in place"), std::string::npos)
      << message;
  EXPECT_EQ(w.to_vector<float>(), std::vector<float>(2, 1.0f));  // unchanged
  EXPECT_NE(ErrorMessage([&] { w.copy_(xl::zeros({2})); }).find("[copy_]"), std::string::npos);
  {
    xl::NoGradGuard no_grad;
    w.add_(1.0f);
  }
  EXPECT_EQ(w.to_vector<float>(), std::vector<float>(2, 2.0f));
}

// Without the check this read the updated weights: the weights' update is donated into the buffer that
// the saved forward value still names.
TEST(AutogradInPlace, BackwardRefusesASavedValueThatWasUpdatedInPlace) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2, 3}).requires_grad_();
  xl::Tensor x = xl::tensor(std::vector<float>{4, 5, 6}).requires_grad_();
  xl::Tensor loss = xl::sum(x * w);
  xl::sync();
  {
    xl::NoGradGuard no_grad;
    w.sub_(10.0f);
  }
  xl::sync();
  const std::string message = ErrorMessage([&] { loss.backward(); });
  EXPECT_NE(message.find("[backward] the gradient of mul"), std::string::npos) << message;
  EXPECT_NE(message.find("operand 1, a f32[3] tensor that an in-place op changed after it was used (version 0, now 1)"),
            std::string::npos)
      << message;
}

TEST(AutogradInPlace, AGradientThatNeedsNoUpdatedValueStillFlowsToTheLeaf) {
  // d(x + w)/dw reads neither value, so PyTorch accepts the update; so does xlite, and the gradient
  // reaches w although w's node changed.
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2, 3}).requires_grad_();
  xl::Tensor x = xl::tensor(std::vector<float>{4, 5, 6});
  xl::Tensor loss = xl::sum((x + w) * 2.0f);
  {
    xl::NoGradGuard no_grad;
    w.sub_(10.0f);
  }
  loss.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), std::vector<float>(3, 2.0f));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{-9, -8, -7}));
}

TEST(AutogradInPlace, ASavedResultChangedInPlaceIsRefused) {
  xl::Tensor x = xl::tensor(std::vector<float>{0.5f, -1.0f}).requires_grad_();
  xl::Tensor y = xl::exp(x);  // exp's gradient reads its result
  y.mul_(2.0f);
  EXPECT_NE(ErrorMessage([&] { xl::sum(y).backward(); }).find("the gradient of exp needs its result"),
            std::string::npos);
}

TEST(AutogradInPlace, AnInPlaceOpOnANonLeafKeepsItsOwnGradient) {
  // The in-place op's own node saved the value from before the update: that is no reason to refuse.
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  xl::Tensor x = xl::tensor(std::vector<float>{3, 4}).requires_grad_();
  xl::Tensor h = x * 1.0f;
  h.mul_(w);
  xl::sum(h).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(AutogradInPlace, TheUsualTrainingLoopUpdatesAfterBackward) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  xl::Tensor x = xl::tensor(std::vector<float>{3, 4});
  for (int step = 0; step < 3; ++step) {
    xl::Tensor loss = xl::sum(xl::square(x * w));
    loss.backward();
    xl::NoGradGuard no_grad;
    w.sub_(w.grad() * 0.01f);
    w.grad().zero_();
  }
  // w <- w - 0.01 * 2 x^2 w, three times.
  std::vector<float> got = w.to_vector<float>();
  EXPECT_NEAR(got[0], 1.0f * std::pow(1 - 0.18f, 3.0f), 1e-5);
  EXPECT_NEAR(got[1], 2.0f * std::pow(1 - 0.32f, 3.0f), 1e-5);
}

}  // namespace
