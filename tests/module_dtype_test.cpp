// Module::to(dtype) and Tensor::set_data, PyTorch's `module.to(torch.float64)` and `x.data = value`: every
// handle to a parameter sees the converted tensor, integer buffers keep their dtype, and training goes on.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

TEST(ModuleDtype, ToConvertsFloatingParametersAndBuffersInPlace) {
  xl::manual_seed(3);
  auto linear = std::make_shared<xl::nn::Linear>(4, 3);
  auto norm = std::make_shared<xl::nn::BatchNorm1d>(3);
  xl::nn::Sequential model({linear, norm});
  xl::Tensor x = xl::randn({5, 4});
  xl::Tensor before = model.forward(x);
  std::vector<float> expected = before.to_vector<float>();

  xl::Tensor weight_handle = linear->weight;
  EXPECT_EQ(&model.to(xl::DType::f64), &model);
  EXPECT_EQ(linear->weight.dtype(), xl::DType::f64);
  EXPECT_EQ(weight_handle.dtype(), xl::DType::f64);  // the same tensor, not a new one
  EXPECT_TRUE(linear->weight.requires_grad());
  EXPECT_EQ(norm->running_mean.dtype(), xl::DType::f64);
  EXPECT_EQ(norm->num_batches_tracked.dtype(), xl::DType::i64);
  for (const auto& [name, p] : model.named_parameters()) EXPECT_EQ(p.dtype(), xl::DType::f64) << name;

  // The same function in f64 (the running statistics were updated once by the first call, in both).
  model.eval();
  xl::Tensor after = model.forward(x.to(xl::DType::f64));
  EXPECT_EQ(after.dtype(), xl::DType::f64);
  model.train();
  xl::Tensor again = model.forward(x.to(xl::DType::f64));
  std::vector<double> values = again.to_vector<double>();
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(values[i], expected[i], 1e-5) << i;

  xl::optim::SGD sgd(model.parameters(), 0.1);
  xl::Tensor loss = again.square().mean();
  loss.backward();
  EXPECT_EQ(linear->weight.grad().dtype(), xl::DType::f64);
  std::vector<double> w0 = linear->weight.to_vector<double>();
  std::vector<double> g = linear->weight.grad().to_vector<double>();
  sgd.step();
  std::vector<double> w1 = linear->weight.to_vector<double>();
  for (size_t i = 0; i < w0.size(); ++i) EXPECT_NEAR(w1[i], w0[i] - 0.1 * g[i], 1e-12);
}

TEST(ModuleDtype, ToDropsGradientsOfTheOldDtype) {
  xl::nn::Linear linear(2, 2);
  linear.forward(xl::ones({1, 2})).sum().backward();
  ASSERT_TRUE(linear.weight.grad().defined());
  linear.to(xl::DType::f16);
  EXPECT_FALSE(linear.weight.grad().defined());
  EXPECT_EQ(linear.forward(xl::ones({1, 2}, xl::DType::f16)).dtype(), xl::DType::f16);
  std::string message = ErrorMessage([&] { linear.to(xl::DType::i32); });
  EXPECT_NE(message.find("[Module.to] a module's dtype must be floating"), std::string::npos) << message;
}

TEST(SetData, EveryHandleSeesTheNewValueOfAnyShapeAndDtype) {
  xl::Tensor a = xl::zeros({2, 2});
  xl::Tensor alias = a;
  a.set_data(xl::arange(6));
  EXPECT_EQ(alias.shape(), (xl::Shape{6}));
  EXPECT_EQ(alias.dtype(), xl::DType::i64);
  EXPECT_EQ(alias.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  a.set_data(xl::ones({3}));
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1, 1, 1}));

  std::string message = ErrorMessage([&] { a.index({0}).set_data(xl::ones({})); });
  EXPECT_NE(message.find("[set_data] cannot replace the value of a view"), std::string::npos) << message;
}
