// Learning-rate schedules against the rates PyTorch 2.15's torch.optim.lr_scheduler gives (SGD at lr 0.1),
// their errors, and a schedule stepping between replays of a compiled training step.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "test_support.h"

namespace xl = xlite;
namespace optim = xlite::optim;
using xlite_test::ErrorMessage;

namespace {
struct Fixture {
  xl::Tensor w = xl::zeros({1}).requires_grad_();
  optim::SGD opt{{w}, 0.1};
};

// The rate after construction, then after each of n steps.
std::vector<double> rates(const std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>& make, int n) {
  Fixture f;
  auto schedule = make(f.opt);
  std::vector<double> out{schedule->get_last_lr()};
  for (int i = 0; i < n; ++i) {
    schedule->step();
    out.push_back(schedule->get_last_lr());
  }
  return out;
}

void expect_rates(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 + 1e-9 * want[i]) << "epoch " << i;
}
}  // namespace

TEST(LRScheduler, StepLRDecaysEveryStepSize) {
  expect_rates(rates([](auto& o) { return std::make_unique<optim::StepLR>(o, 3, 0.5); }, 7),
               {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025});
}

TEST(LRScheduler, MultiStepLRDecaysAtEachMilestoneInAnyOrder) {
  expect_rates(
      rates([](auto& o) { return std::make_unique<optim::MultiStepLR>(o, std::vector<int64_t>{4, 2}, 0.1); }, 6),
      {0.1, 0.1, 0.01, 0.01, 0.001, 0.001, 0.001});
}

TEST(LRScheduler, ExponentialLRMultipliesEachEpoch) {
  expect_rates(rates([](auto& o) { return std::make_unique<optim::ExponentialLR>(o, 0.9); }, 4),
               {0.1, 0.09, 0.081, 0.0729, 0.06561});
}

TEST(LRScheduler, CosineAnnealingGoesDownToEtaMinAndBackUp) {
  expect_rates(rates([](auto& o) { return std::make_unique<optim::CosineAnnealingLR>(o, 4, 0.01); }, 6),
               {0.1, 0.08681980515339464, 0.055, 0.023180194846605363, 0.01, 0.023180194846605363, 0.055});
}

TEST(LRScheduler, LinearLRWarmsUpThenHolds) {
  expect_rates(rates([](auto& o) { return std::make_unique<optim::LinearLR>(o, 0.25, 1.0, 3); }, 5),
               {0.025, 0.05, 0.075, 0.1, 0.1, 0.1});
}

TEST(LRScheduler, OneCycleRisesThenAnnealsFarBelowTheStart) {
  expect_rates(rates([](auto& o) { return std::make_unique<optim::OneCycleLR>(o, 1.0, 10); }, 9),
               {0.04, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631, 0.6112620219362893, 0.38874197806371075,
                0.18825834605023697, 0.049519367986526286, 4e-06});
}

TEST(LRScheduler, OneCycleInThreeLinearPhases) {
  optim::OneCycleOptions options;
  options.three_phase = true;
  options.anneal_strategy = "linear";
  expect_rates(rates([&](auto& o) { return std::make_unique<optim::OneCycleLR>(o, 1.0, 10, options); }, 9),
               {0.04, 0.52, 1.0, 0.52, 0.04, 0.0320008, 0.0240016, 0.0160024, 0.0080032, 4e-06});
}

TEST(LRScheduler, ReduceLROnPlateauWaitsForPatienceAndCoolsDown) {
  Fixture f;
  optim::ReduceLROnPlateau schedule(f.opt, {.factor = 0.5, .patience = 1, .cooldown = 1});
  std::vector<double> got{f.opt.lr()};
  for (double metric : {5, 4, 4, 4, 4, 4, 4, 3}) {
    schedule.step(metric);
    got.push_back(schedule.get_last_lr());
  }
  expect_rates(got, {0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025});
}

TEST(LRScheduler, BadArgumentsNameTheSchedule) {
  Fixture f;
  EXPECT_NE(ErrorMessage([&] { optim::StepLR(f.opt, 0); }).find("[StepLR] step_size must be > 0"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { optim::CosineAnnealingLR(f.opt, 0); }).find("[CosineAnnealingLR]"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { optim::LinearLR(f.opt, 0.0); }).find("[LinearLR]"), std::string::npos);
  optim::OneCycleOptions bad;
  bad.anneal_strategy = "cubic";
  EXPECT_NE(ErrorMessage([&] { optim::OneCycleLR(f.opt, 1.0, 10, bad); }).find("[OneCycleLR] anneal_strategy"),
            std::string::npos);
  optim::OneCycleLR cycle(f.opt, 1.0, 2);
  cycle.step();
  cycle.step();
  EXPECT_NE(ErrorMessage([&] { cycle.step(); }).find("[OneCycleLR] stepped 3 times, past total_steps 2"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { optim::ReduceLROnPlateau(f.opt, {.mode = "lowest"}); }).find("[ReduceLROnPlateau]"),
            std::string::npos);
}

// The rate lives in a tensor: a schedule stepped between calls changes what each replay applies, and the
// step keeps replaying.
TEST(LRScheduler, ASchedulerSteppedBetweenReplaysNeverRetraces) {
  xl::Tensor w = xl::ones({4}).requires_grad_();
  optim::SGD opt({w}, 0.1);
  optim::StepLR schedule(opt, 1, 0.5);
  auto step = xl::compile([&](const xl::Tensor& x) {
    opt.zero_grad();
    xl::Tensor loss = xl::sum(w * x);
    loss.backward();
    opt.step();
    return loss;
  });
  xl::Tensor x = xl::ones({4});
  double expected = 1.0, lr = 0.1;
  for (int call = 0; call < 6; ++call) {
    step(x);
    expected -= lr;  // d loss / d w = x = 1
    EXPECT_NEAR(w.to_vector<float>()[0], expected, 1e-6) << "call " << call;
    if (call >= 3) {
      EXPECT_TRUE(step.last_call().replayed) << "call " << call << ": " << step.last_call().trace_reason;
    }
    schedule.step();
    lr *= 0.5;
  }
}
