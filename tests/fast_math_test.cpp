// Fast math (xlite/math_mode.h): what it changes, what it leaves exact, and that programs and kernels of
// one mode never serve the other. Its accuracy over the whole f32 range is CpuMath.FastMath* and the
// check_math_fast_* sweeps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>
#include <xlite/xlite.h>

#include "test_support.h"

namespace xl = xlite;
using xlite_test::FastMathScope;
using xlite_test::kInf;
using xlite_test::kNaN;

namespace {

// Points where the fast forms differ from the precise ones, away from every clamp.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (int i = -300; i <= 300; ++i) xs.push_back(static_cast<float>(i) / 100.0f + 0.00123f);
  return xs;
}

std::vector<float> tanh_of(const std::vector<float>& xs) { return xl::tanh(xl::tensor(xs)).to_vector<float>(); }

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(FastMath, IsOffUnlessAskedFor) {
  if (std::getenv("XLITE_FAST_MATH")) GTEST_SKIP() << "set by the environment";
  EXPECT_FALSE(xl::is_fast_math());
  {
    FastMathScope scope;
    EXPECT_TRUE(xl::is_fast_math());
  }
  EXPECT_FALSE(xl::is_fast_math());
}

TEST(FastMath, ChangesTheTranscendentalsWithinItsBoundAndNoProgramServesTheOtherMode) {
  const std::vector<float> xs = sweep();
  xl::set_fast_math(false);
  const std::vector<float> precise = tanh_of(xs);
  std::vector<float> fast;
  {
    FastMathScope scope;
    fast = tanh_of(xs);
    // The same graph again in fast mode reuses the fast program.
    EXPECT_TRUE(bit_equal(tanh_of(xs), fast));
  }
  // A program compiled in fast mode would give `fast` here.
  EXPECT_TRUE(bit_equal(tanh_of(xs), precise));
  int differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::tanh(static_cast<double>(xs[i]));
    EXPECT_NEAR(precise[i], want, 1e-6 * std::fabs(want)) << "x = " << xs[i];
    EXPECT_NEAR(fast[i], want, 4e-4 * std::fabs(want)) << "x = " << xs[i];
    differ += fast[i] != precise[i];
  }
  EXPECT_GT(differ, static_cast<int>(xs.size()) / 2);
}

TEST(FastMath, GeluAndSiluFollowTheirParts) {
  std::vector<float> xs;
  for (int i = -600; i <= 600; ++i) xs.push_back(static_cast<float>(i) / 100.0f + 0.00123f);
  FastMathScope scope;
  auto gelu = xl::gelu(xl::tensor(xs)).to_vector<float>();
  auto silu = xl::silu(xl::tensor(xs)).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double want_gelu = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double want_silu = x / (1.0 + std::exp(-x));
    EXPECT_NEAR(gelu[i], want_gelu, 4e-4 * std::fabs(want_gelu) + 4e-4 * std::fabs(x) / 2) << "gelu(" << x << ")";
    EXPECT_NEAR(silu[i], want_silu, 4e-4 * std::fabs(want_silu) + 1e-7) << "silu(" << x << ")";
  }
}

TEST(FastMath, EagerOpsFollowTheModeToo) {
  const std::vector<float> xs = sweep();
  xl::EagerModeGuard eager(true);
  const std::vector<float> precise = tanh_of(xs);
  FastMathScope scope;
  const std::vector<float> fast = tanh_of(xs);
  EXPECT_FALSE(bit_equal(fast, precise));
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(fast[i], precise[i], 4e-4 * std::fabs(precise[i]));
}

