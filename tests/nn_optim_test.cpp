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
  {
    xl::NoGradGuard no_grad;  // parameters are leaves that require grad: set them as PyTorch code does
    linear.weight.copy_(xl::tensor(std::vector<float>{2, -1}, {1, 2}));
    linear.bias.copy_(xl::tensor(std::vector<float>{0.5f}));
  }
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
    if (v == 0)
      ++zeros;
    else
      EXPECT_NEAR(v, 1 / 0.75, 1e-6);
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

// The module runs the fused attention kernel; its output and its parameters' gradients are those of the
// attention written in ops (scores, causal mask, softmax, weighted values), as PyTorch's module and SDPA agree.
TEST(NnModule, CausalAttentionMatchesTheCompositeWithGradients) {
  xl::manual_seed(3);
  const int64_t b = 2, t = 7, d = 12, heads = 3, dh = d / heads;
  nn::CausalSelfAttention attention(d, heads);
  auto x = xl::randn({b, t, d});
  auto composite = [&](const xl::Tensor& in) {
    auto parts = xl::split(attention.qkv->forward(in), d, -1);
    auto heads_first = [&](const xl::Tensor& p) { return xl::transpose(xl::reshape(p, {b, t, heads, dh}), 1, 2); };
    auto scores = xl::matmul(heads_first(parts[0]), xl::transpose(heads_first(parts[1]), -1, -2)) /
                  std::sqrt(static_cast<float>(dh));
    auto visible = xl::tril(xl::ones({t, t}, xl::DType::bool_));
    auto weights = xl::softmax(xl::where(visible, scores, -INFINITY), -1);
    auto y = xl::reshape(xl::transpose(xl::matmul(weights, heads_first(parts[2])), 1, 2), {b, t, d});
    return attention.proj->forward(y);
  };
  auto probe = xl::randn({b, t, d});
  auto gradients = [&](const xl::Tensor& out) {
    for (auto p : attention.parameters()) p.reset_grad();
    xl::sum(out * probe).backward();
    std::vector<std::vector<float>> g;
    for (auto p : attention.parameters()) g.push_back(p.grad().to_vector<float>());
    return g;
  };
  auto fused = attention(x);
  auto want = composite(x);
  auto got_values = fused.to_vector<float>(), want_values = want.to_vector<float>();
  for (size_t i = 0; i < want_values.size(); ++i) ASSERT_NEAR(got_values[i], want_values[i], 1e-5) << i;
  auto got_grads = gradients(attention(x)), want_grads = gradients(composite(x));
  ASSERT_EQ(got_grads.size(), 4u);  // qkv and proj, weight and bias
  for (size_t p = 0; p < got_grads.size(); ++p)
    for (size_t i = 0; i < got_grads[p].size(); ++i)
      ASSERT_NEAR(got_grads[p][i], want_grads[p][i], 1e-4 * (1 + std::fabs(want_grads[p][i]))) << p << " " << i;
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
  EXPECT_NEAR(nn::cross_entropy(logits, target, -100, 0.3).item<float>(), 0.7 * (l0 + l1) / 2 + 0.3 * (u0 + u1) / 2,
              1e-6);
  EXPECT_NEAR(nn::mse_loss(xl::tensor(std::vector<float>{1, 2}), xl::tensor(std::vector<float>{0, 4})).item<float>(),
              2.5, 1e-6);
  EXPECT_THROW(nn::cross_entropy(logits, xl::tensor(std::vector<int64_t>{0})), xl::Error);
  // Class indices only: a float target would be truncated to a class without a word.
  for (auto bad : {xl::tensor(std::vector<float>{0, 2}), xl::tensor(std::vector<uint8_t>{0, 1}).to(xl::DType::bool_)}) {
    try {
      nn::cross_entropy(logits, bad);
      ADD_FAILURE() << "no error for a " << xl::dtype_name(bad.dtype()) << " target";
    } catch (const xl::Error& e) {
      EXPECT_NE(std::string(e.what()).find("[cross_entropy] target must hold class indices"), std::string::npos)
          << e.what();
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

namespace {
// Three steps of opt on f(w) = sum(c * w^2) (gradient 2 c w), from w = {1, -2} with c = {1, 3}; after each
// step w must equal the row of `want` (computed by hand, or by PyTorch's update rules in plain Python).
template <class Opt>
void expect_three_steps(Opt& opt, xl::Tensor& w, const std::vector<std::vector<double>>& want,
                        double tolerance = 1e-12) {
  auto c = xl::tensor(std::vector<double>{1.0, 3.0});
  for (size_t step = 0; step < want.size(); ++step) {
    opt.zero_grad();
    (w * w * c).sum().backward();
    opt.step();
    xl::sync();
    auto got = w.to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[step][i], tolerance) << "step " << step << ", element " << i;
  }
}
}  // namespace

TEST(Optim, SgdNesterovFollowsTheRecurrence) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::SGD sgd({w}, 0.1, {0.9, 0, 0, true});
  // buf_1 = g_1, buf_t = 0.9 buf_{t-1} + g_t; w -= 0.1 (g_t + 0.9 buf_t).
  // Element 0: g = 2, buf = 2, w = 1 - 0.1 * 3.8 = 0.62; g = 1.24, buf = 3.04, w = 0.62 - 0.3976 = 0.2224;
  //            g = 0.4448, buf = 3.1808, w = 0.2224 - 0.330752 = -0.108352.
  expect_three_steps(sgd, w, {{0.62, 0.28}, {0.2224, 0.9328}, {-0.108352, 0.608128}});
  EXPECT_THROW(optim::SGD({w}, 0.1, {0, 0, 0, true}), xl::Error);      // nesterov without momentum
  EXPECT_THROW(optim::SGD({w}, 0.1, {0.9, 0.1, 0, true}), xl::Error);  // nesterov with dampening
}

TEST(Optim, SgdWeightDecayAddsToTheGradient) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::SGD sgd({w}, 0.1, {0, 0, 0.1, false});
  // d = g + 0.1 w; w -= 0.1 d. Element 0: 1 - 0.1 * 2.1 = 0.79; element 1: -2 - 0.1 * (-12.2) = -0.78.
  expect_three_steps(sgd, w, {{0.79, -0.78}, {0.6241, -0.3042}, {0.493039, -0.118638}});
}

