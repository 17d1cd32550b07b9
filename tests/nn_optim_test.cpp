// Modules, losses and optimizers: known values, gradients, and a small training loop that compiles
// each distinct program once.
#include <gtest/gtest.h>

#include <cmath>
#include <xlite/xlite.h>

namespace xl = xlite;
namespace nn = xlite::nn;
namespace optim = xlite::optim;

TEST(NnModule, NamedParametersStateDictAndTrainMode) {
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Linear>(4, 3));
  model->push_back(std::make_shared<nn::Dropout>(0.5));
  model->push_back(std::make_shared<nn::LayerNorm>(3));
  auto named = model->named_parameters();
  ASSERT_EQ(named.size(), 4u);
  EXPECT_EQ(named[0].first, "0.weight");
  EXPECT_EQ(named[1].first, "0.bias");
  EXPECT_EQ(named[2].first, "2.weight");
  EXPECT_EQ(named[0].second.shape(), (xl::Shape{3, 4}));
  for (const auto& p : model->parameters()) EXPECT_TRUE(p.requires_grad());

  auto state = model->state_dict();
  auto other = std::make_shared<nn::Sequential>();
  other->push_back(std::make_shared<nn::Linear>(4, 3));
  other->push_back(std::make_shared<nn::Dropout>(0.5));
  other->push_back(std::make_shared<nn::LayerNorm>(3));
  other->load_state_dict(state);
  EXPECT_EQ(other->named_parameters()[0].second.to_vector<float>(), named[0].second.to_vector<float>());
  EXPECT_THROW(other->load_state_dict({{"0.weight", xl::zeros({2, 2})}}, false), xl::Error);  // shape
  EXPECT_THROW(other->load_state_dict({{"0.weight", xl::zeros({3, 4})}}), xl::Error);         // strict: missing

  model->eval();
  auto x = xl::randn({2, 4});
  EXPECT_EQ(model->forward(x).to_vector<float>(), model->forward(x).to_vector<float>());  // no dropout in eval
  EXPECT_FALSE(model->is_training());
}

TEST(NnModule, LinearAndNormsMatchTheirFormulas) {
  nn::Linear linear(2, 1);
  linear.weight.copy_(xl::tensor(std::vector<float>{2, -1}, {1, 2}));
  linear.bias.copy_(xl::tensor(std::vector<float>{0.5f}));
  EXPECT_EQ(linear(xl::tensor(std::vector<float>{1, 3}, {1, 2})).to_vector<float>(), (std::vector<float>{-0.5f}));

  nn::LayerNorm ln(4);
  auto y = ln(xl::tensor(std::vector<float>{1, 2, 3, 4}, {1, 4})).to_vector<float>();
  double sd = std::sqrt(1.25 + 1e-5);
  EXPECT_NEAR(y[0], -1.5 / sd, 1e-5);
  EXPECT_NEAR(y[3], 1.5 / sd, 1e-5);

  nn::RMSNorm rms(2);
  auto r = rms(xl::tensor(std::vector<float>{3, 4}, {1, 2})).to_vector<float>();
  EXPECT_NEAR(r[0], 3 / std::sqrt(12.5 + 1e-6), 1e-5);

  nn::Dropout dropout(0.25);
  auto kept = dropout(xl::ones({10000})).to_vector<float>();
  int zeros = 0;
  for (float v : kept) {
    if (v == 0) ++zeros;
    else EXPECT_NEAR(v, 1 / 0.75, 1e-6);
  }
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.03);
}

