// Laziness, one graph per sync, caching and eager mode, asserted through the metrics counters.
#include <gtest/gtest.h>

#include <cmath>
#include <xlite/xlite.h>

namespace xl = xlite;

namespace {
int64_t counter(const char* name) { return xl::metrics::counter_value(name); }

class LazySemantics : public ::testing::Test {
 protected:
  void SetUp() override {
    xl::eager_mode(false);
    xl::sync();
  }
};
}  // namespace

TEST_F(LazySemantics, BuildingOpsExecutesNothing) {
  int64_t executes = counter("Execute");
  auto a = xl::tensor(100.0f);
  auto b = xl::cos(a);
  auto c = xl::sin(b);
  EXPECT_TRUE(b.is_pending());
  EXPECT_TRUE(c.is_pending());
  EXPECT_EQ(counter("Execute"), executes);
  xl::sync();
  EXPECT_EQ(counter("Execute"), executes + 1);  // b and c in one graph
  EXPECT_FALSE(b.is_pending());
  EXPECT_FALSE(c.is_pending());
  EXPECT_FLOAT_EQ(b.item<float>(), std::cos(100.0f));
  EXPECT_FLOAT_EQ(c.item<float>(), std::sin(std::cos(100.0f)));
  EXPECT_EQ(counter("Execute"), executes + 1);  // reads of synced values run nothing
  EXPECT_EQ(xl::debug::last_sync().num_outputs, 2);
  EXPECT_EQ(xl::debug::last_sync().cause, "user sync");
}

TEST_F(LazySemantics, ValueReadRunsOnlyWhatItNeeds) {
  auto a = xl::tensor(std::vector<float>{1, 2, 3});
  auto b = xl::exp(a);
  auto c = xl::log(a);
  int64_t executes = counter("Execute");
  EXPECT_NEAR(b.to_vector<float>()[2], std::exp(3.0f), 1e-4);
  EXPECT_EQ(counter("Execute"), executes + 1);
  EXPECT_TRUE(c.is_pending());
  EXPECT_EQ(xl::debug::last_sync().num_outputs, 1);
  EXPECT_NE(xl::debug::last_sync().cause.find("value read"), std::string::npos);
}

TEST_F(LazySemantics, DeadTensorsAreNotComputed) {
  auto a = xl::tensor(std::vector<float>{1, 2});
  auto kept = a * a;
  {
    auto dead = xl::exp(a) + 1.5f;
  }
  xl::sync();
  EXPECT_EQ(xl::debug::last_sync().num_outputs, 1);
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{1, 4}));
}

TEST_F(LazySemantics, SameCodeNewDataIsACachedCompile) {
  auto step = [](float value) {
    auto x = xl::tensor(std::vector<float>{value, value + 1});
    auto y = xl::tanh(x) * x;
    xl::sync();
    return y.to_vector<float>();
  };
  step(1.0f);
  int64_t uncached = counter("UncachedCompile"), cached = counter("CachedCompile");
  auto r = step(2.0f);
  EXPECT_EQ(counter("UncachedCompile"), uncached);
  EXPECT_EQ(counter("CachedCompile"), cached + 1);
  EXPECT_NEAR(r[0], std::tanh(2.0f) * 2.0f, 1e-6);
}

TEST_F(LazySemantics, GraphHashIsStructuralNotData) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  auto y = xl::tensor(std::vector<float>{5, 7});
  EXPECT_EQ(xl::debug::graph_hash({xl::sin(x)}), xl::debug::graph_hash({xl::sin(y)}));
  EXPECT_NE(xl::debug::graph_hash({xl::sin(x)}), xl::debug::graph_hash({xl::cos(x)}));
  EXPECT_NE(xl::debug::graph_hash({x + x}), xl::debug::graph_hash({x + y}));  // parameter wiring counts
  auto z = xl::tensor(std::vector<float>{1, 2, 3});
  EXPECT_NE(xl::debug::graph_hash({xl::sin(x)}), xl::debug::graph_hash({xl::sin(z)}));  // shapes count
}

