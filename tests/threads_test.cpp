// The thread contract (README, xlite/lazy.h): each thread has its own pending work, eager mode and grad
// mode; sync() computes the calling thread's pending tensors; distinct tensors may be used from any
// threads at once, and a materialized tensor may be read (used as an operand) by several threads at once.
// These run under ASan, UBSan and ThreadSanitizer (make test-tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include <xlite/xlite.h>

namespace xl = xlite;

namespace {

// A small graph whose value depends on the seed only, ending in a plain sync() the way PyTorch/XLA code
// calls mark_step(): the pending values of other threads must not be swept in.
std::vector<float> small_step(int seed) {
  std::vector<float> host(64);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((seed * 31 + static_cast<int>(i)) % 17) - 8.0f;
  xl::Tensor x = xl::tensor(host, {8, 8});
  xl::Tensor y = xl::tanh(x * 0.25f) + xl::matmul(x, x.t()) * 0.01f;
  xl::Tensor z = xl::sum(y, {1});
  xl::sync();
  return z.to_vector<float>();
}

void run_threads(int count, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) threads.emplace_back(body, t);
  for (auto& thread : threads) thread.join();
}

TEST(Threads, IndependentGraphsSyncedAtOnceMatchTheSerialValues) {
  constexpr int kThreads = 4, kSteps = 40;
  std::vector<std::vector<std::vector<float>>> serial(kThreads), parallel(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int s = 0; s < kSteps; ++s) serial[t].push_back(small_step(t * 1000 + s));
  run_threads(kThreads, [&](int t) {
    for (int s = 0; s < kSteps; ++s) parallel[t].push_back(small_step(t * 1000 + s));
  });
  EXPECT_EQ(parallel, serial);
}

TEST(Threads, ASyncLoopWhileOtherThreadsBuildAndReadValues) {
  std::atomic<bool> done{false};
  std::thread syncer([&] {
    while (!done) xl::sync();
  });
  std::vector<int> wrong(3, 0);
  run_threads(3, [&](int t) {
    for (int i = 0; i < 300; ++i) {
      xl::Tensor a = xl::full({16}, static_cast<float>(t + 1));
      xl::Tensor b = a * static_cast<float>(i) + 1.0f;
      xl::Tensor c = xl::sum(b * b);
      const float want = 16.0f * std::pow(static_cast<float>((t + 1) * i) + 1.0f, 2.0f);
      if (std::fabs(c.item<float>() - want) > 1e-4f * want) ++wrong[t];
    }
  });
  done = true;
  syncer.join();
  EXPECT_EQ(wrong, std::vector<int>(3, 0));
}

TEST(Threads, SyncComputesOnlyTheCallingThreadsPendingTensors) {
  xl::sync();
  xl::Tensor mine = xl::ones({4}) * 3.0f;
  xl::Tensor theirs;
  std::thread other([&] {
    theirs = xl::ones({4}) * 5.0f;
    xl::sync();  // the other thread's sync leaves this thread's work pending
    EXPECT_FALSE(theirs.is_pending());
  });
  other.join();
  EXPECT_TRUE(mine.is_pending());
  xl::sync();
  EXPECT_FALSE(mine.is_pending());
  EXPECT_EQ(mine.to_vector<float>(), std::vector<float>(4, 3.0f));
  EXPECT_EQ(theirs.to_vector<float>(), std::vector<float>(4, 5.0f));
}

TEST(Threads, APendingTensorHandedToAnotherThreadIsComputedWhenRead) {
  xl::Tensor made;
  std::thread producer([&] { made = xl::arange(0.0, 4.0, 1.0) * 2.0f; });
  producer.join();
  EXPECT_TRUE(made.is_pending());
  EXPECT_EQ(made.to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
}

TEST(Threads, SharedWeightsAreReadByServingThreadsAtOnce) {
  xl::Tensor w = xl::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  xl::sync();
  std::vector<std::vector<float>> got(4);
  run_threads(4, [&](int t) {
    for (int i = 0; i < 100; ++i) {
      xl::Tensor x = xl::full({1, 2}, static_cast<float>(t));
      got[t] = xl::matmul(x, w).to_vector<float>();
    }
  });
  for (int t = 0; t < 4; ++t) EXPECT_EQ(got[t], (std::vector<float>{4.0f * t, 6.0f * t})) << "thread " << t;
}

TEST(Threads, EagerAndGradModeArePerThread) {
  xl::EagerModeGuard eager(true);
  xl::NoGradGuard no_grad;
  bool other_eager = true, other_grad = false;
  std::thread other([&] {
    other_eager = xl::is_eager_mode();
    other_grad = xl::is_grad_enabled();
    xl::Tensor t = xl::ones({2}) + 1.0f;
    EXPECT_TRUE(t.is_pending());  // a new thread starts lazy
  });
  other.join();
  EXPECT_FALSE(other_eager);
  EXPECT_TRUE(other_grad);
  EXPECT_TRUE(xl::is_eager_mode());
  EXPECT_FALSE(xl::is_grad_enabled());
  EXPECT_FALSE((xl::ones({2}) + 1.0f).is_pending());
}

TEST(Threads, TrainingInSeveralThreadsGivesTheSerialLosses) {
  auto train = [](int seed) {
    xl::Tensor w = xl::tensor(std::vector<float>{0.5f * seed, -0.25f, 1.0f, 0.125f}, {2, 2}).requires_grad_();
    xl::Tensor x = xl::tensor(std::vector<float>{1, 2, -1, 0.5f}, {2, 2});
    std::vector<float> losses;
    for (int step = 0; step < 20; ++step) {
      xl::Tensor loss = xl::sum(xl::square(xl::matmul(x, w) - 1.0f));
      loss.backward();
      {
        xl::NoGradGuard no_grad;
        w.sub_(w.grad() * 0.05f);
        w.grad().zero_();
      }
      xl::sync();
      losses.push_back(loss.item<float>());
    }
    return losses;
  };
  std::vector<std::vector<float>> serial, parallel(4);
  for (int t = 0; t < 4; ++t) serial.push_back(train(t));
  run_threads(4, [&](int t) { parallel[t] = train(t); });
  EXPECT_EQ(parallel, serial);
}

TEST(Threads, ACompiledStepIsCalledFromSeveralThreads) {
  xl::Tensor acc = xl::zeros({4});
  xl::sync();
  auto step = xl::compile([&](const xl::Tensor& x) {
    acc.add_(x);
    return xl::sum(x * 2.0f);
  });
  std::atomic<int> wrong{0};
  run_threads(4, [&](int t) {
    for (int i = 0; i < 25; ++i) {
      float v = static_cast<float>(t + 1);
      if (step(xl::full({4}, v)).item<float>() != 8.0f * v) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  // Every call added its argument once: 25 calls of each of 1, 2, 3 and 4.
  EXPECT_EQ(acc.to_vector<float>(), std::vector<float>(4, 250.0f));
}

}  // namespace
