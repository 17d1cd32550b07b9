// The op table's per-op facts agree with what the ops do: a trait that says "cannot raise" is checked
// against the reference backend raising, so adding an op with a wrong row fails here rather than in a
// schedule that runs a raising step after a donated buffer was overwritten.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include <string>
#include <vector>

#include "backend_support.h"
#include "compiler/cache.h"
#include "ir/graph.h"
#include "ir/op.h"

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
    bool indexes = cls == OpClass::Gather || cls == OpClass::IndexSelect || cls == OpClass::ScatterAdd;
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
    if (info.has(xl::ir::kRaisesOnIntegers)) EXPECT_EQ(info.cls, OpClass::Binary);
    if (info.has(xl::ir::kPiecewiseConstant)) {
      EXPECT_TRUE(xl::ir::is_elementwise_class(info.cls));
      EXPECT_FALSE(xl::ir::is_differentiable(op));
    }
    // Fusion recomputes expensive values inside the regions that read them, which only works for values
    // computed per element.
    if (info.has(xl::ir::kExpensive))
      EXPECT_TRUE(xl::ir::is_elementwise_class(info.cls) || info.cls == OpClass::Random ||
                  info.cls == OpClass::Gather || info.cls == OpClass::IndexSelect);
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
