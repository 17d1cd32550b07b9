// What a graph may say and what a backend must do with it: a constant or pad value must be a value of its
// dtype (the verifier rejects the rest, which backends converted differently or with undefined behaviour),
// and a bad value in dead code raises on no backend (the reference drops dead instructions first, as the
// cpu backend's passes do).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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

std::string VerifyError(const std::string& text) {
  return ErrorMessage([&] { xl::ir::parse_graph(text); });
}

std::string ConstantGraph(const std::string& value, const std::string& dtype) {
  return "%0 = constant(value=" + value + ", dtype=" + dtype + ") : " + dtype + "[]\nreturn %0\n";
}

TEST(Constants, ValuesADtypeCannotHoldAreRejected) {
  struct Case {
    const char* value;
    const char* dtype;
    const char* error;
  };
  // 0.5 as a bool was false on the reference and true on the cpu backend; the integer ones were undefined.
  for (const Case& c :
       {Case{"0.5", "bool", "[verify] %0 constant: [constant] value 0.5 is not a bool: bools are 0 or 1"},
        Case{"2", "bool", "value 2 is not a bool"},
        Case{"inf", "i32", "[verify] %0 constant: [constant] value inf is not an integer in the range of i32"},
        Case{"nan", "i64", "value nan is not an integer in the range of i64"},
        Case{"2e40", "i64", "value 2e+40 is not an integer in the range of i64"},
        Case{"9223372036854775808", "i64", "value 9223372036854775808 is not an integer in the range of i64"},
        Case{"2147483648", "i32", "value 2147483648 is not an integer in the range of i32"},
        Case{"1.5", "i32", "value 1.5 is not an integer"},
        Case{"256", "u8", "value 256 is not an integer in the range of u8"},
        Case{"-1", "u8", "value -1 is not an integer in the range of u8"}}) {
    std::string error = VerifyError(ConstantGraph(c.value, c.dtype));
    EXPECT_NE(error.find(c.error), std::string::npos) << c.value << " as " << c.dtype << ": " << error;
    for (const std::string& backend : Backends()) {
      xl::ir::Graph graph;
      xl::ir::Instr constant{xl::ir::OpId::constant, {}, {}, {}, xl::dtype_from_name(c.dtype)};
      constant.attrs.set_float(xl::ir::AttrKey::value, std::stod(c.value))
          .set_dtype(xl::ir::AttrKey::dtype, constant.dtype);
      graph.instrs.push_back(constant);
      graph.outputs = {0};
      EXPECT_THROW(xl::compiler::compile_with(graph, backend), xl::Error) << c.value << " on " << backend;
    }
  }
}

TEST(Constants, ValuesADtypeHoldsAgreeOnEveryBackend) {
  struct Case {
    const char* value;
    const char* dtype;
    double want;
  };
  for (const Case& c : {Case{"1", "bool", 1}, Case{"0", "bool", 0}, Case{"-2147483648", "i32", -2147483648.0},
                        Case{"255", "u8", 255}, Case{"-9223372036854775808", "i64", -9223372036854775808.0},
                        Case{"-0.0", "i32", 0}, Case{"2e40", "f32", std::numeric_limits<double>::infinity()},
                        Case{"-inf", "f64", -std::numeric_limits<double>::infinity()}}) {
    xl::ir::Graph graph = xl::ir::parse_graph(ConstantGraph(c.value, c.dtype));
    for (const std::string& backend : Backends()) {
      auto out = xl::compiler::compile_with(graph, backend)->run({});
      double got = 0;
      switch (graph.instrs[0].dtype) {
        case DType::bool_:
        case DType::u8: got = *out[0]->as<uint8_t>(); break;
        case DType::i32: got = *out[0]->as<int32_t>(); break;
        case DType::i64: got = static_cast<double>(*out[0]->as<int64_t>()); break;
        case DType::f32: got = *out[0]->as<float>(); break;
        default: got = *out[0]->as<double>();
      }
      EXPECT_EQ(got, c.want) << c.value << " as " << c.dtype << " on " << backend;
    }
  }
}