TEST(NnModule, CausalAttentionIgnoresTheFuture) {
  xl::manual_seed(1);
  nn::CausalSelfAttention attention(8, 2);
  auto x = xl::randn({1, 5, 8});
  auto changed = xl::concat({xl::slice(x, 1, 0, 3), xl::randn({1, 2, 8})}, 1);  // same first 3 positions
  auto a = attention(x).to_vector<float>();
  auto b = attention(changed).to_vector<float>();
  for (int i = 0; i < 3 * 8; ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
  EXPECT_GT(std::fabs(a[4 * 8] - b[4 * 8]), 1e-6);
  EXPECT_THROW(nn::CausalSelfAttention(6, 4), xl::Error);
}

TEST(NnLoss, CrossEntropyKnownValuesIgnoreIndexAndSmoothing) {
  auto logits = xl::tensor(std::vector<float>{2, 1, 0, 0, 0, 3}, {2, 3});
  auto target = xl::tensor(std::vector<int64_t>{0, 2});
  double l0 = -std::log(std::exp(2.0) / (std::exp(2.0) + std::exp(1.0) + 1));
  double l1 = -std::log(std::exp(3.0) / (2 + std::exp(3.0)));
  EXPECT_NEAR(nn::cross_entropy(logits, target).item<float>(), (l0 + l1) / 2, 1e-6);
  EXPECT_NEAR(nn::cross_entropy(logits, xl::tensor(std::vector<int64_t>{0, -100})).item<float>(), l0, 1e-6);
  // Label smoothing 0.3: 0.7 * nll + 0.3 * mean over classes of -log p.
  auto logp = xl::log_softmax(logits, -1).to_vector<float>();
  double u0 = -(logp[0] + logp[1] + logp[2]) / 3, u1 = -(logp[3] + logp[4] + logp[5]) / 3;
  EXPECT_NEAR(nn::cross_entropy(logits, target, -100, 0.3).item<float>(), 0.7 * (l0 + l1) / 2 + 0.3 * (u0 + u1) / 2, 1e-6);
  EXPECT_NEAR(nn::mse_loss(xl::tensor(std::vector<float>{1, 2}), xl::tensor(std::vector<float>{0, 4})).item<float>(), 2.5, 1e-6);
  EXPECT_THROW(nn::cross_entropy(logits, xl::tensor(std::vector<int64_t>{0})), xl::Error);
  // Class indices only: a float target would be truncated to a class without a word.
  for (auto bad : {xl::tensor(std::vector<float>{0, 2}), xl::tensor(std::vector<uint8_t>{0, 1}).to(xl::DType::bool_)}) {
    try {
      nn::cross_entropy(logits, bad);
      ADD_FAILURE() << "no error for a " << xl::dtype_name(bad.dtype()) << " target";
    } catch (const xl::Error& e) {
      EXPECT_NE(std::string(e.what()).find("[cross_entropy] target must hold class indices"), std::string::npos) << e.what();
    }
    EXPECT_THROW(nn::nll_loss(xl::log_softmax(logits, -1), bad), xl::Error);
  }
  EXPECT_NEAR(nn::cross_entropy(logits, xl::tensor(std::vector<int32_t>{0, 2})).item<float>(), (l0 + l1) / 2, 1e-6);
}

TEST(NnLoss, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  auto logits = xl::tensor(std::vector<double>{0.5, -1, 2, 0, 1, 1}, {2, 3}).requires_grad_();
  auto target = xl::tensor(std::vector<int64_t>{2, 0});
  nn::cross_entropy(logits, target).backward();
  auto p = xl::softmax(logits.detach(), -1).to_vector<double>();
  auto g = logits.grad().to_vector<double>();
  std::vector<double> want = {p[0] / 2, p[1] / 2, (p[2] - 1) / 2, (p[3] - 1) / 2, p[4] / 2, p[5] / 2};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(g[i], want[i], 1e-12) << i;
}

TEST(Optim, SgdWithMomentumFollowsTheRecurrence) {
  auto w = xl::tensor(std::vector<double>{1.0}).requires_grad_();
  optim::SGD sgd({w}, 0.1, {0.9, 0, 0, false});
  // f(w) = w^2: g = 2w; v1 = g1, w1 = w0 - 0.1 v1; v2 = 0.9 v1 + g2, ...
  double ww = 1.0, v = 0;
  for (int step = 0; step < 4; ++step) {
    sgd.zero_grad();
    (w * w).sum().backward();
    sgd.step();
    xl::sync();
    double g = 2 * ww;
    v = step == 0 ? g : 0.9 * v + g;
    ww -= 0.1 * v;
    EXPECT_NEAR(w.item<double>(), ww, 1e-12) << "step " << step;
  }
}

TEST(Optim, AdamFirstStepMovesByTheLearningRate) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::Adam adam({w}, 0.01);
  (w * w * 3.0).sum().backward();
  adam.step();
  auto v = w.to_vector<double>();
  EXPECT_NEAR(v[0], 0.99, 1e-7);  // bias-corrected first step = lr * sign(g)
  EXPECT_NEAR(v[1], -1.99, 1e-7);
  auto decayed = xl::tensor(std::vector<double>{1.0}).requires_grad_();
  optim::AdamW adamw({decayed}, 0.1, {0.9, 0.999, 1e-8, 0.5});
  (decayed * 0.0).sum().backward();  // zero gradient: only the decoupled decay moves it
  adamw.step();
  EXPECT_NEAR(decayed.item<double>(), 1.0 - 0.1 * 0.5, 1e-9);
}

