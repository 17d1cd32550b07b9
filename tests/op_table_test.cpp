// The op table's per-op facts agree with what the ops do: a trait that says "cannot raise" is checked
// against the reference backend raising, so adding an op with a wrong row fails here rather than in a
// schedule that runs a raising step after a donated buffer was overwritten.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend_support.h"
#include "backends/reference/kernels.h"
#include "compiler/cache.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ops/op_support.h"

namespace xl = xlite;
using xl::ir::OpClass;
using xl::ir::OpId;

namespace {

std::vector<OpId> AllOps() {
  std::vector<OpId> ops;
  for (int i = 0; i < xl::ir::kNumOps; ++i) ops.push_back(static_cast<OpId>(i));
  return ops;
}

// Runs `lhs op rhs` elementwise on the reference backend; returns the error message or "".
template <class T>
std::string RunBinary(OpId op, const std::string& type, const std::vector<T>& lhs, const std::vector<T>& rhs) {
  std::string n = std::to_string(lhs.size());
  std::string text = "%0 = parameter(index=0) : " + type + "[" + n + "]\n%1 = parameter(index=1) : " + type + "[" + n +
                     "]\n%2 = " + std::string(xl::ir::op_name(op)) + "(%0, %1) : " + type + "[" + n + "]\nreturn %2\n";
  try {
    xl::ir::Graph graph = xl::ir::parse_graph(text);
    std::vector<xl::BufferPtr> arguments = {xlite_test::Upload(lhs), xlite_test::Upload(rhs)};
    xl::compiler::compile_with(graph, "reference")->run(arguments, {});
  } catch (const xl::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(OpTable, RaisingBinaryOpsAreMarkedSo) {
  // Operands that make some integer op fail: division and remainder by zero, negative powers of 2.
  std::vector<int32_t> lhs = {7, -7, 2, 0, 1, -1};
  std::vector<int32_t> rhs = {0, 0, -1, -2, -3, -3};
  int raising = 0;
  for (OpId op : AllOps()) {
    if (xl::ir::op_info(op).cls != OpClass::Binary) continue;
    std::string error = RunBinary<int32_t>(op, "i32", lhs, rhs);
    SCOPED_TRACE(std::string(xl::ir::op_name(op)) + ": " + error);
    EXPECT_EQ(!error.empty(), xl::ir::may_raise(op, xl::DType::i32));
    raising += !error.empty();
    // Floating operands never raise: IEEE gives inf or nan instead.
    EXPECT_EQ(RunBinary<float>(op, "f32", {7, -7, 2, 0, 1, -1}, {0, 0, -1, -2, -3, -3}), "");
    EXPECT_FALSE(xl::ir::may_raise(op, xl::DType::f32));
  }
  EXPECT_EQ(raising, 3);  // div, remainder, pow
}

TEST(OpTable, IndexingOpsRaiseOnBadIndices) {
  for (OpId op : AllOps()) {
    OpClass cls = xl::ir::op_info(op).cls;
    // A custom call raises when its kernel's own checks fail (CpuContext::fail).
    bool indexes = cls == OpClass::Gather || cls == OpClass::IndexSelect || cls == OpClass::ScatterAdd ||
                   cls == OpClass::CustomCall;
    EXPECT_EQ(xl::ir::op_info(op).has(xl::ir::kRaisesOnBadIndex), indexes) << xl::ir::op_name(op);
  }
  // The trait is backed by a run-time check on both backends.
  auto x = xl::tensor(std::vector<float>{1, 2, 3});
  auto bad = xl::index_select(x, 0, xl::tensor(std::vector<int64_t>{3}));
  for (const std::string& backend : xlite_test::Backends())
    EXPECT_NE(xlite_test::RunOn({bad}, backend).error.find("out of range"), std::string::npos) << backend;
}

TEST(OpTable, TraitsAreConsistentWithClasses) {
  for (OpId op : AllOps()) {
    const xl::ir::OpInfo& info = xl::ir::op_info(op);
    SCOPED_TRACE(std::string(info.name));
    if (info.has(xl::ir::kRaisesOnIntegers)) {
      EXPECT_EQ(info.cls, OpClass::Binary);
    }
    if (info.has(xl::ir::kPiecewiseConstant)) {
      EXPECT_TRUE(xl::ir::is_elementwise_class(info.cls));
      EXPECT_FALSE(xl::ir::is_differentiable(op));
    }
    // Fusion recomputes expensive values inside the regions that read them, which only works for values
    // computed per element.
    if (info.has(xl::ir::kExpensive)) {
      EXPECT_TRUE(xl::ir::is_elementwise_class(info.cls) || info.cls == OpClass::Random ||
                  info.cls == OpClass::Gather || info.cls == OpClass::IndexSelect);
    }
  }
}

TEST(OpTable, GradientsFlowExactlyThroughDifferentiableOps) {
  auto x = xl::tensor(std::vector<float>{0.3f, 1.7f}).requires_grad_(true);
  EXPECT_TRUE(xl::exp(x).requires_grad());
  EXPECT_TRUE(xl::matmul(x.reshape({1, 2}), x.reshape({2, 1})).requires_grad());
  EXPECT_FALSE(xl::floor(x).requires_grad());
  EXPECT_FALSE(xl::sign(x).requires_grad());
  EXPECT_FALSE(xl::argmax(x, 0).requires_grad());
  EXPECT_FALSE((x > 1.0f).requires_grad());
  EXPECT_TRUE(xl::ir::is_differentiable(OpId::gelu));
  EXPECT_FALSE(xl::ir::is_differentiable(OpId::rng_normal));
  EXPECT_FALSE(xl::ir::is_differentiable(OpId::iota));
}

// Each layer has a case for each op: the reference backend a kernel, the cpu backend code, autograd a
// gradient. The switches are exhaustive (-Werror=switch); this checks the tables and dispatch around them.
TEST(OpTable, EveryOpHasAReferenceKernel) {
  for (OpId op : AllOps())
    if (op != OpId::parameter) {
      EXPECT_NE(xl::backends::reference::kernels()[static_cast<int>(op)], nullptr) << xl::ir::op_name(op);
    }
}

namespace {

// The text of a one-op graph applying op to parameters of f32[4] (bool[4] for logical ops), or "" for ops
// of the classes this does not cover.
std::string OneOpGraph(OpId op) {
  const xl::ir::OpInfo& info = xl::ir::op_info(op);
  const std::string name(info.name);
  const bool logical = info.cls == OpClass::Logical;
  const std::string in = logical ? "bool[4]" : "f32[4]";
  std::string params = "%0 = parameter(index=0) : " + in + "\n";
  switch (info.cls) {
    case OpClass::Unary:
    case OpClass::UnaryFloat: return params + "%1 = " + name + "(%0) : f32[4]\nreturn %1\n";
    case OpClass::Predicate: return params + "%1 = " + name + "(%0) : bool[4]\nreturn %1\n";
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Logical: {
      const std::string out = info.cls == OpClass::Binary ? "f32[4]" : "bool[4]";
      return params + "%1 = parameter(index=1) : " + in + "\n%2 = " + name + "(%0, %1) : " + out + "\nreturn %2\n";
    }
    case OpClass::Reduce: return params + "%1 = " + name + "(%0, dims=[0], keepdim=false) : f32[]\nreturn %1\n";
    case OpClass::ArgReduce: return params + "%1 = " + name + "(%0, dim=0, keepdim=false) : i64[]\nreturn %1\n";
    default: return "";
  }
}

std::vector<double> RunGraph(const std::string& text, const std::string& backend, bool logical) {
  xl::ir::Graph graph = xl::ir::parse_graph(text);
  std::vector<xl::BufferPtr> arguments;
  if (logical) {
    arguments = {xlite_test::Upload(std::vector<uint8_t>{0, 1, 0, 1}),
                 xlite_test::Upload(std::vector<uint8_t>{0, 0, 1, 1})};
  } else {
    arguments = {xlite_test::Upload(std::vector<float>{0.25f, -1.5f, 2.0f, 0.75f}),
                 xlite_test::Upload(std::vector<float>{1.5f, 0.5f, -3.0f, 0.75f})};
  }
  arguments.resize(graph.num_parameters);
  std::vector<xl::BufferPtr> outputs = xl::compiler::compile_with(graph, backend)->run(arguments, {});
  const xl::ir::Instr& result = graph.instrs[graph.outputs[0]];
  std::vector<double> values;
  for (int64_t i = 0; i < xl::numel(result.shape); ++i) {
    switch (result.dtype) {
      case xl::DType::f32: values.push_back(outputs[0]->as<float>()[i]); break;
      case xl::DType::bool_: values.push_back(outputs[0]->as<uint8_t>()[i]); break;
      case xl::DType::i64: values.push_back(static_cast<double>(outputs[0]->as<int64_t>()[i])); break;
      default: ADD_FAILURE() << "unexpected dtype";
    }
  }
  return values;
}

}  // namespace

TEST(OpTable, EveryElementwiseAndReduceOpRunsAlikeOnBothBackends) {
  int covered = 0;
  for (OpId op : AllOps()) {
    const std::string text = OneOpGraph(op);
    if (text.empty()) continue;
    SCOPED_TRACE(text);
    const bool logical = xl::ir::op_info(op).cls == OpClass::Logical;
    std::vector<double> want = RunGraph(text, "reference", logical);
    std::vector<double> got = RunGraph(text, "cpu", logical);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i])) << i;
      else
        EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::fabs(want[i]))) << i;
    }
    ++covered;
  }
  // Every op of those classes: 4 unary, 20 unary float, 3 predicates, 8 binary, 6 compare, 3 logical,
  // 4 reductions, 2 arg reductions.
  EXPECT_EQ(covered, 50);
}

