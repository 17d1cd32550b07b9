// The runtime context: every piece of process-wide state is listed in one place, and clear_caches()
// empties the caches among them without breaking tensors or compiled programs still held.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <xlite/xlite.h>

#include "backends/cpu/kernel.h"
#include "compiler/cache.h"
#include "test_support.h"

namespace xl = xlite;

namespace {
std::string StateOf(const std::string& name) {
  for (const auto& [state, text] : xl::debug::runtime_state())
    if (state == name) return text;
  return "(missing)";
}
}  // namespace

TEST(RuntimeContext, ListsEveryProcessWideState) {
  xl::Tensor x = xl::tanh(xl::arange(0, 64, 1)) * 2.0;
  EXPECT_EQ(x.to_vector<float>().size(), 64u);
  for (const char* name : {"settings", "live tensors", "allocators", "metrics", "sync", "backends", "executable cache",
                           "kernel cache", "jit"})
    EXPECT_NE(StateOf(name), "(missing)") << name;
  EXPECT_NE(StateOf("allocators").find("cpu:0:"), std::string::npos) << StateOf("allocators");
  EXPECT_NE(StateOf("executable cache").find("programs"), std::string::npos) << StateOf("executable cache");
  EXPECT_NE(StateOf("backends").find("cpu (made)"), std::string::npos) << StateOf("backends");
  // Each state is listed once, however often it is used.
  std::vector<std::string> names;
  for (const auto& [state, text] : xl::debug::runtime_state()) names.push_back(state);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(RuntimeContext, ClearCachesEmptiesThemAndEverythingStillRuns) {
  xl::Tensor kept = xl::exp(xl::tensor(std::vector<float>{0, 1, 2}));
  auto step = xl::compile([](const xl::Tensor& t) { return xl::sigmoid(t) * 3.0; });
  xl::Tensor input = xl::tensor(std::vector<float>{-1, 0, 1});
  const std::vector<float> before = step(input).to_vector<float>();
  xl::sync();
  xl::Tensor garbage = xl::ones({1 << 16});
  xl::sync({garbage});
  garbage = xl::Tensor();  // its block goes to the allocator's cache
  ASSERT_GT(xl::get_memory_info(xl::device(0)).bytes_cached, 0);
  ASSERT_GT(xl::compiler::executable_cache().size(), 0u);

  xl::clear_caches();
  EXPECT_EQ(xl::compiler::executable_cache().size(), 0u);
  EXPECT_EQ(xl::backends::cpu::kernels_cached(), 0);
  EXPECT_EQ(xl::get_memory_info(xl::device(0)).bytes_cached, 0);

  const int64_t compiles = xl::metrics::counter_value("UncachedCompile");
  xlite_test::ExpectClose(kept.to_vector<float>(), {1, std::exp(1.0), std::exp(2.0)});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(step(input).to_vector<float>(), before);
  xl::Tensor again = xl::exp(xl::tensor(std::vector<float>{0, 1, 2}));
  xlite_test::ExpectClose(again.to_vector<float>(), {1, std::exp(1.0), std::exp(2.0)});
  EXPECT_GT(xl::metrics::counter_value("UncachedCompile"), compiles);
}

TEST(RuntimeContext, ModesAreThreadScoped) {
  xl::EagerModeGuard eager(true);
  xl::NoGradGuard no_grad;
  bool other_eager = true, other_grad = false;
  std::thread([&] {
    other_eager = xl::is_eager_mode();
    other_grad = xl::is_grad_enabled();
  }).join();
  EXPECT_TRUE(xl::is_eager_mode());
  EXPECT_FALSE(xl::is_grad_enabled());
  EXPECT_FALSE(other_eager);
  EXPECT_TRUE(other_grad);
}