TEST(Optim, ScheduleAndClipping) {
  EXPECT_NEAR(optim::warmup_cosine_lr(0, 10, 110, 1.0), 0.1, 1e-12);
  EXPECT_NEAR(optim::warmup_cosine_lr(9, 10, 110, 1.0), 1.0, 1e-12);
  EXPECT_NEAR(optim::warmup_cosine_lr(60, 10, 110, 1.0, 0.0), 0.5, 1e-12);
  EXPECT_NEAR(optim::warmup_cosine_lr(200, 10, 110, 1.0, 0.1), 0.1, 1e-12);
  auto w = xl::tensor(std::vector<float>{3, 4}).requires_grad_();
  (w * w * 0.5).sum().backward();  // grad = w, norm 5
  auto norm = optim::clip_grad_norm_({w}, 1.0);
  EXPECT_NEAR(norm.item<float>(), 5.0f, 1e-5);
  auto g = w.grad().to_vector<float>();
  EXPECT_NEAR(g[0], 0.6f, 1e-5);
  EXPECT_NEAR(g[1], 0.8f, 1e-5);
}

TEST(Optim, TrainingLoopLearnsAndCompilesEachProgramOnce) {
  xl::manual_seed(0);
  nn::Sequential model({std::make_shared<nn::Linear>(2, 16), std::make_shared<nn::Linear>(16, 2)});
  optim::AdamW opt(model.parameters(), 0.05);
  // Two separable blobs.
  auto x = xl::concat({xl::randn({32, 2}) + 2.0, xl::randn({32, 2}) - 2.0});
  auto y = xl::concat({xl::zeros({32}, xl::DType::i64), xl::ones({32}, xl::DType::i64)});
  xl::sync();
  float first = 0, last = 0;
  int64_t compiles_after_warmup = 0;
  for (int step = 0; step < 60; ++step) {
    opt.zero_grad();
    auto loss = nn::cross_entropy(model(x), y);
    loss.backward();
    opt.set_lr(optim::warmup_cosine_lr(step, 5, 60, 0.05));
    opt.step();
    xl::sync();
    if (step == 0) first = loss.item<float>();
    if (step == 59) last = loss.item<float>();
    if (step == 3) compiles_after_warmup = xl::metrics::counter_value("UncachedCompile");
  }
  EXPECT_LT(last, first * 0.2f);
  EXPECT_EQ(xl::metrics::counter_value("UncachedCompile"), compiles_after_warmup);  // no recompiles
}

TEST(NnModule, PoolingKnownValuesAndGradients) {
  auto x = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  EXPECT_EQ(xl::max_pool2d(x, {2}).to_vector<float>(), (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(xl::avg_pool2d(x, {2}).to_vector<float>(), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
  EXPECT_EQ(xl::max_pool2d(x, {3}, {1}).shape(), (xl::Shape{1, 1, 2, 2}));
  EXPECT_EQ(xl::max_pool2d(x, {2}, {2}, {1}).to_vector<float>(), (std::vector<float>{1, 3, 4, 9, 11, 12, 13, 15, 16}));
  EXPECT_THROW(xl::max_pool2d(x, {5}), xl::Error);
  auto w = x.detach().requires_grad_();
  xl::max_pool2d(w, {2}).sum().backward();
  auto g = w.grad().to_vector<float>();
  EXPECT_EQ(g[5], 1.0f);   // the max of the first window
  EXPECT_EQ(g[0], 0.0f);
}

TEST(NnModule, SmallCnnLearns) {
  xl::manual_seed(2);
  nn::Sequential cnn({std::make_shared<nn::Conv2d>(1, 4, 3, 1, 1), std::make_shared<nn::ReLU>(),
                      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
                      std::make_shared<nn::Linear>(4 * 2 * 2, 2)});
  // Class 0: bright top half; class 1: bright bottom half.
  auto top = xl::concat({xl::ones({8, 1, 2, 4}), xl::zeros({8, 1, 2, 4})}, 2) + xl::randn({8, 1, 4, 4}) * 0.1;
  auto bottom = xl::concat({xl::zeros({8, 1, 2, 4}), xl::ones({8, 1, 2, 4})}, 2) + xl::randn({8, 1, 4, 4}) * 0.1;
  auto x = xl::concat({top, bottom});
  auto y = xl::concat({xl::zeros({8}, xl::DType::i64), xl::ones({8}, xl::DType::i64)});
  xl::optim::Adam opt(cnn.parameters(), 0.05);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    auto loss = nn::cross_entropy(cnn(x), y);
    loss.backward();
    opt.step();
    xl::sync();
    (step == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first * 0.2f);
}
