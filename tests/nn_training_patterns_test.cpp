// Patterns of PyTorch training code: rectangular convolution and pooling windows, zero_grad(set_to_none) with
// optimizers that skip parameters without a gradient, and gradient accumulation over micro-batches, each
// compiled with compile(fn) and checked against the same loop run uncompiled.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "test_support.h"

namespace xl = xlite;
namespace nn = xlite::nn;
namespace optim = xlite::optim;
using xlite_test::ErrorMessage;
using xlite_test::ExpectClose;

namespace {

void assign(xl::Tensor p, const std::vector<float>& values) {
  xl::NoGradGuard no_grad;
  p.copy_(xl::tensor(values, p.shape()));
}

// y[o][i][j] = bias[o] + sum over c, a, b of w[o][c][a][b] * x[c][i * sh + a - ph][j * sw + b - pw], zero outside x:
// PyTorch's convolution written out, for one sample.
std::vector<double> conv_by_sums(const std::vector<float>& x, const xl::Shape& xs, const std::vector<float>& w,
                                 const xl::Shape& ws, const std::vector<float>& bias, std::vector<int64_t> stride,
                                 std::vector<int64_t> padding) {
  const int64_t channels = xs[1], h = xs[2], wd = xs[3], outs = ws[0], kh = ws[2], kw = ws[3];
  const int64_t oh = (h + 2 * padding[0] - kh) / stride[0] + 1, ow = (wd + 2 * padding[1] - kw) / stride[1] + 1;
  std::vector<double> y;
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double sum = bias[o];
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t r = i * stride[0] + a - padding[0], s = j * stride[1] + b - padding[1];
              if (r < 0 || r >= h || s < 0 || s >= wd) continue;
              sum += w[((o * channels + c) * kh + a) * kw + b] * x[(c * h + r) * wd + s];
            }
        y.push_back(sum);
      }
  return y;
}

std::vector<float> flat_parameters(const nn::Module& m) {
  std::vector<float> values;
  for (const xl::Tensor& p : m.parameters())
    for (float v : p.to_vector<float>()) values.push_back(v);
  return values;
}

void expect_same_values(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << what << ", element " << i;
}

// A small model whose every parameter gets a gradient, made with the same initial values for the same seed.
std::shared_ptr<nn::Sequential> small_model(uint64_t seed) {
  xl::manual_seed(seed);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::UnaryModule>>{
      std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::Tanh>(), std::make_shared<nn::Linear>(8, 2)});
}

}  // namespace