TEST(FastMath, KeepsTheSpecialValues) {
  FastMathScope scope;
  auto x = xl::tensor(std::vector<float>{kInf, -kInf, kNaN, 0.0f, -1.0f, 1e-40f});
  auto exp = xl::exp(x).to_vector<float>();
  EXPECT_EQ(exp[0], kInf);
  EXPECT_EQ(exp[1], 0.0f);
  EXPECT_TRUE(std::isnan(exp[2]));
  EXPECT_EQ(exp[3], 1.0f);
  auto log = xl::log(x).to_vector<float>();
  EXPECT_EQ(log[0], kInf);
  EXPECT_TRUE(std::isnan(log[1]));
  EXPECT_TRUE(std::isnan(log[2]));
  EXPECT_EQ(log[3], -kInf);
  EXPECT_TRUE(std::isnan(log[4]));
  EXPECT_EQ(log[5], -kInf);  // a subnormal input reads as zero
  struct Saturating {
    const char* name;
    xl::Tensor (*fn)(const xl::Tensor&);
    float at_minus_inf;
  };
  for (const Saturating& op : {Saturating{"tanh", xl::tanh, -1.0f}, Saturating{"erf", xl::erf, -1.0f},
                               Saturating{"sigmoid", xl::sigmoid, 0.0f}}) {
    auto v = op.fn(x).to_vector<float>();
    EXPECT_NEAR(v[0], 1.0f, 4e-4) << op.name << "(inf)";
    EXPECT_NEAR(v[1], op.at_minus_inf, 4e-4) << op.name << "(-inf)";
    EXPECT_TRUE(std::isnan(v[2])) << op.name << "(nan)";
  }
}

// The transcendentals divide by an estimate of the reciprocal; a division the user wrote, fused into the same
// loop, must stay exact. At x / y ~ 1e4 an estimate would be off by more than 1, a tanh by 4e-4 at most.
TEST(FastMath, LeavesTheUsersDivisionsExact) {
  std::vector<float> xs, ys;
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(10000.0f + static_cast<float>(i) * 1.37f);
    ys.push_back(1.0f + static_cast<float>(i % 7) * 0.001f);
  }
  FastMathScope scope;
  auto x = xl::tensor(xs), y = xl::tensor(ys);
  auto got = (x / y + xl::tanh(y)).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = static_cast<double>(xs[i]) / ys[i] + std::tanh(static_cast<double>(ys[i]));
    EXPECT_NEAR(got[i], want, 2e-3) << "element " << i;
  }
}

TEST(FastMath, LeavesF64Alone) {
  std::vector<double> xs;
  for (int i = -300; i <= 300; ++i) xs.push_back(i / 100.0 + 0.00123);
  auto x = xl::tensor(xs);
  xl::sync({x});
  const auto precise = xl::tanh(x).to_vector<double>();
  FastMathScope scope;
  EXPECT_EQ(xl::tanh(x).to_vector<double>(), precise);
}

TEST(FastMath, ACompiledStepTracesAgainWhenTheModeChanges) {
  const std::vector<float> xs = sweep();
  auto x = xl::tensor(xs);
  xl::sync({x});
  xl::set_fast_math(false);
  auto step = xl::compile([](const xl::Tensor& v) { return xl::sigmoid(v) * 2.0f; });
  step(x);
  step(x);  // a second trace confirms the first
  const std::vector<float> precise = step(x).to_vector<float>();
  ASSERT_TRUE(step.last_call().replayed);
  FastMathScope scope;
  const std::vector<float> fast = step(x).to_vector<float>();
  EXPECT_FALSE(step.last_call().replayed);
  EXPECT_EQ(step.last_call().trace_reason, "fast math on (was fast math off)");
  EXPECT_FALSE(bit_equal(fast, precise));
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(fast[i], precise[i], 8e-4 * std::fabs(precise[i]));
  EXPECT_TRUE(bit_equal(step(x).to_vector<float>(), fast));  // a second trace in fast mode confirms it
  EXPECT_TRUE(bit_equal(step(x).to_vector<float>(), fast));
  EXPECT_TRUE(step.last_call().replayed);
  // Back in precise mode, the precise program replays.
  xl::set_fast_math(false);
  EXPECT_TRUE(bit_equal(step(x).to_vector<float>(), precise));
  EXPECT_TRUE(step.last_call().replayed);
}