TEST(Optim, SgdDampeningSkipsTheFirstStep) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::SGD sgd({w}, 0.1, {0.9, 0.5, 0.1, false});
  // Like PyTorch: buf_1 = d_1 (no dampening), buf_t = 0.9 buf_{t-1} + 0.5 d_t, d = g + 0.1 w; w -= 0.1 buf.
  // Element 0: d = 2.1, w = 0.79; d = 1.659, buf = 1.89 + 0.8295 = 2.7195, w = 0.51805; ...
  expect_three_steps(sgd, w, {{0.79, -0.78}, {0.51805, 0.5559}, {0.21889975, 1.5886605}});
}

TEST(Optim, AdamBiasCorrectionAddsEpsAfterTheSquareRoot) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::Adam adam({w}, 0.1, {0.9, 0.999, 0.5, 0});
  // Step 1: m_hat = g, v_hat = g^2, so the update is lr * g / (|g| + eps): 0.1 * 2 / 2.5 = 0.08 and
  // 0.1 * -12 / 12.5 = -0.096. Steps 2 and 3 from PyTorch's rule (eps added to sqrt(v_hat)).
  expect_three_steps(
      adam, w, {{0.92, -1.904}, {0.8408882995653922, -1.8082450878878131}, {0.7628760716160647, -1.712850505508721}});
}

