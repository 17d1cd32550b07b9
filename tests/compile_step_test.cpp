// compile(fn): one program per step in either mode, exactly one compile per distinct program, and a
// step that throws leaves everything as it was.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <xlite/xlite.h>

namespace xl = xlite;

namespace {
struct Model {
  xl::nn::Linear layer{4, 1};
};

}  // namespace

TEST(CompileStep, HundredStepsCompileEachProgramOnce) {
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    xl::manual_seed(4);
    Model model;
    xl::optim::SGD opt(model.layer.parameters(), 0.05);
    auto x = xl::randn({16, 4});
    auto y = xl::sum(x * 0.5, {1}, true);
    xl::sync();
    auto step = xl::compile([&](const xl::Tensor& xs, const xl::Tensor& ys) {
      opt.zero_grad();
      auto loss = xl::nn::mse_loss(model.layer(xs), ys);
      loss.backward();
      opt.step();
      return loss;
    });
    int64_t executes = xl::metrics::counter_value("Execute");
    int64_t compiles = xl::metrics::counter_value("UncachedCompile");
    std::set<uint64_t> programs;         // the graphs the traced calls ran
    int64_t programs_compiled_here = 0;  // a program may also come from the cache, compiled earlier
    auto call = [&] {
      int64_t executes_before = xl::metrics::counter_value("Execute");
      xl::Tensor loss = step(x, y);
      EXPECT_EQ(xl::metrics::counter_value("Execute"), executes_before + 1) << "one program per step, eager " << eager;
      if (!step.last_call().replayed) {
        xl::debug::SyncInfo sync = xl::debug::last_sync();
        if (programs.count(sync.graph_hash)) {
          EXPECT_TRUE(sync.cache_hit) << "compiled twice, eager " << eager;
        }
        programs_compiled_here += sync.cache_hit ? 0 : 1;
        programs.insert(sync.graph_hash);
      }
      return loss;
    };
    auto first = call();
    EXPECT_FALSE(first.is_pending());
    EXPECT_EQ(xl::is_eager_mode(), eager);
    xl::Tensor last;
    for (int i = 0; i < 99; ++i) last = call();
    EXPECT_EQ(xl::metrics::counter_value("Execute"), executes + 100);
    EXPECT_EQ(xl::metrics::counter_value("UncachedCompile"), compiles + programs_compiled_here) << "eager " << eager;
    EXPECT_GE(programs.size(), 1u);
    EXPECT_LE(programs.size(), 2u);  // the first step may differ: no gradients exist yet
    EXPECT_TRUE(step.last_call().replayed);
    EXPECT_LT(last.item<float>(), first.item<float>() * 0.1f);
  }
}

TEST(CompileStep, AThrowingStepChangesNothing) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3});
  auto counter = xl::tensor(std::vector<float>{0});
  xl::sync();
  auto step = xl::compile([&](bool fail) {
    w.mul_(10.0);
    counter.add_(1.0);
    if (fail) throw std::runtime_error("host-side failure");
    return w.sum();
  });
  {
    xl::EagerModeGuard eager(true);
    EXPECT_THROW(step(true), std::runtime_error);
    EXPECT_TRUE(xl::is_eager_mode());  // the mode is restored
  }
  EXPECT_FALSE(w.is_pending());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(counter.to_vector<float>(), (std::vector<float>{0}));
  EXPECT_EQ(step(false).item<float>(), 60.0f);
  EXPECT_EQ(counter.to_vector<float>(), (std::vector<float>{1}));
}
