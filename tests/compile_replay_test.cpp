// compile(fn) replay: after two agreeing traces a call runs the recorded program without running fn, gives
// the same values as tracing every call, and traces again (saying why) whenever a guard fails.
#include <gtest/gtest.h>

#include <stdexcept>
#include <tuple>
#include <xlite/xlite.h>

#include "tensor/tensor_impl.h"

namespace xl = xlite;

namespace {

int64_t counter(const char* name) { return xl::metrics::counter_value(name); }

// A small model trained by a compiled step; the same seed gives the same start.
struct Trainer {
  xl::nn::Sequential model;
  xl::optim::AdamW opt;
  Trainer()
      : model({std::make_shared<xl::nn::Linear>(3, 8), std::make_shared<xl::nn::ReLU>(),
               std::make_shared<xl::nn::Dropout>(0.25), std::make_shared<xl::nn::Linear>(8, 2)}),
        opt((xl::manual_seed(11), model.parameters()), 0.02) {}
};

// Losses and final weights of a training run: replayed, or traced on every call.
std::pair<std::vector<float>, std::vector<float>> train(bool force_retrace, bool eager) {
  xl::EagerModeGuard mode(eager);
  xl::manual_seed(11);
  Trainer t;
  auto x = xl::randn({16, 3});
  auto y = xl::remainder(xl::arange(16), 2);
  int host_calls = 0;
  auto step = xl::compile(
      [&](const xl::Tensor& xs, const xl::Tensor& ys) {
        ++host_calls;
        t.opt.zero_grad();
        auto loss = xl::nn::cross_entropy(t.model(xs), ys);
        loss.backward();
        t.opt.step();
        return loss;
      },
      {force_retrace});
  std::vector<float> losses;
  for (int i = 0; i < 12; ++i) {
    t.opt.set_lr(xl::optim::warmup_cosine_lr(i, 3, 12, 0.02));
    losses.push_back(step(x, y).item<float>());
  }
  // zero_grad() drops the gradients, so every call starts without them: two agreeing traces. Lazily, one more
  // before them: the first step finds AdamW's zero m and v of a parameter in one buffer (one sync made both).
  EXPECT_EQ(host_calls, force_retrace ? 12 : eager ? 2 : 3);
  EXPECT_EQ(xl::is_eager_mode(), eager);
  std::vector<float> weights;
  for (const auto& p : t.model.parameters())
    for (float v : p.to_vector<float>()) weights.push_back(v);
  return {losses, weights};
}

}  // namespace

TEST(CompileReplay, ReplayGivesTheSameTrainingRunAsTracingEveryCall) {
  for (bool eager : {false, true}) {
    int64_t replays = counter("CompiledStepReplay");
    auto traced = train(/*force_retrace=*/true, eager);
    EXPECT_EQ(counter("CompiledStepReplay"), replays);
    auto replayed = train(/*force_retrace=*/false, eager);
    EXPECT_EQ(counter("CompiledStepReplay"), replays + (eager ? 10 : 9));
    EXPECT_EQ(traced.first, replayed.first) << "losses, eager " << eager;
    EXPECT_EQ(traced.second, replayed.second) << "weights, eager " << eager;
    EXPECT_LT(replayed.first.back(), replayed.first.front());
  }
}

TEST(CompileReplay, AShapeChangeRetracesAndSaysWhich) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& x) { return (x * w).sum({1}); });
  auto a = xl::ones({2, 3});
  EXPECT_EQ(step(a).to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_EQ(step.last_call().trace_reason, "first call");
  step(a);
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(step(a * 2.0).to_vector<float>(), (std::vector<float>{12, 12}));
  EXPECT_TRUE(step.last_call().replayed);
  auto b = xl::ones({4, 3});
  EXPECT_EQ(step(b).to_vector<float>(), (std::vector<float>{6, 6, 6, 6}));
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(step.last_call().trace_reason, "argument 0 changed from f32[2,3] on cpu:0 to f32[4,3] on cpu:0");
  // The first signature's program is still there.
  step(a);
  EXPECT_TRUE(step.last_call().replayed);
}

TEST(CompileReplay, ScalarArgumentsArePartOfTheSignature) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  auto step = xl::compile([&](double scale) { return x * scale; });
  step(3.0);
  step(3.0);
  EXPECT_EQ(step(3.0).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(step(5.0).to_vector<float>(), (std::vector<float>{5, 10}));
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(step.last_call().trace_reason, "argument 0 changed from 3 to 5");
}