TEST(Optim, AdamWeightDecayIsCoupledAndAdamWDecayIsDecoupled) {
  auto w = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::Adam adam({w}, 0.1, {0.9, 0.999, 1e-8, 0.5});
  // Adam: g += 0.5 w before the moments (L2); the first step is still lr * sign(g + 0.5 w).
  expect_three_steps(adam, w,
                     {{0.9000000004, -1.900000000076923},
                      {0.8004122284876838, -1.8001664857658146},
                      {0.7015862726343534, -1.7006233915164009}},
                     1e-10);
  auto v = xl::tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::AdamW adamw({v}, 0.1, {0.9, 0.999, 1e-8, 0.5});
  // AdamW: w *= 1 - lr * 0.5 first, then the plain Adam update: 1 * 0.95 - 0.1 = 0.85, -2 * 0.95 + 0.1 = -1.8.
  expect_three_steps(adamw, v,
                     {{0.8500000005, -1.8000000000833332},
                      {0.7082484433597453, -1.6104122278374124},
                      {0.5749739307415968, -1.431025243169833}},
                     1e-10);
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
  EXPECT_EQ(g[5], 1.0f);  // the max of the first window
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

namespace {
// A module with a buffer next to a child's parameters, like a norm layer's running statistics.
struct Counted : nn::UnaryModule {
  Counted() {
    lin = register_module("lin", std::make_shared<nn::Linear>(2, 2));
    running = register_buffer("running", xl::tensor(std::vector<float>{1, 2, 3}));
  }
  xl::Tensor forward(const xl::Tensor& x) override { return lin->forward(x); }
  std::shared_ptr<nn::Linear> lin;
  xl::Tensor running;
};
}  // namespace

TEST(NnModule, BuffersAreNamedSavedAndLoadedButNotParameters) {
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::ReLU>());
  auto counted = std::make_shared<Counted>();
  model->push_back(counted);
  auto buffers = model->named_buffers();
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].first, "1.running");
  EXPECT_EQ(buffers[0].second.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_FALSE(buffers[0].second.requires_grad());
  EXPECT_EQ(model->parameters().size(), 2u);  // lin.weight and lin.bias only
  for (const auto& [name, p] : model->named_parameters()) EXPECT_NE(name, "1.running");

  auto state = model->state_dict();
  ASSERT_EQ(state.size(), 3u);
  ASSERT_EQ(state.count("1.running"), 1u);
  EXPECT_EQ(state.at("1.running").to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(state.count("1.lin.weight"), 1u);

  // load_state_dict writes into the module's own buffer tensor.
  auto restored = state;
  restored["1.running"] = xl::tensor(std::vector<float>{7, 8, 9});
  model->load_state_dict(restored);
  EXPECT_EQ(counted->running.to_vector<float>(), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(model->named_buffers()[0].second.to_vector<float>(), (std::vector<float>{7, 8, 9}));

  // A buffer of the wrong shape raises before anything changes, parameters included.
  std::vector<float> weight_before = counted->lin->weight.to_vector<float>();
  auto bad = state;
  bad["1.lin.weight"] = xl::zeros({2, 2});
  bad["1.running"] = xl::zeros({2});
  EXPECT_THROW(model->load_state_dict(bad), xl::Error);
  EXPECT_EQ(counted->lin->weight.to_vector<float>(), weight_before);
  EXPECT_EQ(counted->running.to_vector<float>(), (std::vector<float>{7, 8, 9}));
  // Strict: a missing buffer raises; non-strict loads what is there.
  auto missing = state;
  missing.erase("1.running");
  EXPECT_THROW(model->load_state_dict(missing), xl::Error);
  model->load_state_dict({{"1.running", xl::tensor(std::vector<float>{4, 5, 6})}}, false);
  EXPECT_EQ(counted->running.to_vector<float>(), (std::vector<float>{4, 5, 6}));
}

TEST(NnModule, EmbeddingLooksUpRowsAndAccumulatesRepeatedGradients) {
  nn::Embedding emb(4, 2);
  EXPECT_EQ(emb.weight.shape(), (xl::Shape{4, 2}));
  EXPECT_TRUE(emb.weight.requires_grad());
  {
    xl::NoGradGuard no_grad;
    emb.weight.copy_(xl::tensor(std::vector<float>{0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}));
  }
  auto indices = xl::tensor(std::vector<int64_t>{2, 0, 2, 3, 2, 0}, {2, 3});
  auto y = emb(indices);
  EXPECT_EQ(y.shape(), (xl::Shape{2, 3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{20, 21, 0, 1, 20, 21, 30, 31, 20, 21, 0, 1}));
  // d sum(y * k) / d weight: each row gets the sum of k over the places that picked it.
  std::vector<float> k(12);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i + 1);
  (emb(indices) * xl::tensor(k, {2, 3, 2})).sum().backward();
  // Row 0: positions 1, 5 -> (3 + 11, 4 + 12); row 1: never; row 2: positions 0, 2, 4 -> (1 + 5 + 9, 2 + 6 + 10);
  // row 3: position 3 -> (7, 8).
  EXPECT_EQ(emb.weight.grad().to_vector<float>(), (std::vector<float>{14, 16, 0, 0, 15, 18, 7, 8}));
  EXPECT_THROW(emb(xl::tensor(std::vector<int64_t>{1, 4})).to_vector<float>(), xl::Error);   // past the table
  EXPECT_THROW(emb(xl::tensor(std::vector<int64_t>{-1, 0})).to_vector<float>(), xl::Error);  // negative
  EXPECT_THROW(emb(xl::tensor(std::vector<float>{1})), xl::Error);                           // not an index
}

TEST(NnLoss, NllLossKnownValuesIgnoreIndexAndGradient) {
  auto logp = xl::tensor(std::vector<double>{-0.5, -1.0, -2.0, -3.0, -0.25, -1.5, -0.75, -4.0, -0.125}, {3, 3});
  auto target = xl::tensor(std::vector<int64_t>{0, 2, 1});
  EXPECT_NEAR(nn::nll_loss(logp, target).item<double>(), (0.5 + 1.5 + 4.0) / 3, 1e-12);
  // Ignored rows count neither in the sum nor in the mean.
  EXPECT_NEAR(nn::nll_loss(logp, xl::tensor(std::vector<int64_t>{0, -100, 1})).item<double>(), (0.5 + 4.0) / 2, 1e-12);
  EXPECT_NEAR(nn::nll_loss(logp, xl::tensor(std::vector<int64_t>{0, 1, 1}), 1).item<double>(), 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(nn::nll_loss(logp, xl::tensor(std::vector<int64_t>{-100, -100, -100})).item<double>()))
      << "all ignored: nan, as PyTorch";
  // Gradient: -1 / count at each counted target, 0 elsewhere.
  auto x = logp.detach().requires_grad_();
  nn::nll_loss(x, xl::tensor(std::vector<int64_t>{2, -100, 0})).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, -0.5, 0, 0, 0, -0.5, 0, 0}));
  EXPECT_THROW(nn::nll_loss(logp, xl::tensor(std::vector<int64_t>{0, 1})), xl::Error);                 // N differs
  EXPECT_THROW(nn::nll_loss(xl::reshape(logp, {9}), xl::tensor(std::vector<int64_t>{0})), xl::Error);  // not [N, C]
  EXPECT_THROW(nn::nll_loss(logp, xl::tensor(std::vector<int64_t>{0, 3, 1})).item<double>(),
               xl::Error);  // class 3 of 3
}

