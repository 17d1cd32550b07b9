// Fusion decisions are values: code reads the choice and the reason, people read the text (the .xir
// tests in tests/xir check the text).
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/fusion.h"
#include "ir/graph.h"

namespace xl = xlite;
using xl::compiler::FusionChoice;
using xl::compiler::FusionDecision;
using xl::compiler::MaterializeReason;

namespace {

const FusionDecision* Find(const xl::compiler::FusionPlan& plan, FusionChoice choice, int32_t value) {
  auto it = std::find_if(plan.decisions.begin(), plan.decisions.end(),
                         [&](const FusionDecision& d) { return d.choice == choice && d.value == value; });
  return it == plan.decisions.end() ? nullptr : &*it;
}

}  // namespace

TEST(FusionDecisions, EachMaterializedValueCarriesItsReason) {
  const auto plan =
      xl::compiler::plan_fusion(xl::ir::parse_graph("%x = parameter(index=0) : f32[8]\n"
                                                    "%e = exp(%x) : f32[8]\n"
                                                    "%a = add(%e, %x) : f32[8]\n"
                                                    "%m = mul(%e, %x) : f32[8]\n"
                                                    "%w = parameter(index=1) : f32[8,4]\n"
                                                    "%r = reshape(%m, shape=[1,8]) : f32[1,8]\n"
                                                    "%d = dot(%r, %w) : f32[1,4]\n"
                                                    "return %a, %d, %m\n"));
  const FusionDecision* exp = Find(plan, FusionChoice::materialize, 1);
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(exp->reason, MaterializeReason::shared_expensive);
  EXPECT_EQ(exp->text, "materialize %1 exp: exp is needed by 2 regions; computed once instead of duplicated");
  // The GEMM reads the output %m's buffer through the reshape: no copy of the reshape.
  EXPECT_EQ(Find(plan, FusionChoice::materialize, 5), nullptr);
  const FusionDecision* view = Find(plan, FusionChoice::read_in_place, 5);
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->text, "read %5 reshape in place from %3 mul through strides (%6 dot), no copy");
  // Outputs and region roots are materialized without a word; every region says its size.
  EXPECT_EQ(Find(plan, FusionChoice::materialize, 2), nullptr);
  for (int32_t root : {1, 2, 3, 6}) EXPECT_NE(Find(plan, FusionChoice::region, root), nullptr) << root;
}

TEST(FusionDecisions, RecomputationAndRowFusionAreDecisionsToo) {
  const auto plan =
      xl::compiler::plan_fusion(xl::ir::parse_graph("%x = parameter(index=0) : f32[4,8]\n"
                                                    "%m = reduce_max(%x, dims=[1], keepdim=false) : f32[4]\n"
                                                    "%b = broadcast(%m, shape=[4,8], dims=[0]) : f32[4,8]\n"
                                                    "%s = sub(%x, %b) : f32[4,8]\n"
                                                    "%e = exp(%s) : f32[4,8]\n"
                                                    "%t = reduce_sum(%e, dims=[1], keepdim=false) : f32[4]\n"
                                                    "%u = broadcast(%t, shape=[4,8], dims=[0]) : f32[4,8]\n"
                                                    "%y = div(%e, %u) : f32[4,8]\n"
                                                    "return %y\n"));
  EXPECT_NE(Find(plan, FusionChoice::compute_by_rows, 1), nullptr);
  EXPECT_NE(Find(plan, FusionChoice::compute_by_rows, 5), nullptr);
  ASSERT_EQ(plan.regions.size(), 1u);
  for (const FusionDecision& d : plan.decisions)
    EXPECT_EQ(d.reason.has_value(), d.choice == FusionChoice::materialize) << d.text;
}