TEST_F(LazySemantics, ScalarsOtherThanZeroAndOneDoNotRecompile) {
  auto x = xl::tensor(std::vector<float>{1, 2, 4});
  auto scaled = [&](double lr) {
    auto y = x * lr;
    xl::sync();
    return y.to_vector<float>();
  };
  scaled(0.5);
  int64_t uncached = counter("UncachedCompile");
  EXPECT_EQ(scaled(0.25), (std::vector<float>{0.25f, 0.5f, 1.0f}));
  EXPECT_EQ(scaled(3.0), (std::vector<float>{3, 6, 12}));
  EXPECT_EQ(counter("UncachedCompile"), uncached);
  // 0 and 1 are constants: a different graph from the parameter version, but still exact.
  EXPECT_EQ(scaled(1.0), (std::vector<float>{1, 2, 4}));
  EXPECT_NE(xl::debug::graph_text({x * 1.0}).find("constant"), std::string::npos);
  EXPECT_EQ(xl::debug::graph_text({x * 2.0}).find("constant"), std::string::npos);
}

TEST_F(LazySemantics, NewRandomDrawsDoNotRecompile) {
  xl::manual_seed(3);
  auto first = xl::rand({8});
  xl::sync();
  int64_t uncached = counter("UncachedCompile");
  auto second = xl::rand({8});
  xl::sync();
  EXPECT_EQ(counter("UncachedCompile"), uncached);
  EXPECT_NE(first.to_vector<float>(), second.to_vector<float>());
}

TEST_F(LazySemantics, SyncOfListedTensorsLeavesTheRestPending) {
  auto a = xl::tensor(std::vector<float>{1, 2});
  auto b = a + 3.0f;
  auto c = a * 3.0f;
  xl::sync({b});
  EXPECT_FALSE(b.is_pending());
  EXPECT_TRUE(c.is_pending());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3, 6}));
}

TEST_F(LazySemantics, EagerModeRunsEachOpThroughTheCache) {
  xl::EagerModeGuard guard(true);
  EXPECT_TRUE(xl::is_eager_mode());
  auto x = xl::tensor(std::vector<float>{1, 2, 3});
  int64_t executes = counter("Execute");
  auto y = xl::exp(x);
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(counter("Execute"), executes + 1);
  int64_t uncached = counter("UncachedCompile"), cached = counter("CachedCompile");
  auto z = xl::exp(y);  // the same one-op program
  EXPECT_EQ(counter("UncachedCompile"), uncached);
  EXPECT_EQ(counter("CachedCompile"), cached + 1);
  EXPECT_NEAR(z.to_vector<float>()[0], std::exp(std::exp(1.0f)), 1e-4);
  EXPECT_GT(xl::metrics::metric_data("EagerOpExecuteTime").samples, 0);
}

TEST_F(LazySemantics, EagerModeGuardRestoresOnException) {
  EXPECT_FALSE(xl::is_eager_mode());
  try {
    xl::EagerModeGuard guard(true);
    EXPECT_TRUE(xl::is_eager_mode());
    xl::matmul(xl::zeros({2, 3}), xl::zeros({4, 5}));
    FAIL() << "matmul of mismatched shapes must throw";
  } catch (const xl::Error&) {
  }
  EXPECT_FALSE(xl::is_eager_mode());
}

TEST_F(LazySemantics, ErrorsAreRaisedWhenTheOpIsCalled) {
  auto a = xl::zeros({2, 3});
  auto b = xl::zeros({4, 5});
  try {
    xl::matmul(a, b);
    FAIL() << "expected xlite::Error";
  } catch (const xl::Error& e) {
    EXPECT_STREQ(e.what(), "[matmul] shapes [2,3] and [4,5] cannot be multiplied");
  }
  EXPECT_THROW(a + b, xl::Error);
  EXPECT_THROW(xl::sum(a, {2}), xl::Error);
  EXPECT_THROW(xl::Tensor().shape(), xl::Error);
  EXPECT_THROW(xl::exp(xl::Tensor()), xl::Error);
}

