// Excess precision (xlite/math_mode.h): what it changes (16-bit float arithmetic inside a fused kernel stays in
// f32 and is rounded once, where the kernel stores it), what it keeps as stored (compares, isinf, converts, an
// extreme's index), what it leaves alone (f32, single eager ops, the reference backend), and that programs of
// one mode never serve the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>
#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "core/half.h"
#include "lazy/graph_builder.h"
#include "tensor/tensor_impl.h"
#include "test_support.h"

namespace xl = xlite;
using xlite_test::ExcessPrecisionScope;

namespace {

float to_bf16(float x) { return xl::bf16_to_float(xl::float_to_bf16(x)); }

std::vector<float> bf16_values(int n, float scale, uint32_t seed) {
  std::vector<float> v;
  uint32_t state = seed;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    v.push_back(to_bf16(scale * (static_cast<float>(state >> 8) / 8388608.0f - 1.0f)));
  }
  return v;
}

xl::Tensor bf16_tensor(const std::vector<float>& values) { return xl::tensor(values).to(xl::DType::bf16); }

std::vector<float> values(const xl::Tensor& t) { return t.to(xl::DType::f32).to_vector<float>(); }

// a * b + c, then * 0.3 - a / (b + 4): five ops whose every result bf16 rounds.
xl::Tensor chain(const xl::Tensor& a, const xl::Tensor& b, const xl::Tensor& c) {
  return (a * b + c) * 0.3f - a / (b + 4.0f);
}

// The pending graph of `out` on the cpu backend (in the mode in force) and on the reference backend.
std::pair<std::vector<float>, std::vector<float>> cpu_and_reference(const xl::Tensor& out) {
  auto built = xl::lazy::build_graph({out.impl()->node()});
  auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
  auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
  const int64_t n = xl::numel(out.shape());
  std::vector<float> got(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    got[i] = xl::bf16_to_float(cpu[0]->as<uint16_t>()[i]);
    want[i] = xl::bf16_to_float(ref[0]->as<uint16_t>()[i]);
  }
  return {got, want};
}

}  // namespace

TEST(ExcessPrecision, IsOffUnlessAskedFor) {
  if (std::getenv("XLITE_EXCESS_PRECISION")) GTEST_SKIP() << "set by the environment";
  EXPECT_FALSE(xl::is_excess_precision());
  {
    ExcessPrecisionScope scope;
    EXPECT_TRUE(xl::is_excess_precision());
  }
  EXPECT_FALSE(xl::is_excess_precision());
}

// 1 + 2^-9 rounds to 1 in bf16 (7 fraction bits), so op by op (1 + 2^-9) - 1 is 0; kept in f32 it is 2^-9.
TEST(ExcessPrecision, RoundsOnceWhereTheKernelStoresInsteadOfAfterEveryOp) {
  auto one = bf16_tensor({1.0f, -1.0f, 0.5f});
  auto x = one + std::ldexp(1.0f, -9);
  auto by_op = values(x - one);
  ExcessPrecisionScope scope;
  auto x2 = one + std::ldexp(1.0f, -9);
  auto once = values(x2 - one);
  EXPECT_EQ(by_op, (std::vector<float>{0.0f, 0.0f, 0.0f}));
  EXPECT_EQ(once, (std::vector<float>{std::ldexp(1.0f, -9), std::ldexp(1.0f, -9), std::ldexp(1.0f, -9)}));
}

// Off, the fused kernel gives the reference backend's values bit for bit; on, the f32 computation of the same
// ops from the bf16 inputs, rounded once: different values, and closer to the exact ones.
TEST(ExcessPrecision, GivesTheF32ResultRoundedOnceWhereTheDefaultGivesTheReferences) {
  const int n = 4096;
  const auto av = bf16_values(n, 3.0f, 1), bv = bf16_values(n, 2.0f, 2), cv = bf16_values(n, 1.0f, 3);
  auto a = bf16_tensor(av), b = bf16_tensor(bv), c = bf16_tensor(cv);
  xl::sync({a, b, c});
  if (xl::is_excess_precision()) GTEST_SKIP() << "set by the environment";
  auto [by_op, reference] = cpu_and_reference(chain(a, b, c));
  EXPECT_EQ(by_op, reference);
  std::vector<float> once;
  {
    ExcessPrecisionScope scope;
    once = cpu_and_reference(chain(a, b, c)).first;
  }
  int differ = 0;
  double error_by_op = 0, error_once = 0;
  for (int i = 0; i < n; ++i) {
    // 0.3 is a bf16 constant in a bf16 graph: 0.30078125. The generated code contracts nothing into a
    // multiply-add; volatile keeps the compiler of this test from doing so either.
    const float scale = to_bf16(0.3f);
    volatile float scaled = (av[i] * bv[i] + cv[i]) * scale;
    const float f32 = scaled - av[i] / (bv[i] + 4.0f);
    ASSERT_EQ(once[i], to_bf16(f32)) << "element " << i;
    const double exact = (static_cast<double>(av[i]) * bv[i] + cv[i]) * scale - av[i] / (bv[i] + 4.0);
    error_by_op += std::fabs(by_op[i] - exact);
    error_once += std::fabs(once[i] - exact);
    differ += once[i] != by_op[i];
  }
  EXPECT_GT(differ, n / 10);
  EXPECT_LT(error_once, 0.8 * error_by_op);
}