TEST(CompileReplay, CapturedTensorsAreReadAtEachCall) {
  auto w = xl::tensor(std::vector<float>{1, 1});
  auto bias = xl::tensor(std::vector<float>{0, 0});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& x) {
    w.mul_(2.0);
    return x * w + bias;
  });
  auto x = xl::tensor(std::vector<float>{1, 3});
  step(x);
  step(x);
  bias.fill_(10.0);  // changed outside the step: the replay must see it
  EXPECT_EQ(step(x).to_vector<float>(), (std::vector<float>{18, 34}));
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{8, 8}));
}

TEST(CompileReplay, UpdatedWeightsAreWrittenIntoTheirOwnBuffers) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  auto w = xl::ones({256});
  xl::sync();
  auto step = xl::compile([&]() { w.sub_(w * 0.5); });
  step();
  step();
  const void* before = w.impl()->data()->data();
  int64_t used = xl::get_memory_info(xl::device()).bytes_used;
  for (int i = 0; i < 5; ++i) step();
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(w.impl()->data()->data(), before) << "the replayed update was donated";
  EXPECT_EQ(xl::get_memory_info(xl::device()).bytes_used, used);
  EXPECT_FLOAT_EQ(w.to_vector<float>()[0], 1.0f / 128);
}

TEST(CompileReplay, AHostValueThatChangesKeepsTracing) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  double factor = 1;
  int host_calls = 0;
  auto step = xl::compile([&]() {
    ++host_calls;
    factor += 1;
    return x * factor;
  });
  for (int i = 0; i < 4; ++i) EXPECT_EQ(step().to_vector<float>()[1], 2 * (i + 2)) << i;
  EXPECT_EQ(host_calls, 4);
  EXPECT_EQ(step.last_call().trace_reason,
            "a host value fed to the graph (argument 1) changed between traces, from 3 to 4: pass it as an "
            "argument or keep it in a tensor");
}

TEST(CompileReplay, ForceRetraceRunsFnEveryCall) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  int host_calls = 0;
  auto step = xl::compile(
      [&]() {
        ++host_calls;
        return x + 1.5;
      },
      {.force_retrace = true});
  int64_t uncached = counter("UncachedCompile");
  for (int i = 0; i < 5; ++i) step();
  EXPECT_EQ(host_calls, 5);
  EXPECT_EQ(step.last_call().trace_reason, "force_retrace is set");
  EXPECT_LE(counter("UncachedCompile"), uncached + 1);
}

TEST(CompileReplay, RandomDrawsContinueTheSequence) {
  auto draw = [](bool force_retrace) {
    xl::manual_seed(5);
    auto step = xl::compile([]() { return xl::rand({3}) + xl::randn({2}).sum(); }, {force_retrace});
    std::vector<float> values;
    for (int i = 0; i < 5; ++i)
      for (float v : step().to_vector<float>()) values.push_back(v);
    for (float v : xl::rand({2}).to_vector<float>()) values.push_back(v);  // the generator moved on as much
    return values;
  };
  auto traced = draw(true);
  auto replayed = draw(false);
  EXPECT_EQ(traced, replayed);
  EXPECT_NE(std::vector<float>(traced.begin(), traced.begin() + 3),
            std::vector<float>(traced.begin() + 3, traced.begin() + 6));
}

TEST(CompileReplay, ReadingAValueInsideFnIsNeverReplayed) {
  auto x = xl::tensor(std::vector<float>{1, -2});
  xl::sync();
  auto step = xl::compile([&]() { return x.sum().item<float>() > 0 ? x * 2.0 : x * 3.0; });
  for (int i = 0; i < 3; ++i) step();
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_NE(step.last_call().trace_reason.find("read a value on the host (item)"), std::string::npos)
      << step.last_call().trace_reason;
}

TEST(CompileReplay, KeepingANewTensorIsNeverReplayed) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  xl::Tensor kept;
  auto step = xl::compile([&]() {
    kept = x * 2.0;
    return x + 1.0;
  });
  for (int i = 0; i < 3; ++i) step();
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_NE(step.last_call().trace_reason.find("kept a new f32[2] tensor"), std::string::npos);
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST(CompileReplay, ADestroyedCapturedTensorRetraces) {
  auto holder = std::make_shared<xl::Tensor>(xl::tensor(std::vector<float>{1, 2}));
  xl::sync();
  auto step = xl::compile([&]() { return *holder * 2.0; });
  step();
  step();
  *holder = xl::tensor(std::vector<float>{5, 6});  // a new tensor in the same variable
  xl::sync();
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{10, 12}));
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(step.last_call().trace_reason, "a captured f32[2] tensor no longer exists");
}