TEST_F(LazySemantics, OutOfRangeIndexRaisesWhenComputed) {
  auto table = xl::tensor(std::vector<float>{1, 2, 3});
  auto index = xl::tensor(std::vector<int64_t>{0, 3});
  auto picked = xl::index_select(table, 0, index);  // tracing cannot see the value
  try {
    picked.to_vector<float>();
    FAIL() << "expected xlite::Error";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[index_select] index 3 is out of range"), std::string::npos) << e.what();
  }
}

TEST_F(LazySemantics, InPlaceOpsRebindEveryAlias) {
  auto w = xl::tensor(std::vector<float>{1, 2});
  auto alias = w;
  auto before = w * 1.0f;  // a value taken before the update keeps the old data
  w.sub_(xl::tensor(std::vector<float>{0.5f, 0.5f}));
  w.mul_(2.0);
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1, 3}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1, 2}));
  w.zero_();
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{0, 0}));
  w.fill_(7);
  w += 1;
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{8, 8}));
  w.copy_(xl::tensor(3.5));  // broadcasts and converts
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{3.5f, 3.5f}));
}

TEST_F(LazySemantics, InPlaceOpsCheckShapeAndDtype) {
  auto i = xl::tensor(std::vector<int32_t>{1, 2});
  EXPECT_THROW(i.add_(0.5), xl::Error);  // f32 result cannot be written to i32
  auto f = xl::zeros({2});
  EXPECT_THROW(f.add_(xl::zeros({3, 2})), xl::Error);  // would change the shape
  f.add_(i);                                           // int into float is fine
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST_F(LazySemantics, ANoOpReshapeIsAViewAndACloneIsNot) {
  auto x = xl::tensor(std::vector<float>{1, 2});
  auto y = xl::reshape(x, {2});  // a new handle that shares x's storage, as PyTorch's
  y.add_(1);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 3}));
  auto c = xl::clone(x);
  c.add_(1);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST_F(LazySemantics, LongLoopDoesNotGrowMemory) {
  auto x = xl::zeros({256});
  xl::sync();
  auto step = [&] {
    x = x * 0.5f + 1.0f;
    xl::sync();
  };
  for (int i = 0; i < 100; ++i) step();
  int64_t used = xl::get_memory_info(xl::device()).bytes_used;
  int64_t live_tensors = counter("CreateTensor") - counter("DestroyTensor");
  for (int i = 0; i < 10000; ++i) step();
  EXPECT_EQ(xl::get_memory_info(xl::device()).bytes_used, used);
  EXPECT_EQ(counter("CreateTensor") - counter("DestroyTensor"), live_tensors);
  EXPECT_NEAR(x.to_vector<float>()[0], 2.0f, 1e-6);
}

TEST_F(LazySemantics, DeepChainsWithoutSyncDoNotOverflowTheStack) {
  auto x = xl::ones({4});
  for (int i = 0; i < 50000; ++i) x = x + 1.0f;
  EXPECT_EQ(x.to_vector<float>()[0], 50001.0f);
}

TEST_F(LazySemantics, TracingTimeIsRecorded) {
  int64_t samples = xl::metrics::metric_data("TracingTime").samples;
  auto x = xl::tensor(std::vector<float>{1});
  auto y = xl::exp(x) + 2.0f;
  xl::sync();
  EXPECT_EQ(xl::metrics::metric_data("TracingTime").samples, samples + 1);
  EXPECT_GT(xl::metrics::metric_data("CompileTime").samples + xl::metrics::counter_value("CachedCompile"), 0);
}

TEST_F(LazySemantics, PrintingIsAValueRead) {
  auto x = xl::tensor(std::vector<float>{1.5f, -2.0f, 3.0f, 4.0f}, {2, 2}) * 2.0f;
  std::ostringstream out;
  out << x;
  EXPECT_EQ(out.str(), "tensor([[ 3., -4.],\n        [ 6.,  8.]])");
  EXPECT_FALSE(x.is_pending());
}