TEST(OpTable, EveryDifferentiableElementwiseOpHasAGradient) {
  int covered = 0;
  for (OpId op : AllOps()) {
    const OpClass cls = xl::ir::op_info(op).cls;
    if (!xl::ir::is_differentiable(op) ||
        (cls != OpClass::Unary && cls != OpClass::UnaryFloat && cls != OpClass::Binary))
      continue;
    SCOPED_TRACE(std::string(xl::ir::op_name(op)));
    auto x = xl::tensor(std::vector<float>{0.25f, 1.5f, 2.0f}).requires_grad_(true);
    auto other = xl::tensor(std::vector<float>{1.5f, 0.5f, 3.0f});
    xl::Tensor y = cls == OpClass::Binary ? xl::ops::make(op, {x, other}) : xl::ops::make(op, {x});
    ASSERT_TRUE(y.requires_grad());
    xl::sum(y).backward();
    ASSERT_TRUE(x.grad().defined());
    for (float g : x.grad().to_vector<float>()) EXPECT_TRUE(std::isfinite(g));
    ++covered;
  }
  EXPECT_EQ(covered, 28);  // 3 unary (not sign), 17 unary float (not floor, ceil, round), 8 binary
}

namespace {

// The error parse_graph raises for the text, or "" when it parses.
std::string ParseError(const std::string& text) {
  try {
    xl::ir::parse_graph(text);
  } catch (const xl::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Each op's row names its attribute schema; a node with a missing, extra or mistyped attribute is refused
// before a shape rule or a backend reads it.
TEST(OpTable, TextIrHoldsExactlyTheAttributesOfTheOpsSchema) {
  const std::string x = "%0 = parameter(index=0) : f32[4]\n";
  EXPECT_EQ(ParseError(x + "%1 = pad(%0, lo=[1], hi=[0], value=0) : f32[5]\nreturn %1\n"), "");
  EXPECT_NE(ParseError(x + "%1 = pad(%0, lo=[1], value=0) : f32[5]\nreturn %1\n").find("[pad] missing attribute 'hi'"),
            std::string::npos);
  EXPECT_NE(ParseError(x + "%1 = neg(%0, dim=0) : f32[4]\nreturn %1\n").find("[neg] takes no attribute 'dim'"),
            std::string::npos);
  EXPECT_NE(ParseError(x + "%1 = reduce_sum(%0, dims=[0], keepdim=false, perm=[0]) : f32[]\nreturn %1\n")
                .find("[reduce_sum] takes no attribute 'perm'"),
            std::string::npos);
  EXPECT_NE(ParseError(x + "%1 = flip(%0, dims=0) : f32[4]\nreturn %1\n"), "");
  xl::ir::Attrs mistyped;
  mistyped.set_int(xl::ir::AttrKey::dims, 0);
  try {
    xl::ir::check_attr_schema(OpId::flip, mistyped);
    ADD_FAILURE() << "an integer for flip's list of dims was accepted";
  } catch (const xl::Error& e) {
    EXPECT_STREQ(e.what(), "[flip] attribute 'dims' has a value of the wrong kind");
  }
  EXPECT_NE(
      ParseError("%0 = parameter(index=0, dim=1) : f32[4]\nreturn %0\n").find("[parameter] takes no attribute 'dim'"),
      std::string::npos);
}

TEST(OpTable, SchemaStructsWriteAndReadBackEveryField) {
  const std::vector<int64_t> stride{2, 1}, lo{1, 0}, hi{0, 3}, dilation{1, 2};
  const xl::ir::Attrs attrs =
      xl::ir::ConvAttrs{.stride = stride, .lo = lo, .hi = hi, .dilation = dilation, .groups = 4}.to_attrs();
  EXPECT_NO_THROW(xl::ir::check_attr_schema(OpId::conv2d, attrs));
  const xl::ir::ConvAttrs back = xl::ir::ConvAttrs::of(attrs);
  EXPECT_EQ(std::vector<int64_t>(back.stride.begin(), back.stride.end()), stride);
  EXPECT_EQ(std::vector<int64_t>(back.lo.begin(), back.lo.end()), lo);
  EXPECT_EQ(std::vector<int64_t>(back.hi.begin(), back.hi.end()), hi);
  EXPECT_EQ(std::vector<int64_t>(back.dilation.begin(), back.dilation.end()), dilation);
  EXPECT_EQ(back.groups, 4);
  const xl::ir::ConstantAttrs constant =
      xl::ir::ConstantAttrs::of(xl::ir::ConstantAttrs{.value = -0.5, .dtype = xl::DType::f64}.to_attrs());
  EXPECT_EQ(constant.value, -0.5);
  EXPECT_EQ(constant.dtype, xl::DType::f64);
  EXPECT_TRUE(xl::ir::ReduceAttrs::of(xl::ir::ReduceAttrs{.dims = lo, .keepdim = true}.to_attrs()).keepdim);
  // Every op's schema has distinct keys, and ops without attributes have an empty one.
  for (OpId op : AllOps()) {
    const auto keys = xl::ir::attr_schema(op);
    for (size_t i = 0; i < keys.size(); ++i)
      for (size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << xl::ir::op_name(op);
  }
  EXPECT_TRUE(xl::ir::attr_schema(OpId::add).empty());
  EXPECT_EQ(xl::ir::attr_schema(OpId::pad).size(), 3u);
}
