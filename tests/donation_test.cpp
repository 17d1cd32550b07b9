// Donation: a tensor updated in place gets its new value written into its old buffer when nothing else
// can still read that buffer; otherwise the old value stays intact.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>
#include <xlite/xlite.h>

#include "tensor/tensor_impl.h"

namespace xl = xlite;

namespace {
const void* storage(const xl::Tensor& t) { return t.impl()->data()->data(); }

std::vector<xl::Tensor> states_of(const xl::optim::Optimizer& opt) {
  std::vector<xl::Tensor> states;
  for (const auto& [name, state] : opt.state_dict()) states.push_back(state);
  return states;
}

xl::Tensor classifier_labels() { return xl::tensor(std::vector<int64_t>{0, 1, 2, 3, 3, 2, 1, 0}); }

void build_classifier(xl::nn::Sequential& net) {
  net.push_back(std::make_shared<xl::nn::Linear>(16, 32));
  net.push_back(std::make_shared<xl::nn::ReLU>());
  net.push_back(std::make_shared<xl::nn::Linear>(32, 4));
}

// A compiled training step of `net` (cross entropy, then opt.step()), traced until it replays; every
// parameter and optimizer state must then keep its buffer over three replays. Returns the step.
auto expect_replayed_step_keeps_every_buffer(xl::optim::Optimizer& opt, xl::nn::Sequential& net, const xl::Tensor& x,
                                             const xl::Tensor& y) {
  auto step = xl::compile([&opt, &net](const xl::Tensor& input, const xl::Tensor& target) {
    opt.zero_grad();
    xl::Tensor loss = xl::nn::cross_entropy(net.forward(input), target);
    loss.backward();
    opt.step();
    return loss;
  });
  std::vector<float> losses;
  // Traces: gradients and states appear, then a second trace of the same signature confirms it.
  for (int i = 0; i < 3; ++i) losses.push_back(step(x, y).item<float>());
  std::vector<xl::Tensor> tracked = net.parameters();
  const size_t num_params = tracked.size();
  for (const xl::Tensor& s : states_of(opt)) tracked.push_back(s);
  std::vector<const void*> before;
  for (const xl::Tensor& t : tracked) before.push_back(storage(t));
  for (int i = 0; i < 3; ++i) {
    losses.push_back(step(x, y).item<float>());
    EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
    std::vector<xl::Tensor> now = net.parameters();
    for (const xl::Tensor& s : states_of(opt)) now.push_back(s);
    EXPECT_EQ(now.size(), tracked.size());
    for (size_t k = 0; k < std::min(now.size(), tracked.size()); ++k)
      EXPECT_EQ(storage(now[k]), before[k]) << "step " << i << (k < num_params ? ", parameter " : ", optimizer state ")
                                            << (k < num_params ? k : k - num_params);
  }
  EXPECT_LT(losses.back(), losses.front());  // the in-place updates are the ones the loss sees
  return step;
}
}  // namespace

TEST(Donation, InPlaceUpdatesReuseTheWeightBuffer) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  auto w = xl::ones({1 << 18});
  auto g = xl::full({1 << 18}, 0.5f);
  xl::sync();
  const void* before = storage(w);
  xl::reset_peak_memory(xl::device());
  int64_t used = xl::get_memory_info(xl::device()).bytes_used;
  for (int step = 0; step < 5; ++step) {
    w.sub_(g * 0.1);
    xl::sync();
    EXPECT_EQ(storage(w), before) << "step " << step;
  }
  // The step never held a second copy of the weights.
  EXPECT_LT(xl::get_memory_info(xl::device()).peak_bytes_used, used + (1 << 18) * 4);
  EXPECT_NEAR(w.to_vector<float>()[123], 1.0f - 5 * 0.05f, 1e-6);
}

TEST(Donation, WritesThroughAViewReuseTheBasesBuffer) {
  // Functionalised views keep the graph pure, so a write into part of a tensor still donates the whole one.
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  auto w = xl::ones({1 << 18});
  xl::sync();
  const void* before = storage(w);
  for (int step = 0; step < 3; ++step) {
    w.narrow(0, 0, 1000).mul_(2.0);
    xl::sync();
    EXPECT_EQ(storage(w), before) << "step " << step;
  }
  std::vector<float> v = w.to_vector<float>();
  EXPECT_EQ(v[999], 8.0f);
  EXPECT_EQ(v[1000], 1.0f);
}

TEST(Donation, ReadsOfOtherElementsThroughPadsAndSlicesAreNotWrittenInPlace) {
  // Each output element reads the element before it (a shift), or the same multi-index in a differently
  // shaped value of the same size (another row-major position): writing over the input would corrupt both.
  auto w = xl::arange(0.0, 1024.0, 1.0);
  xl::sync();
  w.copy_(xl::pad(w.narrow(0, 0, 1023), {1, 0}));
  std::vector<float> shifted = w.to_vector<float>();
  EXPECT_EQ(shifted[0], 0.0f);
  EXPECT_EQ(shifted[1], 0.0f);
  EXPECT_EQ(shifted[512], 511.0f);
  EXPECT_EQ(shifted[1023], 1022.0f);
  auto m = xl::reshape(xl::arange(0.0, 16.0, 1.0), {4, 4});
  xl::sync();
  m.copy_(xl::reshape(xl::pad(m.narrow(0, 0, 2), {0, 4}), {4, 4}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0}));
}

