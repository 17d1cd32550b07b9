// Backends plug in as targets: the compiler runs the pipeline, a target only lowers regions, and one
// executor runs what any target lowered.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include <atomic>
#include <vector>

#include "backend_support.h"
#include "backends/cpu/target.h"
#include "compiler/backend_registry.h"
#include "compiler/cache.h"
#include "compiler/fusion.h"
#include "ir/graph.h"

namespace xl = xlite;

namespace {

// The CPU target, counting the regions it is asked to lower.
class CountingTarget final : public xl::compiler::Target {
 public:
  explicit CountingTarget(std::atomic<int>* lowered) : cpu_(xl::backends::cpu::make_target()), lowered_(lowered) {}
  std::string name() const override { return "counting"; }
  xl::compiler::LoweredRegion lower(const xl::ir::Graph& graph, const xl::compiler::Region& region) override {
    ++*lowered_;
    return cpu_->lower(graph, region);
  }

 private:
  std::unique_ptr<xl::compiler::Target> cpu_;
  std::atomic<int>* lowered_;
};

std::atomic<int> regions_lowered{0};

const char* kSoftmaxAndMatmul =
    "%x = parameter(index=0) : f32[2,3]\n"
    "%w = parameter(index=1) : f32[3,4]\n"
    "%e = exp(%x) : f32[2,3]\n"
    "%s = reduce_sum(%e, dims=[1], keepdim=false) : f32[2]\n"
    "%b = broadcast(%s, shape=[2,3], dims=[0]) : f32[2,3]\n"
    "%p = div(%e, %b) : f32[2,3]\n"
    "%y = dot(%p, %w) : f32[2,4]\n"
    "return %y\n";

}  // namespace

TEST(Targets, ARegisteredTargetCompilesThroughThePipelineAndAgreesWithTheReference) {
  static bool registered = [] {
    xl::compiler::register_backend("counting", [] {
      return xl::compiler::backend_for_target(std::make_unique<CountingTarget>(&regions_lowered));
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  const xl::ir::Graph graph = xl::ir::parse_graph(kSoftmaxAndMatmul);
  std::vector<xl::BufferPtr> args = {xlite_test::Upload(std::vector<float>{0.5f, -1, 2, 0, 1, 3}),
                                     xlite_test::Upload(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})};
  const int before = regions_lowered;
  auto counted = xl::compiler::compile_with(graph, "counting")->run(args);
  // The softmax loop (with its row sum inside) and the GEMM.
  EXPECT_EQ(regions_lowered - before, 2);
  auto reference = xl::compiler::compile_with(graph, "reference")->run(args);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(counted[0]->as<float>()[i], reference[0]->as<float>()[i], 1e-5f) << i;
  const auto names = xl::compiler::backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "counting"), names.end());
  // A name is registered once.
  EXPECT_THROW(xl::compiler::register_backend("cpu", [] { return std::unique_ptr<xl::runtime::Backend>(); }),
               xl::Error);
}

// A target whose libraries take no dtype gets every dot as a reference fallback region; the default policy
// sends an f32 dot to the GEMM library and an integer one to the fallback.
TEST(Targets, TheFusionPolicyDecidesWhichDotsGoToTheLibrary) {
  const xl::ir::Graph f32_dot = xl::ir::parse_graph(
      "%a = parameter(index=0) : f32[2,3]\n%b = parameter(index=1) : f32[3,4]\n%c = dot(%a, %b) : f32[2,4]\nreturn "
      "%c\n");
  const xl::ir::Graph i64_dot = xl::ir::parse_graph(
      "%a = parameter(index=0) : i64[2,3]\n%b = parameter(index=1) : i64[3,4]\n%c = dot(%a, %b) : i64[2,4]\nreturn "
      "%c\n");
  using xl::compiler::RegionKind;
  auto kind = [](const xl::ir::Graph& g, xl::compiler::FusionPolicy policy) {
    auto plan = xl::compiler::plan_fusion(g, policy);
    EXPECT_EQ(plan.regions.size(), 1u);
    return plan.regions.at(0).kind;
  };
  EXPECT_EQ(kind(f32_dot, {}), RegionKind::Matmul);
  EXPECT_EQ(kind(i64_dot, {}), RegionKind::Fallback);
  EXPECT_EQ(kind(f32_dot, {.matmul_dtypes = 0}), RegionKind::Fallback);
  EXPECT_EQ(kind(i64_dot, {.matmul_dtypes = 1u << static_cast<int>(xl::DType::i64)}), RegionKind::Matmul);
}
