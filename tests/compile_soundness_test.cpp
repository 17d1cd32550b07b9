// compile(fn) never replays a value the uncompiled fn would not compute: host reads inside fn keep it
// tracing, host flags (a module's mode) are guards, and the strictness options raise instead.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include <xlite/xlite.h>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::ErrorMessage;

namespace {

std::vector<float> F(std::initializer_list<float> v) { return std::vector<float>(v); }

TEST(CompileSoundness, AHostReadOfAnArgumentThatHoldsDataIsSeen) {
  // The case: to_vector of an argument that is already data synced nothing, so the trace
  // replayed the first call's squares.
  auto f = xl::compile([](const xl::Tensor& x) {
    auto v = x.to_vector<float>();
    for (auto& e : v) e = e * e;
    return xl::tensor(v, x.shape());
  });
  EXPECT_EQ(f(xl::tensor(F({1, 2, 3}), {3})).to_vector<float>(), F({1, 4, 9}));
  EXPECT_EQ(f(xl::tensor(F({5, 6, 7}), {3})).to_vector<float>(), F({25, 36, 49}));
  EXPECT_EQ(f(xl::tensor(F({5, 6, 7}), {3})).to_vector<float>(), F({25, 36, 49}));
  EXPECT_EQ(f(xl::tensor(F({-1, 0, 2}), {3})).to_vector<float>(), F({1, 0, 4}));
  EXPECT_FALSE(f.last_call().replayed);
  EXPECT_NE(f.last_call().trace_reason.find("read a value on the host (to_vector)"), std::string::npos)
      << f.last_call().trace_reason;
}

TEST(CompileSoundness, ABranchOnAFlagTensorFollowsTheFlag) {
  xl::Tensor flag = xl::tensor(1.0f);
  xl::Tensor x = xl::tensor(2.0f);
  xl::sync();
  auto step = xl::compile([&]() { return flag.item<float>() > 0 ? x * 1.0f : -x * 0.5f; });
  for (int i = 0; i < 3; ++i) EXPECT_EQ(step().item<float>(), 2.0f);
  flag.fill_(-1.0f);
  xl::sync();
  EXPECT_EQ(step().item<float>(), -1.0f);
}

TEST(CompileSoundness, PrintingAndSyncInsideFnKeepItTracing) {
  xl::Tensor x = xl::tensor(F({1, 2}));
  xl::sync();
  std::ostringstream out;
  auto printing = xl::compile([&]() {
    out << x;
    return x * 2.0f;
  });
  auto syncing = xl::compile([&]() {
    xl::Tensor y = x * 3.0f;
    xl::sync();
    return y;
  });
  for (int i = 0; i < 3; ++i) {
    printing();
    syncing();
  }
  EXPECT_NE(printing.last_call().trace_reason.find("(print)"), std::string::npos) << printing.last_call().trace_reason;
  EXPECT_NE(syncing.last_call().trace_reason.find("synced (sync)"), std::string::npos)
      << syncing.last_call().trace_reason;
  EXPECT_EQ(out.str().find("tensor([1., 2.])"), 0u);
}

TEST(CompileSoundness, AModuleModeChangeRetracesBothWays) {
  xl::manual_seed(7);
  auto dropout = std::make_shared<xl::nn::Dropout>(0.5);
  xl::Tensor x = xl::ones({64});
  xl::sync();
  auto step = xl::compile([&]() { return (*dropout)(x); });
  auto zeros_in = [](const xl::Tensor& t) {
    int n = 0;
    for (float v : t.to_vector<float>()) n += v == 0.0f;
    return n;
  };
  for (int i = 0; i < 3; ++i) EXPECT_GT(zeros_in(step()), 0);
  EXPECT_TRUE(step.last_call().replayed);
  dropout->eval();
  EXPECT_EQ(zeros_in(step()), 0);
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_NE(
      step.last_call().trace_reason.find("a module's training mode (train() or eval()) changed from true to false"),
      std::string::npos)
      << step.last_call().trace_reason;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(zeros_in(step()), 0);
  EXPECT_TRUE(step.last_call().replayed);
  dropout->train();
  EXPECT_GT(zeros_in(step()), 0);  // the replay of the train-mode program again: its guard holds now
}

TEST(CompileSoundness, RequiresGradThatFnAsksForIsGuarded) {
  xl::Tensor w = xl::tensor(F({1, 2}));
  xl::Tensor x = xl::tensor(F({3, 4}));
  xl::sync();
  auto step = xl::compile([&]() { return w.requires_grad() ? x * 2.0f : x * 3.0f; });
  for (int i = 0; i < 3; ++i) EXPECT_EQ(step().to_vector<float>(), F({9, 12}));
  w.requires_grad_();
  EXPECT_EQ(step().to_vector<float>(), F({6, 8}));
  EXPECT_NE(step.last_call().trace_reason.find("requires_grad of a captured f32[2] tensor changed"), std::string::npos)
      << step.last_call().trace_reason;
}

TEST(CompileSoundness, AGraphThatAlternatesWithHiddenHostStateNeverReplays) {
  xl::Tensor x = xl::tensor(F({1, 2}));
  xl::sync();
  int calls = 0;
  auto step = xl::compile([&]() { return ++calls % 2 ? x + 1.0f : x * 1.0f * x; });
  for (int i = 1; i <= 8; ++i) {
    std::vector<float> got = step().to_vector<float>();
    EXPECT_EQ(got, i % 2 ? F({2, 3}) : F({1, 4})) << "call " << i;
  }
  EXPECT_EQ(calls, 8);  // fn ran on every call
}

TEST(CompileSoundness, FullGraphRaisesAtAHostReadAndUndoesTheUpdates) {
  xl::Tensor acc = xl::zeros({2});
  xl::sync();
  auto step = xl::compile(
      [&](const xl::Tensor& x) {
        acc.add_(x);
        return x * (x.sum().item<float>() > 0 ? 2.0f : 3.0f);
      },
      {.full_graph = true});
  const std::string message = ErrorMessage([&] { step(xl::tensor(F({1, 2}))); });
  EXPECT_NE(message.find("[item] compile(fn, {.full_graph = true}): fn read a value on the host while tracing"),
            std::string::npos)
      << message;
  EXPECT_EQ(acc.to_vector<float>(), F({0, 0}));
}

TEST(CompileSoundness, FullGraphRaisesForAStepThatCannotReplay) {
  xl::Tensor kept;
  auto step = xl::compile(
      [&](const xl::Tensor& x) {
        kept = x * 2.0f;
        return x + 1.0f;
      },
      {.full_graph = true});
  const std::string message = ErrorMessage([&] { step(xl::ones({2})); });
  EXPECT_NE(message.find("[compile] compile(fn, {.full_graph = true}): this trace cannot be replayed: fn kept a new"),
            std::string::npos)
      << message;
}

TEST(CompileSoundness, FullGraphAcceptsAPureStepAndReplaysIt) {
  auto step = xl::compile([](const xl::Tensor& x) { return xl::tanh(x) * 2.0f; }, {.full_graph = true});
  for (int i = 0; i < 3; ++i) step(xl::full({3}, 0.5f));
  EXPECT_TRUE(step.last_call().replayed);
}

TEST(CompileSoundness, MaxDifferentGraphsRaisesBeforeTheExtraGraphRuns) {
  xl::Tensor acc = xl::zeros({1});
  xl::sync();
  auto step = xl::compile(
      [&](const xl::Tensor& x) {
        acc.add_(xl::sum(x).reshape({1}));
        return x * 2.0f;
      },
      {.max_different_graphs = 2});
  step(xl::ones({2}));
  step(xl::ones({2}));
  step(xl::ones({3}));  // a second graph
  const std::string message = ErrorMessage([&] { step(xl::ones({4})); });
  EXPECT_NE(message.find("[compile] fn traced a graph different from the 2 it made before, more than "
                         "max_different_graphs = 2 allows; it traced because argument 0 changed from f32[3] on cpu:0 "
                         "to f32[4] on cpu:0"),
            std::string::npos)
      << message;
  EXPECT_EQ(acc.to_vector<float>(), F({7}));                     // the refused call added nothing
  EXPECT_EQ(step(xl::ones({2})).to_vector<float>(), F({2, 2}));  // the known graphs still run
}

TEST(CompileSoundness, AStepCalledFromItsOwnFnRaises) {
  std::function<xl::Tensor(const xl::Tensor&)> inner;
  auto step = xl::compile([&](const xl::Tensor& x) { return inner(x); });
  inner = [&](const xl::Tensor& x) { return step(x); };
  EXPECT_NE(ErrorMessage([&] { step(xl::ones({1})); }).find("[compile] fn calls its own compiled function"),
            std::string::npos);
}

}  // namespace