TEST(NnModule, MlpIsLinearGeluTanhLinear) {
  nn::MLP mlp(2, 3);
  auto named = mlp.named_parameters();
  ASSERT_EQ(named.size(), 4u);
  EXPECT_EQ(named[0].first, "fc.weight");
  EXPECT_EQ(named[0].second.shape(), (xl::Shape{3, 2}));
  EXPECT_EQ(named[2].first, "proj.weight");
  EXPECT_EQ(named[2].second.shape(), (xl::Shape{2, 3}));
  std::vector<float> w1 = {0.5f, -1.0f, 1.5f, 0.25f, -0.75f, 2.0f}, b1 = {0.1f, -0.2f, 0.3f};
  std::vector<float> w2 = {1.0f, -0.5f, 0.25f, -1.25f, 0.75f, 0.5f}, b2 = {0.05f, -0.15f};
  {
    xl::NoGradGuard no_grad;
    mlp.fc->weight.copy_(xl::tensor(w1, {3, 2}));
    mlp.fc->bias.copy_(xl::tensor(b1));
    mlp.proj->weight.copy_(xl::tensor(w2, {2, 3}));
    mlp.proj->bias.copy_(xl::tensor(b2));
  }
  std::vector<float> x = {1.0f, 2.0f, -0.5f, 0.75f};
  auto y = mlp(xl::tensor(x, {2, 1, 2}));
  EXPECT_EQ(y.shape(), (xl::Shape{2, 1, 2}));
  auto got = y.to_vector<float>();
  auto gelu_tanh = [](double v) { return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); };
  for (int row = 0; row < 2; ++row) {
    double h[3];
    for (int j = 0; j < 3; ++j) h[j] = gelu_tanh(w1[j * 2] * x[row * 2] + w1[j * 2 + 1] * x[row * 2 + 1] + b1[j]);
    for (int o = 0; o < 2; ++o) {
      double want = b2[o] + w2[o * 3] * h[0] + w2[o * 3 + 1] * h[1] + w2[o * 3 + 2] * h[2];
      EXPECT_NEAR(got[row * 2 + o], want, 1e-5) << "row " << row << ", output " << o;
    }
  }
}

TEST(NnModule, PoolingModulesShapesAndValues) {
  auto x = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  nn::AvgPool2d avg(2);
  EXPECT_EQ(avg.stride, (std::vector<int64_t>{2, 2}));  // stride 0 means the kernel size
  EXPECT_EQ(avg(x).shape(), (xl::Shape{1, 1, 2, 2}));
  EXPECT_EQ(avg(x).to_vector<float>(), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
  // Kernel 3, stride 2, padding 1: zero padding counts in the mean (PyTorch's count_include_pad).
  nn::AvgPool2d padded(3, 2, 1);
  auto y = padded(x);
  EXPECT_EQ(y.shape(), (xl::Shape{1, 1, 2, 2}));
  std::vector<float> got = y.to_vector<float>();
  std::vector<double> want = {(1 + 2 + 5 + 6) / 9.0, (2 + 3 + 4 + 6 + 7 + 8) / 9.0, (5 + 6 + 9 + 10 + 13 + 14) / 9.0,
                              (6 + 7 + 8 + 10 + 11 + 12 + 14 + 15 + 16) / 9.0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  nn::AvgPool2d strided(2, 1);
  EXPECT_EQ(strided(xl::concat({x, x * 2.0}, 1)).shape(), (xl::Shape{1, 2, 3, 3}));
  EXPECT_EQ(strided(x).to_vector<float>()[4], 8.5f);  // window rows 1-2, cols 1-2: (6 + 7 + 10 + 11) / 4
  nn::MaxPool2d max(3, 2, 1);
  EXPECT_EQ(max(x).to_vector<float>(), (std::vector<float>{6, 8, 14, 16}));
}