// Where a value is observed it is the stored value: a convert, a comparison, isinf, and an extreme's index see
// 1 + 2^-9 as 1 (and f16's 75000 as inf) in both modes.
TEST(ExcessPrecision, ObservedValuesAreRoundedAsStored) {
  auto one = bf16_tensor({1.0f, 1.0f});
  auto small = bf16_tensor({std::ldexp(1.0f, -10), std::ldexp(1.0f, -9)});
  auto big = xl::tensor(std::vector<float>{300.0f, 2.0f}).to(xl::DType::f16);
  xl::sync({one, small, big});
  ExcessPrecisionScope scope;
  EXPECT_EQ(values(one + std::ldexp(1.0f, -9)), (std::vector<float>{1.0f, 1.0f}));
  EXPECT_EQ(xl::eq(one + small, one).to_vector<bool>(), (std::vector<bool>{true, true}));
  // Unrounded, 1 + 2^-9 is the larger; stored, both are 1 and the first index wins, as in the reference.
  EXPECT_EQ(xl::argmax(one + small).item<int64_t>(), 0);
  auto product = big * 250.0f;  // 75000 and 500: past f16's 65504, then inf where stored
  EXPECT_EQ(xl::isinf(product).to_vector<bool>(), (std::vector<bool>{true, false}));
}

// A max's gradient flows through the mask x == amax(x), with x recomputed in the mask's kernel: the two sides
// must be rounded alike, or every element would miss the max and the gradient would vanish.
TEST(ExcessPrecision, AMaxGradientFindsTheMax) {
  const auto xv = bf16_values(64, 2.0f, 7);
  auto gradient = [&] {
    auto x = bf16_tensor(xv);
    x.requires_grad_();
    xl::sum(xl::amax(xl::reshape(x * 1.1f, {8, 8}), {1})).backward();
    return values(x.grad());
  };
  const std::vector<float> by_op = gradient();
  ExcessPrecisionScope scope;
  const std::vector<float> once = gradient();
  EXPECT_EQ(once, by_op);
  int nonzero = 0;
  for (float g : once) nonzero += g != 0.0f;
  EXPECT_EQ(nonzero, 8);
}

TEST(ExcessPrecision, ExplicitConvertsStillRound) {
  auto x = xl::tensor(std::vector<float>{1.0f + std::ldexp(1.0f, -9), 3.0f + std::ldexp(1.0f, -7)});
  xl::sync({x});
  ExcessPrecisionScope scope;
  // f32 -> bf16 -> f32 inside one kernel: the convert is the user's rounding, kept.
  auto y = (x.to(xl::DType::bf16).to(xl::DType::f32) * 1.0f).to_vector<float>();
  EXPECT_EQ(y, (std::vector<float>{1.0f, 3.0f}));
}

TEST(ExcessPrecision, LeavesF32AndEagerOpsAlone) {
  const auto av = bf16_values(512, 3.0f, 4), bv = bf16_values(512, 2.0f, 5), cv = bf16_values(512, 1.0f, 6);
  auto a = xl::tensor(av), b = xl::tensor(bv), c = xl::tensor(cv);
  xl::sync({a, b, c});
  const auto f32_default = chain(a, b, c).to_vector<float>();
  std::vector<float> eager_default;
  {
    xl::EagerModeGuard eager(true);
    eager_default = values(chain(a.to(xl::DType::bf16), b.to(xl::DType::bf16), c.to(xl::DType::bf16)));
  }
  ExcessPrecisionScope scope;
  EXPECT_EQ(chain(a, b, c).to_vector<float>(), f32_default);
  xl::EagerModeGuard eager(true);
  EXPECT_EQ(values(chain(a.to(xl::DType::bf16), b.to(xl::DType::bf16), c.to(xl::DType::bf16))), eager_default);
}

TEST(ExcessPrecision, ACompiledStepTracesAgainWhenTheModeChanges) {
  auto one = bf16_tensor(std::vector<float>(64, 1.0f));
  xl::sync({one});
  if (xl::is_excess_precision()) GTEST_SKIP() << "set by the environment";
  auto step = xl::compile([](const xl::Tensor& v) { return (v + std::ldexp(1.0f, -9)) - v; });
  step(one);
  step(one);  // a second trace confirms the first
  EXPECT_EQ(values(step(one)), std::vector<float>(64, 0.0f));
  ASSERT_TRUE(step.last_call().replayed);
  {
    ExcessPrecisionScope scope;
    EXPECT_EQ(values(step(one)), std::vector<float>(64, std::ldexp(1.0f, -9)));
    EXPECT_FALSE(step.last_call().replayed);
    EXPECT_EQ(step.last_call().trace_reason, "excess precision on (was excess precision off)");
  }
  // Back in the default mode, its program replays and rounds after every op again.
  EXPECT_EQ(values(step(one)), std::vector<float>(64, 0.0f));
  EXPECT_TRUE(step.last_call().replayed);
}