TEST(Donation, AnotherHolderKeepsTheOldValue) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3});
  auto snapshot = w.to(xl::DType::f32);  // shares w's buffer
  w.mul_(10.0);
  xl::sync();
  EXPECT_EQ(snapshot.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{10, 20, 30}));
}

TEST(Donation, PendingReadersOfTheOldValueSeeTheOldValue) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3, 4});
  auto reversed_old = xl::flip(w, {0});  // reads other elements of the old buffer
  auto old_sum = w.sum();
  w.add_(100.0);
  xl::sync();
  EXPECT_EQ(reversed_old.to_vector<float>(), (std::vector<float>{4, 3, 2, 1}));
  EXPECT_EQ(old_sum.item<float>(), 10.0f);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{101, 102, 103, 104}));
}

TEST(Donation, PartialSyncNeverDonates) {
  auto w = xl::tensor(std::vector<float>{1, 2});
  auto later = w * 3.0;  // stays pending through the partial sync below
  w.add_(1.0);
  xl::sync({w});
  EXPECT_EQ(later.to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST(Donation, UpdatesThroughAShapeChangeAreNotWrittenInPlace) {
  auto w = xl::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  w.copy_(w.t() + 0.0);  // reads transposed elements: must not overwrite what it still reads
  xl::sync();
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
}

TEST(Donation, AnErrorWhileRunningLeavesTheDonorIntact) {
  auto w = xl::ones({1024});
  auto table = xl::tensor(std::vector<float>{1, 2, 3});
  auto index = xl::tensor(std::vector<int64_t>{9});
  xl::sync();
  w.add_(1.0);  // comes first in the graph: written before the bad index is seen, unless not donated
  auto picked = xl::index_select(table, 0, index);
  EXPECT_THROW(xl::sync(), xl::Error);
  picked = xl::Tensor();
  EXPECT_EQ(w.to_vector<float>()[7], 2.0f);
}

TEST(Donation, AStepThatCanRaiseTracedLastDoesNotBlockIt) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  auto w = xl::ones({1024});
  auto table = xl::tensor(std::vector<float>{1, 2, 3});
  auto index = xl::tensor(std::vector<int64_t>{2});
  xl::sync();
  const void* before = storage(w);
  w.add_(1.0);
  auto picked = xl::index_select(table, 0, index);  // can raise; runs before the donated write
  xl::sync();
  EXPECT_EQ(storage(w), before);
  EXPECT_EQ(w.to_vector<float>()[7], 2.0f);
  EXPECT_EQ(picked.to_vector<float>(), (std::vector<float>{3}));
}

// The loss of a training step gathers its labels (an index that can be out of range) after the backward
// pass and the optimizer were traced; every parameter must still be updated in its own buffer.
TEST(Donation, ATrainingStepUpdatesEveryParameterInPlace) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  xl::manual_seed(3);
  xl::nn::Sequential net;
  build_classifier(net);
  xl::optim::SGD sgd(net.parameters(), 0.1);
  auto x = xl::randn({8, 16});
  auto step = expect_replayed_step_keeps_every_buffer(sgd, net, x, classifier_labels());
  auto bad = xl::tensor(std::vector<int64_t>{0, 1, 2, 3, 3, 2, 1, 9});
  std::vector<float> kept = net.parameters()[0].to_vector<float>();
  EXPECT_THROW(step(x, bad), xl::Error);  // the bad label is seen before any update is written
  EXPECT_EQ(net.parameters()[0].to_vector<float>(), kept);
}

// Optimizer states are updated in place too: Adam's moments and step count, SGD's momentum buffers.
TEST(Donation, AReplayedAdamStepUpdatesParametersAndStatesInPlace) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  xl::manual_seed(4);
  xl::nn::Sequential net;
  build_classifier(net);
  xl::optim::Adam adam(net.parameters(), 0.01, {0.9, 0.999, 1e-8, 0.01});
  expect_replayed_step_keeps_every_buffer(adam, net, xl::randn({8, 16}), classifier_labels());
  EXPECT_EQ(adam.state_dict().at("step").item<double>(), 6.0);  // three traced and three replayed steps counted
}

TEST(Donation, AReplayedSgdMomentumStepUpdatesParametersAndVelocitiesInPlace) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "donation is a cpu-backend optimisation";
  xl::manual_seed(5);
  xl::nn::Sequential net;
  build_classifier(net);
  xl::optim::SGD sgd(net.parameters(), 0.05, {0.9, 0, 1e-4, true});
  expect_replayed_step_keeps_every_buffer(sgd, net, xl::randn({8, 16}), classifier_labels());
  EXPECT_EQ(sgd.state_dict().size(), net.parameters().size() + 1);  // a velocity per parameter, and lr
}
