// The text IR: golden output, round trips to the same hash, parse and verifier errors.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ir/graph.h"

namespace xl = xlite;
using xl::ir::parse_graph;
using xl::ir::to_text;

TEST(IrText, GoldenTextOfAPendingGraph) {
  auto a = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = xl::softmax(a, 1);
  EXPECT_EQ(xl::debug::graph_text({b}),
            "%0 = parameter(index=0) : f32[2,3]\n"
            "%1 = reduce_max(%0, dims=[1], keepdim=true) : f32[2,1]\n"
            "%2 = broadcast(%1, shape=[2,3], dims=[0,1]) : f32[2,3]\n"
            "%3 = sub(%0, %2) : f32[2,3]\n"
            "%4 = exp(%3) : f32[2,3]\n"
            "%5 = reduce_sum(%4, dims=[1], keepdim=true) : f32[2,1]\n"
            "%6 = reciprocal(%5) : f32[2,1]\n"
            "%7 = broadcast(%6, shape=[2,3], dims=[0,1]) : f32[2,3]\n"
            "%8 = mul(%4, %7) : f32[2,3]\n"
            "return %8\n");
}

TEST(IrText, RoundTripKeepsTheHash) {
  auto x = xl::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  auto i = xl::tensor(std::vector<int64_t>{1, 0});
  auto y = xl::pad(xl::index_select(x, 0, i), {1, 1}, 2.5) * 0.1f;
  auto z = xl::argmax(xl::matmul(x, x.t()), 1) + xl::arange(2);
  auto w = xl::concat({x, xl::flip(x, {0})}, 1).to(xl::DType::bf16);
  std::string text = xl::debug::graph_text({y, z, w});
  xl::ir::Graph parsed = parse_graph(text);
  EXPECT_EQ(to_text(parsed), text);
  EXPECT_EQ(parsed.hash(), xl::debug::graph_hash({y, z, w}));
}

TEST(IrText, NamedValuesParseToTheGraphOfTheirNumbers) {
  const auto named = parse_graph(
      "%x = parameter(index=0) : f32[4]\n"
      "%scale = parameter(index=1) : f32[4]\n"
      "%2 = mul(%x, %scale) : f32[4]\n"
      "%y.exp = exp(%2) : f32[4]\n"
      "return %y.exp, %x\n");
  const std::string numbered =
      "%0 = parameter(index=0) : f32[4]\n"
      "%1 = parameter(index=1) : f32[4]\n"
      "%2 = mul(%0, %1) : f32[4]\n"
      "%3 = exp(%2) : f32[4]\n"
      "return %3, %0\n";
  EXPECT_EQ(to_text(named), numbered);
  EXPECT_EQ(named.hash(), parse_graph(numbered).hash());
  // A number still names the instruction at that position, and only it.
  EXPECT_THROW(parse_graph("%x = parameter(index=0) : f32[4]\n%2 = exp(%x) : f32[4]\nreturn %2\n"), xl::Error);
}

TEST(IrText, ParsesCommentsAndSpecialFloats) {
  auto g = parse_graph(
      "# a comment\n"
      "%0 = parameter(index=0) : f32[3]   # the input\n"
      "%1 = constant(value=nan, dtype=f32) : f32[]\n"
      "%2 = broadcast(%1, shape=[3], dims=[]) : f32[3]\n"
      "%3 = maximum(%0, %2) : f32[3]\n"
      "return %3, %0\n");
  EXPECT_EQ(g.instrs.size(), 4u);
  EXPECT_EQ(g.outputs, (std::vector<int32_t>{3, 0}));
  EXPECT_EQ(parse_graph(to_text(g)).hash(), g.hash());
}