TEST(NnTrainingPatterns, Conv2dWithARectangularKernelMatchesExplicitSums) {
  const xl::Shape xs{1, 2, 3, 5};
  std::vector<float> x;
  for (int i = 0; i < 30; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
  nn::Conv2d conv(2, 3, {1, 3}, {.stride = {1, 2}, .padding = {0, 1}});
  ASSERT_EQ(conv.weight.shape(), (xl::Shape{3, 2, 1, 3}));
  EXPECT_EQ(conv.kernel, (std::vector<int64_t>{1, 3}));
  std::vector<float> w, bias{0.5f, -1.0f, 2.0f};
  for (int i = 0; i < 18; ++i) w.push_back(static_cast<float>(i % 5) * 0.25f - 0.5f);
  assign(conv.weight, w);
  assign(conv.bias, bias);
  xl::Tensor y = conv(xl::tensor(x, xs));
  EXPECT_EQ(y.shape(), (xl::Shape{1, 3, 3, 3}));  // width (5 + 2 - 3) / 2 + 1
  ExpectClose(y.to_vector<float>(), conv_by_sums(x, xs, w, {3, 2, 1, 3}, bias, {1, 2}, {0, 1}));

  nn::Conv2d tall(2, 1, {3, 1}, {.padding = {1}, .bias = false});  // one padding value: both dims
  EXPECT_FALSE(tall.bias.defined());
  std::vector<float> tw{1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -1.0f};
  assign(tall.weight, tw);
  ExpectClose(tall(xl::tensor(x, xs)).to_vector<float>(), conv_by_sums(x, xs, tw, {1, 2, 3, 1}, {0}, {1, 1}, {1, 1}));
}

TEST(NnTrainingPatterns, MaxPool2dAndAvgPool2dTakeRectangularWindows) {
  // 4 x 3: rows of (r, 10 + r, 20 - r).
  std::vector<float> x;
  for (int r = 0; r < 4; ++r)
    for (float v : {static_cast<float>(r), 10.0f + r, 20.0f - r}) x.push_back(v);
  xl::Tensor image = xl::tensor(x, {1, 1, 4, 3});
  nn::MaxPool2d tall({2, 1});  // stride: the kernel, (2, 1)
  EXPECT_EQ(tall.stride, (std::vector<int64_t>{2, 1}));
  xl::Tensor y = tall(image);
  EXPECT_EQ(y.shape(), (xl::Shape{1, 1, 2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 11, 20, 3, 13, 18}));

  // Windows of 1 x 3 every row, the width padded by one zero each side and counted in the mean.
  nn::AvgPool2d wide({1, 3}, {.stride = {1, 3}, .padding = {0, 1}});
  xl::Tensor z = wide(image);
  EXPECT_EQ(z.shape(), (xl::Shape{1, 1, 4, 1}));
  std::vector<double> want;
  for (int r = 0; r < 4; ++r) want.push_back((r + 10.0 + r) / 3);  // (0, x0, x1): the zero, then two elements
  ExpectClose(z.to_vector<float>(), want);
}

TEST(NnTrainingPatterns, TheIntFormsAreTheSquareCase) {
  nn::MaxPool2d square(3, 2, 1);
  EXPECT_EQ(square.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(square.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(square.padding, (std::vector<int64_t>{1, 1}));
  nn::MaxPool2d same({3}, {.stride = {2}, .padding = {1}});
  xl::Tensor x = xl::randn({2, 3, 7, 6});
  EXPECT_EQ(square(x).to_vector<float>(), same(x).to_vector<float>());
  nn::Conv2d conv(3, 4, 3, 2, 1, 1, 1, false);
  EXPECT_EQ(conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.options.stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv.options.padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(conv(x).shape(), (xl::Shape{2, 4, 4, 3}));
}

TEST(NnTrainingPatterns, BadSizesRaiseNamingTheModuleAndTheValues) {
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, {1, 2, 3}); }),
            "[Conv2d] kernel_size must be one or two values >= 1, got [1,2,3]");
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, {3, 0}); }),
            "[Conv2d] kernel_size must be one or two values >= 1, got [3,0]");
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, {3}, {.stride = {1, 0}}); }),
            "[Conv2d] stride must be one or two values >= 1, got [1,0]");
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, {3}, {.padding = {-1}}); }),
            "[Conv2d] padding must be one or two values >= 0, got [-1]");
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, 3, 1, 0, 0); }),
            "[Conv2d] dilation must be one or two values >= 1, got [0]");
  EXPECT_EQ(ErrorMessage([] { nn::Conv2d(1, 1, {3}, {.output_padding = {1}}); }),
            "[Conv2d] output_padding [1] is ConvTranspose2d's");
  EXPECT_EQ(ErrorMessage([] { nn::MaxPool2d(std::vector<int64_t>{}); }),
            "[MaxPool2d] kernel_size must be one or two values >= 1, got []");
  EXPECT_EQ(ErrorMessage([] { nn::MaxPool2d(2, -1); }), "[MaxPool2d] stride must be one or two values >= 1, got [-1]");
  EXPECT_EQ(ErrorMessage([] { nn::AvgPool2d({2, 4}, {.padding = {1, 3}}); }),
            "[AvgPool2d] padding [1,3] must be at most half the kernel_size [2,4]");
  EXPECT_EQ(ErrorMessage([] { nn::AvgPool2d({2, 2}, {.stride = {1, 1, 1}}); }),
            "[AvgPool2d] stride must be one or two values >= 1, got [1,1,1]");
}

