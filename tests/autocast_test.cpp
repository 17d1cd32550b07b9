// autocast(DType::bf16): products in bf16 (through oneDNN where the CPU has AVX-512 BF16), softmax and losses
// in f32, f32 parameters with f32 gradients, and a training run whose loss curve follows the f32 one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

namespace {
std::vector<float> values(const xl::Tensor& t) { return t.to(xl::DType::f32).to_vector<float>(); }
}  // namespace

TEST(Autocast, ProductsRunInTheLowerDtypeAndPrecisionOpsInF32) {
  xl::manual_seed(1);
  xl::Tensor a = xl::randn({4, 8}), b = xl::randn({8, 3}), w = xl::randn({3, 8});
  EXPECT_FALSE(xl::is_autocast_enabled());
  {
    xl::autocast scope(xl::DType::bf16);
    EXPECT_TRUE(xl::is_autocast_enabled());
    EXPECT_EQ(xl::matmul(a, b).dtype(), xl::DType::bf16);
    EXPECT_EQ(xl::linear(a, w, xl::zeros({3})).dtype(), xl::DType::bf16);
    EXPECT_EQ(xl::conv2d(xl::ones({1, 2, 4, 4}), xl::ones({3, 2, 3, 3})).dtype(), xl::DType::bf16);
    xl::Tensor logits = xl::matmul(a, b);
    EXPECT_EQ(xl::softmax(logits, 1).dtype(), xl::DType::f32);
    EXPECT_EQ(xl::nn::cross_entropy(logits, xl::tensor(std::vector<int64_t>{0, 1, 2, 0})).dtype(), xl::DType::f32);
    EXPECT_EQ(xl::nn::mse_loss(logits, xl::zeros({4, 3})).dtype(), xl::DType::f32);
    EXPECT_EQ((a + 1.0f).dtype(), xl::DType::f32);  // everything else keeps its inputs' dtype
    {
      xl::autocast off(xl::DType::bf16, false);
      EXPECT_EQ(xl::matmul(a, b).dtype(), xl::DType::f32);
    }
    EXPECT_EQ(xl::matmul(a, b).dtype(), xl::DType::bf16);
  }
  EXPECT_EQ(xl::matmul(a, b).dtype(), xl::DType::f32);
  std::string message = ErrorMessage([] { xl::autocast scope(xl::DType::i32); });
  EXPECT_NE(message.find("[autocast] the lower dtype must be bf16 or f16"), std::string::npos) << message;
}

TEST(Autocast, ABf16ProductMatchesF32OnTheSameRoundedInputs) {
  xl::manual_seed(2);
  xl::Tensor a = xl::randn({64, 96}).to(xl::DType::bf16), b = xl::randn({96, 80}).to(xl::DType::bf16);
  xl::Tensor exact = xl::matmul(a.to(xl::DType::f32), b.to(xl::DType::f32));
  xl::Tensor product = xl::matmul(a, b);
  if (__builtin_cpu_supports("avx512bf16")) {
    std::string steps;
    for (const xl::debug::MemoryStep& step : xl::debug::memory_timeline({product})) steps += step.step + "\n";
    EXPECT_NE(steps.find("matmul bf16"), std::string::npos) << "a bf16 product fell back to the reference loops\n"
                                                            << steps;
  }
  std::vector<float> got = values(product), want = values(exact);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-2 * (1 + std::fabs(want[i]))) << i;
}

TEST(Autocast, ParametersStayF32AndGetF32Gradients) {
  xl::manual_seed(3);
  xl::Tensor w = (xl::randn({8, 4}) * 0.3).requires_grad_();
  xl::Tensor x = xl::randn({16, 8});
  xl::Tensor target = xl::randint(0, 4, {16});
  xl::nn::cross_entropy(xl::matmul(x, w), target).backward();
  std::vector<float> want = values(w.grad());
  w.reset_grad();
  {
    xl::autocast scope;
    xl::nn::cross_entropy(xl::matmul(x, w), target).backward();
  }
  EXPECT_EQ(w.dtype(), xl::DType::f32);
  EXPECT_EQ(w.grad().dtype(), xl::DType::f32);
  std::vector<float> got = values(w.grad());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-2 * (1 + std::fabs(want[i]))) << i;
}

TEST(Autocast, ATrainingRunFollowsTheF32LossCurve) {
  // Three Gaussian blobs in 16 dims, a two-layer MLP, SGD: the same run in f32 and under autocast(bf16).
  xl::manual_seed(4);
  xl::Tensor centers = xl::randn({3, 16}) * 2.0;
  xl::Tensor labels = xl::randint(0, 3, {256});
  xl::Tensor inputs = xl::index_select(centers, 0, labels) + xl::randn({256, 16});
  xl::sync();
  auto run = [&](bool mixed) {
    xl::manual_seed(5);
    xl::nn::Linear first(16, 64), second(64, 3);
    xl::optim::SGD sgd({first.weight, first.bias, second.weight, second.bias}, 0.2);
    std::vector<float> losses;
    for (int step = 0; step < 40; ++step) {
      sgd.zero_grad();
      xl::Tensor loss;
      {
        xl::autocast scope(xl::DType::bf16, mixed);
        loss = xl::nn::cross_entropy(second.forward(xl::relu(first.forward(inputs))), labels);
      }
      loss.backward();
      sgd.step();
      losses.push_back(loss.item<float>());
    }
    return losses;
  };
  const std::vector<float> full = run(false), mixed = run(true);
  for (size_t i = 0; i < full.size(); ++i) EXPECT_NEAR(mixed[i], full[i], 0.03 + 0.05 * full[i]) << "step " << i;
  EXPECT_LT(mixed.back(), full.front() * 0.25);
}
