// The normalisation, convolution, activation and container modules and nn::init, against PyTorch 2.15's
// values for the same inputs, plus their errors and behaviour under compile(fn).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "test_support.h"

namespace xl = xlite;
namespace nn = xlite::nn;
using xlite_test::ErrorMessage;
using xlite_test::ExpectClose;

namespace {
// (arange(24) ^ 1.5 / 10) as [2, 3, 2, 2], the input of the PyTorch runs.
xl::Tensor image() { return xl::reshape(xl::pow(xl::arange(0, 24, 1).to(xl::DType::f32), 1.5) / 10.0, {2, 3, 2, 2}); }

std::vector<float> at(const xl::Tensor& y, std::initializer_list<std::vector<int64_t>> where) {
  std::vector<float> out;
  for (const auto& i : where) {
    xl::Tensor v = y;
    for (int64_t k : i) v = xl::squeeze(xl::slice(v, 0, k, k + 1), 0);
    out.push_back(v.item<float>());
  }
  return out;
}
}  // namespace

TEST(NnModules, BatchNormTrainsOnBatchStatisticsAndUpdatesRunningOnes) {
  nn::BatchNorm2d bn(3, 1e-5, 0.2);
  xl::Tensor y = bn(image());
  ExpectClose(at(y, {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}, {1, 2, 1, 1}}),
              {-1.075261116027832, -1.149065375328064, -1.1729915142059326, 1.3279647827148438, 1.2926541566848755,
               1.2765229940414429},
              1e-5, 1e-5);
  ExpectClose(bn.running_mean.to_vector<float>(), {0.519859790802002, 0.8641924262046814, 1.2922579050064087});
  ExpectClose(bn.running_var.to_vector<float>(), {2.135690450668335, 2.9461231231689453, 3.728398084640503});
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  ExpectClose(at(bn(image()), {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}, {1, 2, 1, 1}}),
              {-0.35572636127471924, -0.03739875927567482, 0.5026047229766846, 3.619544267654419, 4.32159423828125,
               5.043302059173584},
              1e-5, 1e-5);
  EXPECT_EQ(bn.running_mean.to_vector<float>()[0], 0.519859790802002f) << "eval leaves the statistics alone";
}

TEST(NnModules, BatchNorm1dKeepsTheUnbiasedRunningVariance) {
  nn::BatchNorm1d bn(3);
  xl::Tensor x = xl::reshape(xl::square(xl::arange(0, 12, 1).to(xl::DType::f32)) / 7.0, {4, 3});
  ExpectClose(xl::slice(bn(x), 1, 0, 1).reshape({4}).to_vector<float>(),
              {-0.9999998211860657, -0.7142856121063232, 0.14285708963871002, 1.5714281797409058}, 1e-5, 1e-5);
  ExpectClose(bn.running_var.to_vector<float>(), {3.5999999046325684, 4.824490070343018, 6.293878078460693}, 1e-5);
  EXPECT_EQ(bn.state_dict().size(), 5u);  // weight, bias, running_mean, running_var, num_batches_tracked
}

TEST(NnModules, BatchNormUnderACompiledStepUpdatesItsBuffersOnEveryReplay) {
  nn::BatchNorm1d bn(2, 1e-5, 0.5);
  auto step = xl::compile([&](const xl::Tensor& x) { return bn(x); });
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3, 6}, {2, 2});  // batch means 2 and 4
  for (int i = 0; i < 4; ++i) step(x);
  EXPECT_TRUE(step.last_call().replayed);
  // Each call moves the running mean halfway to the batch mean: 1 - 0.5^4 of it after four.
  ExpectClose(bn.running_mean.to_vector<float>(), {2 * (1 - 0.0625), 4 * (1 - 0.0625)}, 1e-6);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 4);
}

TEST(NnModules, GroupNormAndInstanceNormNormalisePerSample) {
  nn::GroupNorm gn(3, 6);
  xl::Tensor x = xl::reshape(xl::pow(xl::arange(0, 24, 1).to(xl::DType::f32), 1.3), {2, 6, 2});
  ExpectClose(xl::slice(xl::slice(gn(x), 0, 0, 1), 2, 0, 1).reshape({6}).to_vector<float>(),
              {-1.2133957147598267, 0.3522021174430847, -1.3162637948989868, 0.42337843775749207, -1.32722806930542,
               0.43331146240234375},
              1e-5, 1e-5);
  nn::InstanceNorm2d in(3);
  ExpectClose(at(in(image()), {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {1, 0, 1, 1}}),
              {-1.140863299369812, -1.2991427183151245, -1.3175238370895386, 1.3579599857330322}, 1e-5, 1e-5);
  EXPECT_TRUE(in.parameters().empty());
}