TEST(NnTrainingPatterns, ZeroGradDropsGradientsByDefaultOrZeroesThemInPlace) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
  optim::SGD sgd({w}, 0.1);
  (w * w).sum().backward();
  xl::Tensor kept = w.grad();
  sgd.zero_grad(false);
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().impl(), kept.impl()) << "zeroed in place, the same tensor";
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{0, 0}));
  sgd.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  (w * 3.0f).sum().backward();  // written afresh, not added to the old gradient
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(NnTrainingPatterns, EveryOptimizerSkipsAParameterWithoutAGradient) {
  auto check = [](const char* name, auto make) {
    xl::Tensor used = xl::tensor(std::vector<float>{1, -2}).requires_grad_();
    xl::Tensor unused = xl::tensor(std::vector<float>{3, 4}).requires_grad_();
    auto opt = make(std::vector<xl::Tensor>{used, unused});
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      (used * used).sum().backward();
      opt.step();
    }
    EXPECT_FALSE(unused.grad().defined()) << name;
    EXPECT_EQ(unused.to_vector<float>(), (std::vector<float>{3, 4})) << name << ": weight decay or momentum moved it";
    EXPECT_NE(used.to_vector<float>(), (std::vector<float>{1, -2})) << name;
  };
  // Weight decay and momentum would move a parameter whose gradient were taken as zero.
  check("SGD", [](std::vector<xl::Tensor> p) { return optim::SGD(p, 0.1, {0.9, 0, 0.1, false}); });
  check("Adam", [](std::vector<xl::Tensor> p) { return optim::Adam(p, 0.1, {0.9, 0.999, 1e-8, 0.1}); });
  check("AdamW", [](std::vector<xl::Tensor> p) { return optim::AdamW(p, 0.1); });
  check("RMSprop", [](std::vector<xl::Tensor> p) { return optim::RMSprop(p, 0.1, {0.99, 1e-8, 0.1, 0.9, true}); });
  check("Adagrad", [](std::vector<xl::Tensor> p) { return optim::Adagrad(p, 0.1, {0, 0.1, 0, 1e-10}); });
  check("Lion", [](std::vector<xl::Tensor> p) { return optim::Lion(p, 0.1, {0.9, 0.99, 0.1}); });
}

TEST(NnTrainingPatterns, CompiledStepWithZeroGradMatchesTheUncompiledLoop) {
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    xl::manual_seed(3);
    xl::Tensor x = xl::randn({8, 4});
    xl::Tensor y = xl::randn({8, 2});
    xl::sync();
    auto train = [&](bool compiled) {
      auto model = small_model(21);
      optim::Adam opt(model->parameters(), 0.05);
      auto body = [&](const xl::Tensor& xs, const xl::Tensor& ys) {
        opt.zero_grad();  // set_to_none
        xl::Tensor loss = nn::mse_loss(model->forward(xs), ys);
        loss.backward();
        opt.step();
        return loss;
      };
      auto step = xl::compile(body);
      std::vector<float> losses;
      for (int i = 0; i < 5; ++i) {
        losses.push_back((compiled ? step(x, y) : body(x, y)).item<float>());
        // Traces: Adam's zero states share one buffer until the first step, then two agreeing traces.
        if (compiled && i >= 3) {
          EXPECT_TRUE(step.last_call().replayed) << i << ": " << step.last_call().trace_reason;
        }
      }
      std::vector<float> grads;
      for (const xl::Tensor& p : model->parameters())
        for (float v : p.grad().to_vector<float>()) grads.push_back(v);
      return std::tuple{flat_parameters(*model), losses, grads};
    };
    auto [weights, losses, grads] = train(true);
    auto [want_weights, want_losses, want_grads] = train(false);
    expect_same_values(losses, want_losses, 1e-5, "losses");
    expect_same_values(weights, want_weights, 1e-5, "parameters");
    expect_same_values(grads, want_grads, 1e-5, "gradients of the last step");
    EXPECT_LT(losses.back(), losses.front());
  }
}

TEST(NnTrainingPatterns, ACompiledStepThatDropsGradientsAtItsEndLeavesThemDroppedWhenReplayed) {
  auto model = small_model(5);
  optim::SGD opt(model->parameters(), 0.1);
  xl::Tensor x = xl::randn({8, 4});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& xs) {
    xl::Tensor loss = model->forward(xs).sum();
    loss.backward();
    opt.step();
    opt.zero_grad();
    return loss;
  });
  for (int i = 0; i < 4; ++i) {
    step(x);
    for (const xl::Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined()) << "call " << i;
  }
  EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
}

