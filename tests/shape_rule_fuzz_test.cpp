// The shape rules under random extreme operands and attributes (compiler/random_shape_rules.h): each call
// raises xlite::Error or gives an addressable type that exact arithmetic agrees with. Under UBSan any
// signed overflow in a rule stops the test. XLITE_SHAPE_RULE_CASES sets the number of cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "testing/random_shape_rules.h"

namespace {
namespace xt = xlite::testing;

int64_t case_count() {
  if (const char* env = std::getenv("XLITE_SHAPE_RULE_CASES"); env && *env) return std::atoll(env);
  return 200000;
}

TEST(ShapeRuleFuzz, EveryRuleRaisesOrGivesAnAddressableExactType) {
  const int64_t n = case_count();
  std::set<xlite::ir::OpId> accepted_ops;
  int64_t accepted = 0;
  for (int64_t seed = 0; seed < n; ++seed) {
    xt::ShapeRuleOutcome outcome = xt::check_shape_rule(xt::random_shape_rule_case(static_cast<uint64_t>(seed)));
    ASSERT_TRUE(outcome.ok) << "seed " << seed << ": " << outcome.message;
    if (outcome.accepted) {
      ++accepted;
      accepted_ops.insert(xt::random_shape_rule_case(static_cast<uint64_t>(seed)).op);
    }
  }
  // The cases get past the rules' early checks often enough to reach their arithmetic, for every op.
  EXPECT_GT(accepted, n / 20);
  EXPECT_EQ(accepted_ops.size(), static_cast<size_t>(xlite::ir::kNumOps - 1));
}

TEST(ShapeRuleFuzz, CasesAreDeterministic) {
  for (uint64_t seed : {0u, 7u, 12345u}) {
    auto a = xt::random_shape_rule_case(seed), b = xt::random_shape_rule_case(seed);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.shapes, b.shapes);
    EXPECT_TRUE(a.attrs == b.attrs);
  }
}

}  // namespace