TEST(Constants, PadValuesFollowTheSameRule) {
  EXPECT_NE(
      VerifyError("%0 = parameter(index=0) : i32[2]\n%1 = pad(%0, lo=[1], hi=[0], value=0.5) : i32[3]\nreturn %1\n")
          .find("[verify] %1 pad: [pad] value 0.5 is not an integer in the range of i32"),
      std::string::npos);
  EXPECT_NE(
      VerifyError("%0 = parameter(index=0) : bool[2]\n%1 = pad(%0, lo=[1], hi=[0], value=2) : bool[3]\nreturn %1\n")
          .find("value 2 is not a bool"),
      std::string::npos);
  // From the ops: 300 used to wrap to 44 in a u8 pad.
  EXPECT_EQ(ErrorMessage([] { xl::pad(U8({1, 2}), {1, 1}, 300); }),
            "[pad] value 300 is not an integer in the range of u8");
  EXPECT_EQ(ErrorMessage([] { xl::pad(I64({1}), {1, 0}, (int64_t{1} << 53) + 1); }),
            "[pad] value 9007199254740993 is not exact as a double, which pad values are");
  for (const std::string& backend : Backends()) {
    // Any non-zero pads a bool with true, as full() fills one; a float pads an integer truncated.
    EXPECT_EQ(ValuesOn<uint8_t>(xl::pad(Bool({false}), {1, 0}, 5), backend), (std::vector<uint8_t>{1, 0})) << backend;
    EXPECT_EQ(ValuesOn<int32_t>(xl::pad(I32({7}), {1, 1}, 2.7), backend), (std::vector<int32_t>{2, 7, 2})) << backend;
    EXPECT_EQ(ValuesOn<uint8_t>(xl::pad(U8({7}), {0, 1}, 255), backend), (std::vector<uint8_t>{7, 255})) << backend;
  }
}

TEST(Constants, FullRefusesValuesTheDtypeCannotHoldLikePyTorch) {
  // 1e30 as an i64 was undefined behaviour; 2^40 as an i32 wrapped to 0 without a word.
  EXPECT_EQ(ErrorMessage([] { xl::full({2}, 1e30, DType::i64); }), "[full] value 1e+30 cannot be represented in i64");
  EXPECT_EQ(ErrorMessage([] { xl::full({2}, int64_t{1} << 40, DType::i32); }),
            "[full] value 1099511627776 cannot be represented in i32");
  EXPECT_EQ(ErrorMessage([] { xl::full({2}, 300, DType::u8); }), "[full] value 300 cannot be represented in u8");
  EXPECT_EQ(ErrorMessage([] { xl::full({2}, -1.0, DType::u8); }), "[full] value -1 cannot be represented in u8");
  EXPECT_EQ(ErrorMessage([] { xl::full({2}, 0.5, DType::i32); }), "[full] value 0.5 cannot be represented in i32");
  auto t = xl::zeros({2}, DType::i32);
  EXPECT_EQ(ErrorMessage([&] { t.fill_(int64_t{1} << 40); }),
            "[fill_] value 1099511627776 cannot be represented in i32");
  for (const std::string& backend : Backends()) {
    EXPECT_EQ(ValuesOn<uint8_t>(xl::full({2}, -1, DType::u8), backend), (std::vector<uint8_t>{255, 255})) << backend;
    EXPECT_EQ(ValuesOn<int32_t>(xl::full({1}, 2147483647, DType::i32), backend), (std::vector<int32_t>{2147483647}))
        << backend;
    EXPECT_EQ(ValuesOn<int64_t>(xl::full({1}, -9.0e18, DType::i64), backend),
              (std::vector<int64_t>{-9000000000000000000}))
        << backend;
    EXPECT_EQ(ValuesOn<uint8_t>(xl::full({1}, 0.5, DType::bool_), backend), (std::vector<uint8_t>{1})) << backend;
  }
}

const char* kDeadBadValues =
    "%0 = parameter(index=0) : f32[3]\n"
    "%1 = parameter(index=1) : i64[1]\n"
    "%2 = gather(%0, %1, dim=0) : f32[1]\n"
    "%3 = parameter(index=2) : i32[2]\n"
    "%4 = remainder(%3, %3) : i32[2]\n"
    "%5 = neg(%0) : f32[3]\n";

std::vector<xl::BufferPtr> BadArguments() {
  return {Upload<float>({1, 2, 3}), Upload<int64_t>({7}), Upload<int32_t>({0, 0})};
}

TEST(DeadCode, BadValuesInDeadInstructionsRaiseOnNoBackend) {
  // The reference used to raise for the dead gather that the cpu backend removed.
  xl::ir::Graph graph = xl::ir::parse_graph(std::string(kDeadBadValues) + "return %5\n");
  for (const std::string& backend : Backends()) {
    std::vector<xl::BufferPtr> out;
    EXPECT_EQ(ErrorMessage([&] { out = xl::compiler::compile_with(graph, backend)->run(BadArguments()); }),
              "no exception")
        << backend;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(std::vector<float>(out[0]->as<float>(), out[0]->as<float>() + 3), (std::vector<float>{-1, -2, -3}))
        << backend;
  }
}

TEST(DeadCode, TheSameValuesRaiseOnEveryBackendWhenLive) {
  struct Case {
    const char* outputs;
    const char* error;
  };
  for (const Case& c : {Case{"return %5, %2\n", "[gather] index 7 is out of range for dim 0 of size 3"},
                        Case{"return %4, %5\n", "[remainder] integer division by zero"}}) {
    xl::ir::Graph graph = xl::ir::parse_graph(std::string(kDeadBadValues) + c.outputs);
    for (const std::string& backend : Backends())
      EXPECT_EQ(ErrorMessage([&] { xl::compiler::compile_with(graph, backend)->run(BadArguments()); }), c.error)
          << backend;
  }
}

}  // namespace