TEST(CompileReplay, AReboundCapturedVariableRetracesWhileTheOldTensorLives) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 1});
  xl::sync();
  xl::Tensor old = w;  // keeps the traced tensor alive after w is rebound
  auto step = xl::compile([&]() { return w * 2.0; });
  step();
  step();
  xl::Tensor another_handle = w;  // more handles than when traced: nothing was rebound
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_TRUE(step.last_call().replayed);

  w = xl::tensor(std::vector<float>{1, 2, 3});
  another_handle = xl::Tensor();
  xl::sync();
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(
      step.last_call().trace_reason,
      "a captured f32[2] tensor has fewer handles than when traced: a variable fn reads may now hold another tensor");
  step();
  EXPECT_EQ(step().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(CompileReplay, ACapturedResultReplaysWhetherOrNotTheCallerKeepsIt) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  auto step = xl::compile([&]() {
    w.add_(1.0);
    return w;
  });
  xl::Tensor kept = step();
  kept = step();
  step();  // the result is dropped at once
  EXPECT_TRUE(step.last_call().replayed);
  kept = step();
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{5, 6}));
}

TEST(CompileReplay, ArgumentsThatSharedStorageMustStillShareIt) {
  auto step = xl::compile([](const xl::Tensor& a, const xl::Tensor& b) { return a * 2.0 + b; });
  auto x = xl::tensor(std::vector<float>{1, 2});
  auto y = xl::tensor(std::vector<float>{10, 20});
  xl::sync();
  step(x, x);
  step(x, x);
  EXPECT_EQ(step(x, y).to_vector<float>(), (std::vector<float>{12, 24}));
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_NE(step.last_call().trace_reason.find("no longer do"), std::string::npos);
}

TEST(CompileReplay, TupleAndVectorResultsAreRebuilt) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  xl::sync();
  auto step = xl::compile([&](int64_t n) {
    std::vector<xl::Tensor> parts;
    for (int64_t i = 0; i < n; ++i) parts.push_back(x + static_cast<double>(i));
    return std::make_tuple(x * 2.0, parts, x);
  });
  step(3);
  step(3);
  auto [doubled, parts, same] = step(3);
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(doubled.to_vector<float>(), (std::vector<float>{2, 4}));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(same.impl(), x.impl()) << "a returned existing tensor is the same tensor";
}

TEST(CompileReplay, AReplayThatFailsChangesNothing) {
  auto table = xl::tensor(std::vector<float>{1, 2, 3});
  auto w = xl::tensor(std::vector<float>{1});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& index) {
    w.add_(1.0);
    return xl::index_select(table, 0, index);
  });
  auto good = xl::tensor(std::vector<int64_t>{2});
  auto bad = xl::tensor(std::vector<int64_t>{7});
  xl::sync();
  step(good);
  step(good);
  EXPECT_THROW(step(bad), xl::Error);
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(step(good).to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{4}));
}

// An autocast scope around a compiled call changes what fn computes (its products in bf16), so the call traces
// again rather than replaying the f32 program; outside the scope the f32 program replays.
TEST(CompileReplay, AnAutocastScopeAroundTheCallIsPartOfTheSignature) {
  auto w = xl::randn({8, 8});
  auto x = xl::randn({4, 8});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& v) { return xl::matmul(v, w); });
  for (int i = 0; i < 3; ++i) step(x);
  ASSERT_TRUE(step.last_call().replayed);
  {
    xl::autocast scope(xl::DType::bf16);
    const xl::Tensor eager_result = xl::matmul(x, w);
    const xl::Tensor y = step(x);
    EXPECT_FALSE(step.last_call().replayed);
    EXPECT_EQ(step.last_call().trace_reason, "autocast bf16 (was autocast off)");
    EXPECT_EQ(y.dtype(), eager_result.dtype());
    EXPECT_EQ(y.dtype(), xl::DType::bf16);
  }
  EXPECT_EQ(step(x).dtype(), xl::DType::f32);
  EXPECT_TRUE(step.last_call().replayed);
}