TEST(NnModules, NormalisationErrorsNameTheModule) {
  nn::BatchNorm2d bn(3);
  EXPECT_NE(ErrorMessage([&] { bn(xl::ones({2, 4, 2, 2})); }).find("[BatchNorm] expects 3 channels"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { bn(xl::ones({1, 3, 1, 1})); }).find("more than one value per channel"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([] { nn::GroupNorm(4, 6); }).find("[GroupNorm]"), std::string::npos);
}

TEST(NnModules, ConvolutionModulesMatchTheirFunctions) {
  xl::manual_seed(3);
  nn::Conv1d conv(4, 6, 3, {.stride = {2}, .padding = {1}});
  EXPECT_EQ(conv.weight.shape(), (xl::Shape{6, 4, 3}));
  xl::Tensor x = xl::randn({2, 4, 9});
  EXPECT_EQ(conv(x).shape(), (xl::Shape{2, 6, 5}));
  EXPECT_TRUE(xl::allclose(conv(x), xl::conv1d(x, conv.weight, conv.bias, 2, 1)));
  nn::ConvTranspose2d up(6, 4, {3}, {.stride = {2}, .padding = {1}, .output_padding = {1}});
  EXPECT_EQ(up.weight.shape(), (xl::Shape{6, 4, 3, 3}));
  EXPECT_EQ(up(xl::randn({1, 6, 5, 5})).shape(), (xl::Shape{1, 4, 10, 10}));
  EXPECT_NE(ErrorMessage([] { nn::Conv1d(3, 4, 3, {.groups = 2}); }).find("[Conv1d]"), std::string::npos);
}

TEST(NnModules, ActivationModulesAndLambdaComputeTheirFunctions) {
  xl::Tensor x = xl::tensor(std::vector<float>{-2, -0.5, 0, 1.5});
  nn::Sequential net({std::make_shared<nn::Identity>(), std::make_shared<nn::Tanh>(), std::make_shared<nn::Sigmoid>(),
                      std::make_shared<nn::SiLU>(), std::make_shared<nn::GELU>("tanh"),
                      std::make_shared<nn::Lambda>([](const xl::Tensor& t) { return t * 2.0; }),
                      std::make_shared<nn::Softmax>(0)});
  xl::Tensor want = xl::softmax(xl::gelu(xl::silu(xl::sigmoid(xl::tanh(x))), "tanh") * 2.0, 0);
  EXPECT_TRUE(xl::allclose(net(x), want));
}

TEST(NnModules, ContainersRegisterTheirChildren) {
  nn::ModuleList list({std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::Linear>(3, 1, false)});
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.named_parameters()[2].first, "1.weight");
  EXPECT_EQ(list.num_parameters(), 2 * 3 + 3 + 3);
  nn::ModuleDict dict;
  dict.insert("encoder", std::make_shared<nn::Linear>(4, 4));
  EXPECT_TRUE(dict.contains("encoder"));
  EXPECT_EQ(dict.state_dict().count("encoder.bias"), 1u);
  EXPECT_NE(ErrorMessage([&] { dict["decoder"]; }).find("[ModuleDict] no module named 'decoder'"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { list[2]; }).find("[ModuleList] index 2 is out of range"), std::string::npos);
  int visited = 0;
  list.apply([&](nn::Module&) { ++visited; });
  EXPECT_EQ(visited, 3);  // two children, then the list
}

TEST(NnModules, InitialisersFillInPlaceWithTheRightScale) {
  xl::manual_seed(11);
  auto layer = std::make_shared<nn::Linear>(400, 300);
  xl::Tensor w = layer->weight;
  nn::init::zeros_(layer->bias);
  EXPECT_EQ(xl::sum(xl::abs(layer->bias)).item<float>(), 0.0f);
  nn::init::constant_(layer->bias, 0.5);
  EXPECT_EQ(layer->bias.to_vector<float>()[7], 0.5f);
  auto std_of = [&] { return xl::std(w).item<double>(); };
  nn::init::xavier_uniform_(w);
  EXPECT_NEAR(std_of(), std::sqrt(2.0 / 700), 0.02 * std::sqrt(2.0 / 700) * 10);
  nn::init::kaiming_normal_(w, 0, "fan_in", "relu");
  EXPECT_NEAR(std_of(), std::sqrt(2.0 / 400), 0.03 * std::sqrt(2.0 / 400));
  nn::init::normal_(w, 1.0, 0.1);
  EXPECT_NEAR(xl::mean(w).item<double>(), 1.0, 0.005);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(layer->parameters()[0].numel(), w.numel()) << "the parameter itself was filled";
  // orthogonal_: the rows of a wide matrix (and columns of a tall one) are orthonormal.
  xl::Tensor wide = xl::zeros({3, 5}), tall = xl::zeros({5, 3});
  nn::init::orthogonal_(wide);
  nn::init::orthogonal_(tall, 2.0);
  EXPECT_TRUE(xl::allclose(xl::matmul(wide, wide.t()), xl::eye(3), 1e-5, 1e-6));
  EXPECT_TRUE(xl::allclose(xl::matmul(tall.t(), tall), xl::eye(3) * 4.0, 1e-5, 1e-5));
  EXPECT_NE(ErrorMessage([&] { nn::init::kaiming_uniform_(w, 0, "fan_mid"); }).find("[kaiming_uniform_]"),
            std::string::npos);
  xl::Tensor vector = xl::zeros({4});
  EXPECT_NE(
      ErrorMessage([&] { nn::init::xavier_normal_(vector); }).find("[xavier_normal_] needs a tensor of at least 2"),
      std::string::npos);
}
