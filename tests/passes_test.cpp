// Passes as text IR in, text IR out.
#include <gtest/gtest.h>

#include "compiler/passes/passes.h"
#include "ir/graph.h"

namespace {
using namespace xlite;

std::string run(ir::Graph (*pass)(const ir::Graph&), const std::string& text) {
  ir::Graph out = pass(ir::parse_graph(text));
  ir::verify(out);
  return ir::to_text(out);
}
}  // namespace

TEST(Passes, SimplifyRemovesArithmeticIdentities) {
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[4]\n"
                "%1 = constant(value=1.0, dtype=f32) : f32[]\n"
                "%2 = broadcast(%1, shape=[4], dims=[]) : f32[4]\n"
                "%3 = mul(%0, %2) : f32[4]\n"
                "%4 = constant(value=0.0, dtype=f32) : f32[]\n"
                "%5 = broadcast(%4, shape=[4], dims=[]) : f32[4]\n"
                "%6 = add(%5, %3) : f32[4]\n"
                "%7 = div(%6, %2) : f32[4]\n"
                "%8 = neg(%7) : f32[4]\n"
                "%9 = neg(%8) : f32[4]\n"
                "%10 = exp(%9) : f32[4]\n"
                "return %10\n"),
            "%0 = parameter(index=0) : f32[4]\n"
            "%1 = exp(%0) : f32[4]\n"
            "return %1\n");
}

TEST(Passes, SimplifyComposesLayoutOps) {
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[2,3,4]\n"
                "%1 = transpose(%0, perm=[2,0,1]) : f32[4,2,3]\n"
                "%2 = transpose(%1, perm=[1,2,0]) : f32[2,3,4]\n"
                "%3 = reshape(%2, shape=[6,4]) : f32[6,4]\n"
                "%4 = reshape(%3, shape=[24]) : f32[24]\n"
                "%5 = transpose(%0, perm=[1,0,2]) : f32[3,2,4]\n"
                "%6 = transpose(%5, perm=[0,2,1]) : f32[3,4,2]\n"
                "return %4, %6\n"),
            "%0 = parameter(index=0) : f32[2,3,4]\n"
            "%1 = reshape(%0, shape=[24]) : f32[24]\n"
            "%2 = transpose(%0, perm=[1,2,0]) : f32[3,4,2]\n"
            "return %1, %2\n");
}

TEST(Passes, SimplifyFoldsBroadcastOfBroadcast) {
  EXPECT_EQ(run(compiler::passes::simplify,
                "%0 = parameter(index=0) : f32[3]\n"
                "%1 = broadcast(%0, shape=[2,3], dims=[1]) : f32[2,3]\n"
                "%2 = broadcast(%1, shape=[5,2,3], dims=[1,2]) : f32[5,2,3]\n"
                "return %2\n"),
            "%0 = parameter(index=0) : f32[3]\n"
            "%1 = broadcast(%0, shape=[2,3], dims=[1]) : f32[2,3]\n"
            "%2 = broadcast(%0, shape=[5,2,3], dims=[2]) : f32[5,2,3]\n"
            "return %2\n");
}

TEST(Passes, NoOpLayoutOpsDisappear) {
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[2,3]\n"
                "%1 = reshape(%0, shape=[2,3]) : f32[2,3]\n"
                "%2 = slice(%1, start=[0,0], limit=[2,3], stride=[1,1]) : f32[2,3]\n"
                "%3 = broadcast(%2, shape=[2,3], dims=[0,1]) : f32[2,3]\n"
                "%4 = convert(%3, dtype=f32) : f32[2,3]\n"
                "%5 = transpose(%4, perm=[0,1]) : f32[2,3]\n"
                "return %5\n"),
            "%0 = parameter(index=0) : f32[2,3]\n"
            "return %0\n");
}

TEST(Passes, CseMergesEqualInstructions) {
  EXPECT_EQ(run(compiler::passes::cse,
                "%0 = parameter(index=0) : f32[4]\n"
                "%1 = parameter(index=1) : f32[4]\n"
                "%2 = exp(%0) : f32[4]\n"
                "%3 = exp(%0) : f32[4]\n"
                "%4 = exp(%1) : f32[4]\n"
                "%5 = add(%2, %3) : f32[4]\n"
                "%6 = add(%5, %4) : f32[4]\n"
                "return %6\n"),
            "%0 = parameter(index=0) : f32[4]\n"
            "%1 = parameter(index=1) : f32[4]\n"
            "%2 = exp(%0) : f32[4]\n"
            "%3 = exp(%1) : f32[4]\n"
            "%4 = add(%2, %2) : f32[4]\n"
            "%5 = add(%4, %3) : f32[4]\n"
            "return %5\n");
}

TEST(Passes, DceKeepsParametersAndOutputs) {
  EXPECT_EQ(run(compiler::passes::dce,
                "%0 = parameter(index=0) : f32[4]\n"
                "%1 = exp(%0) : f32[4]\n"
                "%2 = parameter(index=1) : f32[4]\n"
                "%3 = log(%0) : f32[4]\n"
                "return %3, %3\n"),
            "%0 = parameter(index=0) : f32[4]\n"
            "%1 = parameter(index=1) : f32[4]\n"
            "%2 = log(%0) : f32[4]\n"
            "return %2, %2\n");
}