// Every double a constant can hold prints and parses back to its bits: -nan printed by xlite once failed
// to parse, and a NaN's payload and sign were lost.
TEST(IrText, FloatConstantsRoundTripBitForBit) {
  const std::vector<double> values = {
      std::bit_cast<double>(uint64_t{0xfff8000000000000}),  // -nan, as 0.0/0.0 gives on x86
      std::bit_cast<double>(uint64_t{0x7ff8000000000000}),  // nan
      std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // a signalling NaN with payload 1
      std::bit_cast<double>(uint64_t{0xfff4000000000abc}),
      INFINITY,
      -INFINITY,
      -0.0,
      0.0,
      4.9406564584124654e-324,
      -2.2250738585072009e-308,
      0.1,
      1.0 / 3,
      static_cast<double>(std::numeric_limits<float>::denorm_min()),
      1.7976931348623157e308};
  for (double v : values) {
    xl::ir::Graph g;
    g.instrs.push_back(parse_graph("%0 = constant(value=1.0, dtype=f64) : f64[]\nreturn %0\n").instrs[0]);
    g.instrs[0].attrs.set_float(xl::ir::AttrKey::value, v);
    g.outputs = {0};
    const std::string printed = to_text(g);
    xl::ir::Graph parsed = parse_graph(printed);
    const double back = parsed.instrs[0].attrs.get_float(xl::ir::AttrKey::value);
    EXPECT_EQ(std::bit_cast<uint64_t>(back), std::bit_cast<uint64_t>(v)) << printed;
    EXPECT_EQ(to_text(parsed), printed);
  }
  EXPECT_EQ(to_text(parse_graph("%0 = constant(value=-nan, dtype=f32) : f32[]\nreturn %0\n")),
            "%0 = constant(value=-nan, dtype=f32) : f32[]\nreturn %0\n");
  EXPECT_EQ(to_text(parse_graph("%0 = constant(value=nan_0x1, dtype=f64) : f64[]\nreturn %0\n")),
            "%0 = constant(value=nan_0x1, dtype=f64) : f64[]\nreturn %0\n");
  // A zero payload would be infinity, and a payload wider than 52 bits is no double.
  EXPECT_THROW(parse_graph("%0 = constant(value=nan_0x0, dtype=f64) : f64[]\nreturn %0\n"), xl::Error);
  EXPECT_THROW(parse_graph("%0 = constant(value=nan_0x10000000000000, dtype=f64) : f64[]\nreturn %0\n"), xl::Error);
}

TEST(IrText, ParseErrorsNameTheLine) {
  auto expect_error = [](const char* text, const char* fragment) {
    try {
      parse_graph(text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const xl::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("%0 = parameter(index=0) : f32[2]\n%1 = frobnicate(%0) : f32[2]\nreturn %1\n", "line 2: unknown op");
  expect_error("%0 = parameter(index=0) : f32[2]\n%1 = exp(%5) : f32[2]\nreturn %1\n", "line 2");
  expect_error("%0 = parameter(index=0) : f99[2]\nreturn %0\n", "unknown dtype");
  expect_error("%0 = parameter(index=0) : f32[2]\n", "missing 'return'");
  expect_error("%0 = parameter(index=0) : f32[2\nreturn %0\n", "line 1");
  expect_error("%1 = parameter(index=0) : f32[2]\nreturn %1\n", "numbered in order");
}

TEST(IrText, VerifierChecksTypesAndWiring) {
  auto expect_error = [](const char* text, const char* fragment) {
    try {
      parse_graph(text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const xl::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("%0 = parameter(index=0) : f32[2]\n%1 = exp(%0) : f32[3]\nreturn %1\n", "declared type f32[3]");
  expect_error(
      "%0 = parameter(index=0) : f32[2]\n%1 = parameter(index=1) : f32[3]\n%2 = add(%0, %1) : f32[2]\nreturn %2\n",
      "operands must have one type");
  expect_error("%0 = parameter(index=1) : f32[2]\nreturn %0\n", "parameter index 1");
  expect_error("%0 = parameter(index=0) : i32[2]\n%1 = exp(%0) : i32[2]\nreturn %1\n", "needs a floating operand");
  expect_error("%0 = parameter(index=0) : f32[2,2]\n%1 = reduce_sum(%0, dims=[2], keepdim=false) : f32[2]\nreturn %1\n",
               "out of range");
  expect_error("%0 = parameter(index=0) : f32[2]\n%1 = exp(%0, %0) : f32[2]\nreturn %1\n", "expects 1 operands");
}

TEST(IrText, EveryOpNameRoundTrips) {
  for (int i = 0; i < xl::ir::kNumOps; ++i) {
    auto op = static_cast<xl::ir::OpId>(i);
    xl::ir::OpId back;
    ASSERT_TRUE(xl::ir::op_from_name(xl::ir::op_name(op), &back));
    EXPECT_EQ(back, op);
  }
}
