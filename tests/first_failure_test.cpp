// A graph with several bad values raises, on every backend, the error of its first failing instruction
// in the graph's order, as the reference backend evaluates it (which names that instruction's first bad
// element; the cpu backend's loops name the largest they met, backends/cpu/kernel.h). The cpu backend fuses
// instructions into loops over elements and runs the steps that may raise early, so it reaches bad values in
// another order and must still report that instruction.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "backend_support.h"
#include "compiler/cache.h"
#include "ir/graph.h"
#include "runtime/allocator.h"
#include "test_support.h"

namespace {
namespace xl = xlite;
using namespace xlite_test;

void ExpectEveryBackendRaises(const std::string& text, const std::vector<xl::BufferPtr>& args,
                              const std::string& error) {
  xl::ir::Graph graph = xl::ir::parse_graph(text);
  for (const std::string& backend : Backends())
    EXPECT_EQ(ErrorMessage([&] { xl::compiler::compile_with(graph, backend)->run(args); }), error) << backend;
}

TEST(FirstFailure, InOneLoopTheEarlierInstructionWinsOverTheEarlierElement) {
  // Found by fuzz_ir: element 0 divides by zero, element 1 gathers index 7 of 7. The loop reaches the
  // gather of element 1 after the remainder of element 0 and kept the last failure it saw.
  const std::string text =
      "%0 = parameter(index=0) : f32[7]\n"
      "%1 = parameter(index=1) : i32[5]\n"
      "%2 = constant(value=7.0, dtype=i32) : i32[]\n"
      "%3 = broadcast(%2, shape=[5], dims=[]) : i32[5]\n"
      "%4 = remainder(%3, %1) : i32[5]\n"
      "%5 = gather(%0, %4, dim=0) : f32[5]\n"
      "return %5\n";
  ExpectEveryBackendRaises(text, {Upload<float>({0, 1, 2, 3, 4, 5, 6}), Upload<int32_t>({0, 9, 1, 1, 1})},
                           "[remainder] integer division by zero");
  // With the bad values the other way round, the remainder fails at element 1 and is still first.
  ExpectEveryBackendRaises(text, {Upload<float>({0, 1, 2, 3, 4, 5, 6}), Upload<int32_t>({9, 0, 1, 1, 1})},
                           "[remainder] integer division by zero");
  // Only the gather fails: the first bad element is the one reported.
  ExpectEveryBackendRaises(text, {Upload<float>({0, 1, 2, 3, 4, 5, 6}), Upload<int32_t>({1, 9, 8, 1, 1})},
                           "[gather] index 7 is out of range for dim 0 of size 7");
}

TEST(FirstFailure, ANegativePowerIsOrderedLikeTheOtherFailures) {
  // The power helper wrote its failure over whatever the loop had noted, without its instruction.
  const std::string text =
      "%0 = parameter(index=0) : f32[4]\n"
      "%1 = parameter(index=1) : i64[3]\n"
      "%2 = parameter(index=2) : i64[3]\n"
      "%3 = pow(%1, %2) : i64[3]\n"
      "%4 = gather(%0, %3, dim=0) : f32[3]\n"
      "return %4\n";
  // Element 0: 2^-1; element 1: 3^2 = 9, out of range.
  ExpectEveryBackendRaises(text, {Upload<float>({0, 1, 2, 3}), Upload<int64_t>({2, 3, 1}), Upload<int64_t>({-1, 2, 1})},
                           "[pow] integers to negative integer powers are not allowed (exponent -1)");
  ExpectEveryBackendRaises(text, {Upload<float>({0, 1, 2, 3}), Upload<int64_t>({3, 2, 1}), Upload<int64_t>({2, -3, 1})},
                           "[pow] integers to negative integer powers are not allowed (exponent -3)");
  // 1 and -1 have every integer power.
  xl::ir::Graph powers = xl::ir::parse_graph(
      "%0 = parameter(index=0) : i64[4]\n%1 = parameter(index=1) : i64[4]\n%2 = pow(%0, %1) : i64[4]\nreturn %2\n");
  for (const std::string& backend : Backends()) {
    std::vector<xl::BufferPtr> args = {Upload<int64_t>({1, -1, -1, 3}), Upload<int64_t>({-5, -3, -2, 2})};
    auto out = xl::compiler::compile_with(powers, backend)->run(args);
    EXPECT_EQ(std::vector<int64_t>(out[0]->as<int64_t>(), out[0]->as<int64_t>() + 4),
              (std::vector<int64_t>{1, -1, 1, 9}))
        << backend;
  }
}

TEST(FirstFailure, OfTwoStepsTheOneEarlierInTheProgramWins) {
  // Two independent steps that may raise: the cpu backend moves both to the front and ran the later one
  // first, raising its error.
  const std::string text =
      "%0 = parameter(index=0) : f32[3]\n"
      "%1 = parameter(index=1) : i64[2]\n"
      "%2 = gather(%0, %1, dim=0) : f32[2]\n"
      "%3 = parameter(index=2) : i32[2]\n"
      "%4 = parameter(index=3) : i32[2]\n"
      "%5 = remainder(%3, %4) : i32[2]\n"
      "%6 = neg(%0) : f32[3]\n"
      "return %6, %5, %2\n";
  auto args = [](std::vector<int64_t> index, std::vector<int32_t> divisor) {
    return std::vector<xl::BufferPtr>{Upload<float>({1, 2, 3}), Upload<int64_t>(index), Upload<int32_t>({5, 6}),
                                      Upload<int32_t>(divisor)};
  };
  ExpectEveryBackendRaises(text, args({0, 3}, {0, 1}), "[gather] index 3 is out of range for dim 0 of size 3");
  ExpectEveryBackendRaises(text, args({0, 2}, {1, 0}), "[remainder] integer division by zero");
  ExpectEveryBackendRaises(text, args({-1, 0}, {1, 1}), "[gather] index -1 is out of range for dim 0 of size 3");
}

}  // namespace