TEST(Passes, ConstantFoldingUsesTheOracle) {
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[2]\n"
                "%1 = constant(value=1.0, dtype=f32) : f32[]\n"
                "%2 = neg(%1) : f32[]\n"
                "%3 = exp(%2) : f32[]\n"
                "%4 = broadcast(%3, shape=[2], dims=[]) : f32[2]\n"
                "%5 = mul(%0, %4) : f32[2]\n"
                "%6 = constant(value=1.0, dtype=i32) : i32[]\n"
                "%7 = convert(%6, dtype=f64) : f64[]\n"
                "return %5, %7\n"),
            "%0 = parameter(index=0) : f32[2]\n"
            "%1 = constant(value=0.36787945032119751, dtype=f32) : f32[]\n"
            "%2 = broadcast(%1, shape=[2], dims=[]) : f32[2]\n"
            "%3 = mul(%0, %2) : f32[2]\n"
            "%4 = constant(value=1.0, dtype=f64) : f64[]\n"
            "return %3, %4\n");
}

TEST(Passes, FoldingLeavesRunTimeErrorsToRunTime) {
  // Integer division by zero must still raise when the program runs, so it is not folded away.
  std::string text =
      "%0 = constant(value=1.0, dtype=i32) : i32[]\n"
      "%1 = constant(value=0.0, dtype=i32) : i32[]\n"
      "%2 = remainder(%0, %1) : i32[]\n"
      "return %2\n";
  EXPECT_EQ(run(compiler::passes::fold_constants, text), text);
}

TEST(Passes, TypeChangingIdentitiesAreKept) {
  // x * 1 where the 1 broadcasts x to a larger shape is not x.
  std::string text =
      "%0 = parameter(index=0) : f32[1]\n"
      "%1 = broadcast(%0, shape=[3], dims=[0]) : f32[3]\n"
      "%2 = constant(value=1.0, dtype=f32) : f32[]\n"
      "%3 = broadcast(%2, shape=[3], dims=[]) : f32[3]\n"
      "%4 = mul(%1, %3) : f32[3]\n"
      "return %4\n";
  EXPECT_EQ(run(compiler::passes::optimize, text),
            "%0 = parameter(index=0) : f32[1]\n"
            "%1 = broadcast(%0, shape=[3], dims=[0]) : f32[3]\n"
            "return %1\n");
}

TEST(Passes, DoubleLogicalNotOfANumberIsATruthTest) {
  // Found by the random-graph tester: not(not x) may only drop out when x is already bool.
  std::string text =
      "%0 = parameter(index=0) : i64[3]\n"
      "%1 = logical_not(%0) : bool[3]\n"
      "%2 = logical_not(%1) : bool[3]\n"
      "return %2\n";
  EXPECT_EQ(run(compiler::passes::optimize, text), text);
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : bool[3]\n"
                "%1 = logical_not(%0) : bool[3]\n"
                "%2 = logical_not(%1) : bool[3]\n"
                "return %2\n"),
            "%0 = parameter(index=0) : bool[3]\nreturn %0\n");
}

// (a b)^T becomes b^T a^T, whose transposes the GEMM reads through flags; transposes of transposes cancel.
// A product that something else also reads is left alone (no GEMM is computed twice).
TEST(Passes, TransposedProductBecomesProductOfTransposes) {
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[8,3]\n"
                "%1 = parameter(index=1) : f32[8,5]\n"
                "%2 = transpose(%0, perm=[1,0]) : f32[3,8]\n"
                "%3 = dot(%2, %1) : f32[3,5]\n"
                "%4 = transpose(%3, perm=[1,0]) : f32[5,3]\n"
                "return %4\n"),
            "%0 = parameter(index=0) : f32[8,3]\n"
            "%1 = parameter(index=1) : f32[8,5]\n"
            "%2 = transpose(%1, perm=[1,0]) : f32[5,8]\n"
            "%3 = dot(%2, %0) : f32[5,3]\n"
            "return %3\n");
  EXPECT_EQ(run(compiler::passes::optimize,
                "%0 = parameter(index=0) : f32[2,4,3]\n"
                "%1 = parameter(index=1) : f32[2,3,5]\n"
                "%2 = dot(%0, %1) : f32[2,4,5]\n"
                "%3 = transpose(%2, perm=[0,2,1]) : f32[2,5,4]\n"
                "return %3\n"),
            "%0 = parameter(index=0) : f32[2,4,3]\n"
            "%1 = parameter(index=1) : f32[2,3,5]\n"
            "%2 = transpose(%1, perm=[0,2,1]) : f32[2,5,3]\n"
            "%3 = transpose(%0, perm=[0,2,1]) : f32[2,3,4]\n"
            "%4 = dot(%2, %3) : f32[2,5,4]\n"
            "return %4\n");
  const std::string shared =
      "%0 = parameter(index=0) : f32[4,3]\n"
      "%1 = parameter(index=1) : f32[3,5]\n"
      "%2 = dot(%0, %1) : f32[4,5]\n"
      "%3 = transpose(%2, perm=[1,0]) : f32[5,4]\n"
      "return %2, %3\n";
  EXPECT_EQ(run(compiler::passes::optimize, shared), shared);
  const std::string not_matrix_transpose =
      "%0 = parameter(index=0) : f32[2,4,3]\n"
      "%1 = parameter(index=1) : f32[2,3,5]\n"
      "%2 = dot(%0, %1) : f32[2,4,5]\n"
      "%3 = transpose(%2, perm=[1,0,2]) : f32[4,2,5]\n"
      "return %3\n";
  EXPECT_EQ(run(compiler::passes::optimize, not_matrix_transpose), not_matrix_transpose);
}