// A step that adds to the gradients (no zero_grad inside), with the caller dropping them before some calls
// only: a replay must see whether each call starts with gradients.
TEST(NnTrainingPatterns, GradientsDroppedBetweenCompiledCallsAreSeen) {
  auto run = [](bool compiled) {
    auto model = small_model(9);
    optim::SGD opt(model->parameters(), 0.05);
    xl::manual_seed(1);
    xl::Tensor x = xl::randn({8, 4});
    xl::sync();
    auto body = [&](const xl::Tensor& xs) {
      xl::Tensor out = model->forward(xs);
      xl::Tensor loss = (out * out).sum() * (1.0 / 16);
      loss.backward();
      opt.step();
      return loss;
    };
    auto step = xl::compile(body);
    std::vector<float> losses;
    for (int i = 0; i < 8; ++i) {
      if (i % 3 == 0) opt.zero_grad();
      losses.push_back((compiled ? step(x) : body(x)).item<float>());
    }
    return std::pair{flat_parameters(*model), losses};
  };
  auto [weights, losses] = run(true);
  auto [want_weights, want_losses] = run(false);
  expect_same_values(losses, want_losses, 1e-5, "losses");
  expect_same_values(weights, want_weights, 1e-5, "parameters");
}

// fn looks at the gradient before it drops it, so its graph depends on whether there is one at the call.
TEST(NnTrainingPatterns, AStepThatReadsAGradientBeforeDroppingItDependsOnIt) {
  auto run = [](bool compiled) {
    xl::Tensor w = xl::tensor(std::vector<float>{1, 2}).requires_grad_();
    xl::sync();
    auto body = [&] {
      xl::Tensor g = w.grad();
      xl::Tensor out = g.defined() ? w.detach() * 2.0f + g : w.detach() * 3.0f;
      w.reset_grad();
      return out;
    };
    auto step = xl::compile(body);
    std::vector<float> got;
    for (int i = 0; i < 8; ++i) {
      if (i % 4 < 2) (w * w * static_cast<float>(i + 1)).sum().backward();
      for (float v : (compiled ? step() : body()).to_vector<float>()) got.push_back(v);
      EXPECT_FALSE(w.grad().defined()) << i;
    }
    return got;
  };
  EXPECT_EQ(run(true), run(false));
}

// Four micro-batches of four rows, each loss scaled by 1/4 and its gradient added to the last, then one step:
// the same update as one step on the mean loss of the whole batch.
TEST(NnTrainingPatterns, MicroBatchAccumulationInOneCompiledStepMatchesOneFullBatchStep) {
  constexpr int64_t kMicroBatches = 4, kRows = 4;
  xl::manual_seed(2);
  xl::Tensor x = xl::randn({kMicroBatches * kRows, 4});
  xl::Tensor y = xl::randn({kMicroBatches * kRows, 2});
  xl::sync();

  // SGD keeps no state, so the first two traces agree and the third call replays.
  auto accumulated = [&](bool compiled) {
    auto model = small_model(13);
    optim::SGD opt(model->parameters(), 0.1);
    auto body = [&](const xl::Tensor& xs, const xl::Tensor& ys) {
      opt.zero_grad();
      xl::Tensor total = xl::zeros(xl::Shape{});
      for (int64_t m = 0; m < kMicroBatches; ++m) {
        xl::Tensor part = nn::mse_loss(model->forward(xl::slice(xs, 0, m * kRows, (m + 1) * kRows)),
                                       xl::slice(ys, 0, m * kRows, (m + 1) * kRows)) *
                          (1.0 / kMicroBatches);
        part.backward();
        total = total + part.detach();
      }
      opt.step();
      return total;
    };
    auto step = xl::compile(body);
    for (int i = 0; i < 3; ++i) {
      if (compiled) {
        step(x, y);
      } else {
        body(x, y);
      }
    }
    if (compiled) {
      EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
    }
    return flat_parameters(*model);
  };

  auto full_batch = [&] {
    auto model = small_model(13);
    optim::SGD opt(model->parameters(), 0.1);
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      nn::mse_loss(model->forward(x), y).backward();
      opt.step();
    }
    return flat_parameters(*model);
  };

  std::vector<float> compiled = accumulated(true);
  expect_same_values(compiled, accumulated(false), 1e-5, "compiled against uncompiled");
  expect_same_values(compiled, full_batch(), 1e-5, "micro-batches against the full batch");
  EXPECT_NE(compiled, flat_parameters(*small_model(13))) << "the steps moved the parameters";
}
