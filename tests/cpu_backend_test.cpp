// The LLVM backend: fused loops, library matmul, run-time errors from generated code, kernel caching,
// memory plans, and the accuracy of the inline transcendentals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <xlite/xlite.h>

#include "backends/cpu/kernel.h"
#include "backends/cpu/library.h"
#include "backends/cpu/math_error.h"
#include "test_support.h"
#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "compiler/fusion.h"
#include "compiler/optimize.h"
#include "core/elements.h"
#include "tensor/tensor_impl.h"
#include "ir/graph.h"
#include "lazy/graph_builder.h"
#include "runtime/allocator.h"

namespace xl = xlite;

namespace {
xl::BufferPtr upload_floats(const std::vector<float>& values) {
  auto buffer = xl::runtime::allocator(xl::device()).allocate(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(buffer->data(), values.data(), values.size() * sizeof(float));
  return buffer;
}

std::vector<float> run_unary(const std::string& op, const std::vector<float>& input) {
  std::string n = std::to_string(input.size());
  auto graph = xl::ir::parse_graph("%0 = parameter(index=0) : f32[" + n + "]\n%1 = " + op + "(%0) : f32[" + n +
                                   "]\nreturn %1\n");
  auto out = xl::compiler::compile_with(graph, "cpu")->run(std::vector<xl::BufferPtr>{upload_floats(input)});
  const float* p = out[0]->as<float>();
  return std::vector<float>(p, p + input.size());
}

// Inputs over the whole f32 range: random bit patterns, a dense sweep near zero, and special values.
std::vector<float> test_inputs() {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           1.0f,
                           -1.0f,
                           INFINITY,
                           -INFINITY,
                           std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           1e-40f,
                           std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::max(),
                           88.7f,
                           88.72283f,
                           89.0f,
                           -87.3f,
                           -103.9f,
                           -104.0f,
                           0.625f,
                           -0.625f,
                           9.0f,
                           20.0f};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    xs.push_back(f);
  }
  for (int i = -20000; i <= 20000; ++i) xs.push_back(static_cast<float>(i) / 1000.0f);
  // Every float where exp overflows or leaves the subnormals, and where erf reaches its clamp.
  for (float edge : {88.7228f, -103.97f, 3.92f, -3.92f})
    for (float v = edge - 0.005f; v <= edge + 0.005f; v = std::nextafter(v, INFINITY)) xs.push_back(v);
  return xs;
}

// Runs each case's pending graph, with its arguments, on the cpu and the reference backends, and expects
// every element within abs + rel * |reference|.
void expect_cpu_matches_reference(const std::vector<xl::Tensor>& cases, float abs, float rel) {
  for (size_t c = 0; c < cases.size(); ++c) {
    auto built = xl::lazy::build_graph({cases[c].impl()->node()});
    auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
    auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
    const float* got = cpu[0]->as<float>();
    const float* want = ref[0]->as<float>();
    for (int64_t i = 0; i < xl::numel(cases[c].shape()); ++i)
      ASSERT_NEAR(got[i], want[i], abs + rel * std::fabs(want[i])) << "case " << c << " element " << i;
  }
}

// Runs a built graph on the cpu and the reference backends and expects each element of its output within
// abs + rel * |reference|, and NaN wherever the reference gives NaN.
void expect_built_matches_reference(const xl::lazy::BuiltGraph& built, int64_t numel, float abs, float rel, size_t c,
                                    size_t output = 0) {
  auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
  auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
  const float* got = cpu[output]->as<float>();
  const float* want = ref[output]->as<float>();
  for (int64_t i = 0; i < numel; ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "case " << c << " element " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], abs + rel * std::fabs(want[i])) << "case " << c << " element " << i;
  }
}

// Within 1e-6 relative over test_inputs(), or fast math's 4e-4 under its measure (math_error.h).
void expect_accurate(const std::string& op, double (*reference)(double), bool fast = false) {
  std::vector<float> xs = test_inputs();
  std::optional<xlite_test::FastMathScope> scope;
  if (fast) scope.emplace();
  const std::vector<float> got = run_unary(op, xs);
  scope.reset();
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = reference(static_cast<double>(xs[i]));
    double err =
        fast ? xl::backends::cpu::math::fast_math_error(xs[i], got[i], want, reference(std::copysign(0.0, xs[i])))
             : xl::backends::cpu::math::relative_error(got[i], want);
    if (err > worst) {
      worst = err;
      worst_x = xs[i];
    }
  }
  EXPECT_LE(worst, fast ? 4e-4 : 1e-6) << op << " worst at x = " << worst_x;
}

double sigmoid_reference(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

TEST(CpuMath, ExpIsAccurateOverTheWholeRange) {
  expect_accurate("exp", [](double x) { return std::exp(x); });
}
TEST(CpuMath, LogIsAccurateOverTheWholeRange) {
  expect_accurate("log", [](double x) { return std::log(x); });
}
TEST(CpuMath, TanhIsAccurateOverTheWholeRange) {
  expect_accurate("tanh", [](double x) { return std::tanh(x); });
}
TEST(CpuMath, SinIsAccurateOverTheWholeRange) {
  expect_accurate("sin", [](double x) { return std::sin(x); });
}
TEST(CpuMath, CosIsAccurateOverTheWholeRange) {
  expect_accurate("cos", [](double x) { return std::cos(x); });
}
TEST(CpuMath, TanIsAccurateOverTheWholeRange) {
  expect_accurate("tan", [](double x) { return std::tan(x); });
}
TEST(CpuMath, ErfIsAccurateOverTheWholeRange) {
  expect_accurate("erf", [](double x) { return std::erf(x); });
}
TEST(CpuMath, ErfIsExactlyOneWhereItRoundsToOne) {
  std::vector<float> xs = {3.92f, 4.0f, 10.0f, 1e30f, INFINITY};
  std::vector<float> got = run_unary("erf", xs);
  std::vector<float> negated = run_unary("erf", {-3.92f, -4.0f, -10.0f, -1e30f, -INFINITY});
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(got[i], 1.0f) << "erf(" << xs[i] << ")";
    EXPECT_EQ(negated[i], -1.0f) << "erf(-" << xs[i] << ")";
  }
}
TEST(CpuMath, SigmoidIsAccurateOverTheWholeRange) { expect_accurate("sigmoid", sigmoid_reference); }

TEST(CpuMath, FastMathIsWithinItsBoundOverTheWholeRange) {
  expect_accurate("exp", [](double x) { return std::exp(x); }, true);
  expect_accurate("log", [](double x) { return std::log(x); }, true);
  expect_accurate("tanh", [](double x) { return std::tanh(x); }, true);
  expect_accurate("erf", [](double x) { return std::erf(x); }, true);
  expect_accurate("sigmoid", sigmoid_reference, true);
}

TEST(CpuBackend, IsTheDefault) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "backend chosen by the environment";
  EXPECT_EQ(xl::compiler::backend_name(), "cpu");
}

// A cheap value is duplicated into each region that reads it, unless it is computed from a long chain of
// ops: then writing it once and reading it back costs less than the chain computed twice.
TEST(CpuBackend, ValuesFromLongChainsAreComputedOnce) {
  auto chain = [](int length) {
    std::string text = "%0 = parameter(index=0) : f32[8]\n";
    for (int k = 1; k <= length; ++k)
      text += "%" + std::to_string(k) + " = " + (k % 2 ? "neg" : "abs") + "(%" + std::to_string(k - 1) + ") : f32[8]\n";
    const std::string v = "%" + std::to_string(length);
    text += "%" + std::to_string(length + 1) + " = reduce_sum(" + v + ", dims=[0], keepdim=false) : f32[]\n";
    text += "%" + std::to_string(length + 2) + " = mul(" + v + ", %0) : f32[8]\n";
    text += "return %" + std::to_string(length + 1) + ", %" + std::to_string(length + 2) + "\n";
    return xl::compiler::describe(xl::compiler::plan_fusion(xl::ir::parse_graph(text)));
  };
  EXPECT_EQ(chain(3),
            "region %4 reduce_sum: 4 ops fused, 1 inputs\n"
            "region %5 mul: 4 ops fused, 1 inputs\n");
  EXPECT_EQ(chain(9),
            "materialize %9 neg: needed by 2 regions and computed from more than 8 ops; computed once instead of "
            "duplicated\n"
            "region %9 neg: 9 ops fused, 1 inputs\n"
            "region %10 reduce_sum: 1 ops fused, 1 inputs\n"
            "region %11 mul: 1 ops fused, 2 inputs\n");
}

// Results are handed out without copying where they can be; a value returned twice, an argument returned
// as it is and a value also read by a later step must all still come back whole.
TEST(CpuBackend, RepeatedAndArgumentOutputsAreAllReturned) {
  auto graph = xl::ir::parse_graph(
      "%0 = parameter(index=0) : f32[4]\n"
      "%1 = exp(%0) : f32[4]\n"
      "%2 = reduce_sum(%1, dims=[0], keepdim=false) : f32[]\n"
      "return %1, %2, %0, %1\n");
  auto x = xl::tensor(std::vector<float>{0, 1, -1, 2});
  xl::sync();
  std::vector<xl::BufferPtr> args = {x.impl()->data()};
  auto outputs = xl::compiler::compile_with(graph, "cpu")->run(args);
  ASSERT_EQ(outputs.size(), 4u);
  for (const auto& out : outputs) ASSERT_NE(out, nullptr);
  EXPECT_EQ(outputs[0], outputs[3]);  // one value, one buffer
  EXPECT_EQ(outputs[2], args[0]);
  const float in[] = {0, 1, -1, 2};
  float total = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(outputs[0]->as<float>()[i], std::exp(in[i]), 1e-6f * std::exp(in[i]));
    total += std::exp(in[i]);
  }
  EXPECT_NEAR(*outputs[1]->as<float>(), total, 1e-5f);
}

TEST(CpuBackend, CheapProducersAreFusedIntoEveryConsumer) {
  auto graph = xl::ir::parse_graph(
      "%0 = parameter(index=0) : f32[8]\n"
      "%1 = mul(%0, %0) : f32[8]\n"
      "%2 = reduce_sum(%1, dims=[0], keepdim=false) : f32[]\n"
      "%3 = reduce_max(%1, dims=[0], keepdim=false) : f32[]\n"
      "return %2, %3\n");
  auto plan = xl::compiler::plan_fusion(graph);
  ASSERT_EQ(plan.regions.size(), 2u);
  EXPECT_EQ(plan.regions[0].members.size(), 2u);
  EXPECT_EQ(plan.regions[1].members.size(), 2u);
}

TEST(CpuBackend, MatchesReferenceOnSoftmaxLayernormAndMatmul) {
  xl::manual_seed(11);
  auto x = xl::randn({33, 70});
  auto w = xl::randn({70, 19});
  auto ln = [](const xl::Tensor& t) {
    auto mu = t.mean({1}, true);
    auto var = xl::var(t, {1}, 0, true);
    return (t - mu) / xl::sqrt(var + 1e-5);
  };
  auto y = xl::softmax(xl::matmul(ln(x), w), -1);
  // Run the very same pending graph, with its arguments, on both backends.
  auto built = xl::lazy::build_graph({y.impl()->node()});
  auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
  auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
  ASSERT_EQ(cpu.size(), 1u);
  const float* got = cpu[0]->as<float>();
  const float* want = ref[0]->as<float>();
  for (int64_t i = 0; i < 33 * 19; ++i) EXPECT_NEAR(got[i], want[i], 1e-5f + 1e-4f * std::fabs(want[i])) << i;
}

// A row sum of exp, silu and the like keeps its elements on the stack for the output's loop
// (emit_elementwise_loop): rows short enough to keep and longer ones, rows split between threads, and an
// output that reads the element somewhere else than where it writes (which must compute it again).
TEST(CpuBackend, RowSumsOfExpensiveElementsMatchTheReference) {
  xl::manual_seed(12);
  auto x = xl::randn({333, 1000});
  auto wide = xl::randn({3, 5000});
  auto square = xl::randn({64, 64});
  xl::sync();
  auto normalised_silu = [](const xl::Tensor& t) {
    auto s = xl::silu(t);
    return s / s.sum({-1}, true);
  };
  auto e = xl::exp(square);
  expect_cpu_matches_reference(
      {xl::softmax(x, -1), xl::softmax(wide, -1), normalised_silu(x), e.transpose(0, 1) / e.sum({-1}, true)}, 1e-6f,
      1e-5f);
}

TEST(CpuBackend, BatchedMatmulThroughTheLibraryMatchesKnownValues) {
  auto a = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  auto b = xl::tensor(std::vector<float>{1, 0, 0, 1, 2, 1, 1, 2}, {2, 2, 2});
  EXPECT_EQ(xl::matmul(a, b).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 16, 17, 22, 23}));
  auto e = xl::matmul(xl::zeros({3, 0}), xl::zeros({0, 2}));  // K = 0 gives zeros
  EXPECT_EQ(e.to_vector<float>(), std::vector<float>(6, 0.0f));
  auto d = xl::matmul(xl::ones({2, 3}, xl::DType::f64), xl::ones({3, 2}, xl::DType::f64));  // not f32: oracle kernel
  EXPECT_EQ(d.to_vector<double>(), std::vector<double>(4, 3.0));
}

TEST(CpuBackend, OutOfRangeIndicesRaiseFromGeneratedCode) {
  auto table = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto idx = xl::tensor(std::vector<int64_t>{2, 0, -1});
  try {
    (xl::embedding(table, idx) * 2.0f).to_vector<float>();
    FAIL() << "expected xlite::Error";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[embedding] index -1 is out of range for dim 0 of size 3"), std::string::npos)
        << e.what();
  }
  auto g = xl::gather(table, 1, xl::tensor(std::vector<int32_t>{0, 1, 1, 2, 0, 0}, {3, 2}));
  EXPECT_THROW(g.to_vector<float>(), xl::Error);
}

TEST(CpuBackend, IntegerDivisionByZeroRaises) {
  auto graph = xl::ir::parse_graph(
      "%0 = parameter(index=0) : i32[2]\n"
      "%1 = remainder(%0, %0) : i32[2]\n"
      "return %1\n");
  auto buffer = xl::runtime::allocator(xl::device()).allocate(8);
  buffer->as<int32_t>()[0] = 3;
  buffer->as<int32_t>()[1] = 0;
  EXPECT_THROW(xl::compiler::compile_with(graph, "cpu")->run(std::vector<xl::BufferPtr>{buffer}), xl::Error);
}

TEST(CpuBackend, LargeLoopsSplitAcrossThreadsGiveTheSameResult) {
  const int64_t n = 1 << 20;
  auto x = xl::arange(0, n).to(xl::DType::f32);
  auto y = (x * 0.5f + 1.0f).sum();
  EXPECT_NEAR(y.item<double>(), 0.5 * (double(n) * (n - 1) / 2) + n, 1e-3 * n * n);
  auto v = (x * 2.0f).to_vector<float>();
  EXPECT_EQ(v[n - 1], 2.0f * (n - 1));
  EXPECT_EQ(v[n / 2 + 3], 2.0f * (n / 2 + 3));
}

TEST(CpuBackend, GraphsSharingARegionCompileItOnce) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  auto x = xl::tensor(std::vector<float>{1, 2, 3});
  auto first = xl::tanh(x) * x + 0.25f;
  xl::sync();
  int64_t compiled = xl::backends::cpu::kernels_compiled();
  int64_t hits = xl::backends::cpu::kernel_cache_hits();
  auto y = xl::tensor(std::vector<float>{4, 5, 6});
  auto second = xl::tanh(y) * y + 0.75f;  // same region body, different graph (another output set below)
  auto extra = y.sum();
  xl::sync();
  // The tanh region is a kernel-cache hit; at most the sum is new (an earlier test in this process may
  // have compiled it already).
  EXPECT_LE(xl::backends::cpu::kernels_compiled(), compiled + 1);
  EXPECT_GE(xl::backends::cpu::kernel_cache_hits(), hits + 1);
  EXPECT_NEAR(second.to_vector<float>()[0], std::tanh(4.0f) * 4.0f + 0.75f, 1e-5);
}

TEST(CpuBackend, MemoryStatsCountArgumentsOutputsAndTemporaries) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  auto x = xl::zeros({256, 64});
  xl::sync();
  auto e = xl::exp(x);
  auto y1 = e * 2.0f;  // two elementwise regions need exp: it is materialized, 64 KiB of temporaries
  auto y2 = e + 2.0f;
  auto stats = xl::debug::memory_stats({y1, y2});
  EXPECT_EQ(stats.argument_bytes, 256 * 64 * 4 + 4 + 4);  // x and the two scalars
  EXPECT_EQ(stats.output_bytes, 2 * 256 * 64 * 4);
  EXPECT_GE(stats.temp_bytes, 256 * 64 * 4);
  EXPECT_GT(stats.code_bytes, 0);
  EXPECT_EQ(stats.kernels, 3);
  EXPECT_NE(stats.fusion.find("materialize"), std::string::npos);
  auto alias = xl::debug::memory_stats({x});
  EXPECT_EQ(alias.alias_bytes, 256 * 64 * 4);
}

// A sync writes an in-place update into its old buffer (donation); the plan says so. Run with XLITE_DEBUG=1
// by ctest (memory_stats_prints_its_compilation): a graph first compiled here prints its line too.
TEST(CpuBackend, MemoryStatsCountADonatedInPlaceUpdateAsAliased) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  auto w = xl::zeros({512, 3});
  xl::sync();
  w.add_(xl::full({512, 3}, 0.5f) * 3.0f);
  auto stats = xl::debug::memory_stats({w});
  EXPECT_EQ(stats.alias_bytes, 512 * 3 * 4);
  EXPECT_EQ(stats.output_bytes, 0);
  const xl::Buffer* before = w.impl()->donor();
  xl::sync();
  EXPECT_EQ(w.impl()->data().get(), before);  // and the sync did donate it
  EXPECT_EQ(w.to_vector<float>()[7], 1.5f);
}

TEST(CpuBackend, TransposedMatmulOperandsAreReadWithGemmFlags) {
  xl::manual_seed(3);
  auto a = xl::randn({3, 7, 5});
  auto b = xl::randn({3, 6, 7});
  xl::sync();
  auto y = xl::matmul(a.transpose(1, 2), b.transpose(1, 2));  // [3,5,7] x [3,7,6]
  auto built = xl::lazy::build_graph({y.impl()->node()});
  auto exe = xl::compiler::compile_with(built.graph, "cpu");
  EXPECT_EQ(exe->memory_stats().temp_bytes, 0);  // no transposed copies
  auto got = exe->run(built.arguments);
  auto want = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
  for (int64_t i = 0; i < 3 * 5 * 6; ++i) EXPECT_NEAR(got[0]->as<float>()[i], want[0]->as<float>()[i], 1e-4) << i;
}

TEST(CpuBackend, RandomGraphFindingsStayFixed) {
  // Each graph was a mismatch against the reference found by the random-graph tester.
  auto run_both = [](const std::string& text, std::vector<xl::BufferPtr> args) {
    auto graph = xl::ir::parse_graph(text);
    auto cpu = xl::compiler::compile_with(graph, "cpu")->run(args);
    auto ref = xl::compiler::compile_with(graph, "reference")->run(args);
    return std::make_pair(cpu[0], ref[0]);
  };
  auto bytes = [](std::vector<uint8_t> v) {
    auto b = xl::runtime::allocator(xl::device()).allocate(v.size());
    if (!v.empty()) std::memcpy(b->data(), v.data(), v.size());  // an empty vector's data() may be null
    return b;
  };
  // abs of u8 is the identity, not a signed 8-bit abs.
  auto [a_cpu, a_ref] =
      run_both("%0 = parameter(index=0) : u8[2]\n%1 = abs(%0) : u8[2]\nreturn %1\n", {bytes({134, 200})});
  EXPECT_EQ(a_cpu->as<uint8_t>()[0], 134);
  EXPECT_EQ(a_cpu->as<uint8_t>()[1], a_ref->as<uint8_t>()[1]);
  // An empty gather inside a concat reads nothing.
  auto [c_cpu, c_ref] = run_both(
      "%0 = parameter(index=0) : f32[0]\n%1 = parameter(index=1) : i64[0]\n%2 = gather(%0, %1, dim=0) : f32[0]\n"
      "%3 = parameter(index=2) : f32[3]\n%4 = concat(%3, %2, dim=0) : f32[3]\nreturn %4\n",
      {bytes({}), bytes({}), upload_floats({1, 2, 3})});
  EXPECT_EQ(c_cpu->as<float>()[2], 3.0f);
  // A convolution over zero input channels is zeros.
  auto [v_cpu, v_ref] = run_both(
      "%0 = parameter(index=0) : f32[1,0,4,1]\n%1 = parameter(index=1) : f32[2,0,3,1]\n"
      "%2 = conv2d(%0, %1, stride=[1,1], lo=[0,0], hi=[0,0], dilation=[1,1], groups=1) : f32[1,2,2,1]\nreturn %2\n",
      {bytes({}), bytes({})});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v_cpu->as<float>()[i], 0.0f);
}

// Sums and products over leading dims (column sums) run rows outer, accumulating in the output: the same
// values as the oracle, with fused producers, several leading dims, keepdim, integers, 16-bit floats and
// enough columns to split across threads; a reduction over a middle dim keeps the general loop.
TEST(CpuBackend, LeadingDimReductionsMatchTheReference) {
  xl::manual_seed(5);
  auto x = xl::randn({3, 37, 1500});
  auto xi = (x * 4.0f).to(xl::DType::i32);
  std::vector<xl::Tensor> cases = {
      xl::sum(x * 2.0f + 1.0f, {0}),
      xl::sum(xl::exp(x * 0.1f), {0, 1}, true),
      xl::prod(x * 0.01f + 1.0f, {0}),
      xl::sum(xi, {0, 1}),
      xl::sum(x.to(xl::DType::f64), {0}),
      xl::sum(x, {1}),
      xl::sum(x.transpose(1, 2), {0, 1}),
      // 16-bit floats, summed in f32 partials and f64 totals like f32 (a bf16 bias gradient).
      xl::sum(x.to(xl::DType::bf16) * 2.0f, {0, 1}),
      xl::sum(x.to(xl::DType::f16), {0}, true),
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    auto built = xl::lazy::build_graph({cases[c].impl()->node()});
    auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
    auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
    const xl::DType dtype = cases[c].dtype();
    for (int64_t i = 0; i < xl::numel(cases[c].shape()); ++i) {
      double got = xl::read_element_f64(cpu[0]->data(), dtype, i),
             want = xl::read_element_f64(ref[0]->data(), dtype, i);
      // f32 sums of up to 4500 terms, added in another order than the oracle's; a 16-bit result may round
      // to the neighbour of the oracle's (one bf16 ulp is 2^-8 relative).
      const double tolerance = dtype == xl::DType::bf16 || dtype == xl::DType::f16 ? 8e-3 : 1e-4;
      ASSERT_NEAR(got, want, tolerance * (1 + std::fabs(want))) << "case " << c << " element " << i;
    }
  }
}

// A reshape carries each group of merged or split dims on its own (the index of a merge is the inner dim plus
// an invariant, so heads transposed out of a projection read contiguous rows). Layout ops are exact: every
// case gives the oracle's bits, through merges, splits, dims of size 1 on either side, groups that neither
// merge nor split cleanly ([6, 4] -> [4, 6]), and a slice between two reshapes.
TEST(CpuBackend, ReshapeGroupsMatchTheReference) {
  xl::manual_seed(9);
  auto qkv = xl::randn({2 * 5, 3 * 4 * 16});  // [B*T, 3*H*D] with B 2, T 5, H 4, D 16
  auto heads = [&](int part) {
    auto x = xl::slice(xl::reshape(qkv, {2, 5, 3 * 64}), 2, part * 64, (part + 1) * 64);
    return xl::transpose(xl::reshape(x, {2, 5, 4, 16}), 1, 2) * 2.0f;  // [B, H, T, D]
  };
  auto y = xl::randn({3, 6, 4, 7});
  std::vector<xl::Tensor> cases = {
      heads(0),
      heads(2),
      xl::reshape(xl::transpose(heads(1), 1, 2), {2, 5, 64}) + 1.0f,  // merge back after the transpose
      xl::reshape(y, {3, 24, 7}) * 3.0f,
      xl::transpose(xl::reshape(y, {3, 6, 2, 2, 7}), 2, 4) - 1.0f,  // a split of the middle dim
      xl::reshape(y, {1, 3, 1, 4, 6, 1, 7}) + 0.5f,                 // size-1 dims inserted
      xl::transpose(xl::reshape(xl::reshape(y, {1, 3, 1, 4, 6, 1, 7}), {3, 4, 6, 7}), 1, 3),
      xl::transpose(xl::reshape(y, {18, 28}), 0, 1) * 0.25f,
      xl::reshape(xl::transpose(y, 2, 3), {3, 4, 6, 7}) + 2.0f,  // [6, 7, 4] -> [4, 6, 7]: no clean groups
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    auto built = xl::lazy::build_graph({cases[c].impl()->node()});
    auto cpu = xl::compiler::compile_with(built.graph, "cpu")->run(built.arguments);
    auto ref = xl::compiler::compile_with(built.graph, "reference")->run(built.arguments);
    for (int64_t i = 0; i < xl::numel(cases[c].shape()); ++i)
      ASSERT_EQ(xl::read_element_f64(cpu[0]->data(), xl::DType::f32, i),
                xl::read_element_f64(ref[0]->data(), xl::DType::f32, i))
          << "case " << c << " element " << i;
  }
}

namespace {
size_t regions_of(const std::string& text) {
  return xl::compiler::plan_fusion(xl::ir::parse_graph(text)).regions.size();
}
}  // namespace

// A softmax or layernorm is one loop: its row reductions are computed row by row inside it. A reduction
// that another region also reads, or that reaches the loop through an op that may read another row,
// stays a region of its own.
TEST(CpuBackend, RowReductionsFuseIntoTheLoopThatReadsThem) {
  const std::string softmax =
      "%0 = parameter(index=0) : f32[64,128]\n"
      "%1 = reduce_max(%0, dims=[1], keepdim=true) : f32[64,1]\n"
      "%2 = broadcast(%1, shape=[64,128], dims=[0,1]) : f32[64,128]\n"
      "%3 = sub(%0, %2) : f32[64,128]\n"
      "%4 = exp(%3) : f32[64,128]\n"
      "%5 = reduce_sum(%4, dims=[1], keepdim=true) : f32[64,1]\n"
      "%6 = broadcast(%5, shape=[64,128], dims=[0,1]) : f32[64,128]\n"
      "%7 = div(%4, %6) : f32[64,128]\n";
  auto plan = xl::compiler::plan_fusion(xl::ir::parse_graph(softmax + "return %7\n"));
  ASSERT_EQ(plan.regions.size(), 1u) << xl::compiler::describe(plan);
  EXPECT_NE(xl::compiler::describe(plan).find("compute %5 reduce_sum row by row inside the loop of %7 div"),
            std::string::npos);
  // The sum is also a result: it is a region, and so is the max that both it and the loop read.
  EXPECT_EQ(regions_of(softmax + "return %7, %5\n"), 3u);
  EXPECT_EQ(regions_of("%0 = parameter(index=0) : f32[4,6]\n"  // keepdim=false, broadcast back along dim 1
                       "%1 = reduce_sum(%0, dims=[1], keepdim=false) : f32[4]\n"
                       "%2 = broadcast(%1, shape=[4,6], dims=[0]) : f32[4,6]\n"
                       "%3 = sub(%0, %2) : f32[4,6]\n"
                       "return %3\n"),
            1u);
  EXPECT_EQ(regions_of("%0 = parameter(index=0) : f32[6,6]\n"  // the transpose reads other rows
                       "%1 = reduce_sum(%0, dims=[1], keepdim=true) : f32[6,1]\n"
                       "%2 = broadcast(%1, shape=[6,6], dims=[0,1]) : f32[6,6]\n"
                       "%3 = transpose(%2, perm=[1,0]) : f32[6,6]\n"
                       "%4 = add(%0, %3) : f32[6,6]\n"
                       "return %4\n"),
            2u);
  EXPECT_EQ(regions_of("%0 = parameter(index=0) : f32[6,4]\n"  // a sum over the first dim is not a row
                       "%1 = reduce_sum(%0, dims=[0], keepdim=true) : f32[1,4]\n"
                       "%2 = broadcast(%1, shape=[6,4], dims=[0,1]) : f32[6,4]\n"
                       "%3 = sub(%0, %2) : f32[6,4]\n"
                       "return %3\n"),
            2u);
}

// Row-fused reductions against the oracle: softmax and layernorm over odd row lengths, 3-D inputs, a
// reduction over a row of another length, NaN in a row, and enough rows that threads split some rows.
TEST(CpuBackend, RowFusedReductionsMatchTheReference) {
  xl::manual_seed(21);
  auto x = xl::randn({300, 257});
  auto y = xl::randn({3, 50, 130});
  auto w = xl::randn({130});
  auto big = xl::randn({4096, 96});
  auto layernorm = [&](const xl::Tensor& t) {
    auto mu = xl::mean(t, {-1}, true);
    auto c = t - mu;
    return c * xl::rsqrt(xl::mean(c * c, {-1}, true) + 1e-5f) * w;
  };
  auto nan_row = xl::where(xl::arange(0, 257).to(xl::DType::f32) == 100.0f, std::numeric_limits<float>::quiet_NaN(), x);
  auto other_length = xl::randn({300, 31});
  std::vector<xl::Tensor> cases = {
      xl::softmax(x, -1),
      layernorm(y),
      xl::log_softmax(big, -1),
      xl::softmax(nan_row, -1),
      x * xl::amax(other_length, {-1}, true),
      (big - xl::amin(big, {-1}, true)) * xl::sum(big * big, {-1}, true),
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    auto built = xl::lazy::build_graph({cases[c].impl()->node()});
    auto plan = xl::compiler::plan_fusion(xl::compiler::optimize(built.graph));
    EXPECT_EQ(plan.regions.size(), 1u) << "case " << c << "\n" << xl::compiler::describe(plan);
    expect_built_matches_reference(built, xl::numel(cases[c].shape()), 1e-5f, 1e-4f, c);
  }
}

// Loops whose elements are rows compute those rows' reductions first: a cross-entropy's loss per row (its
// max and sum of exponentials, then the pick at the target), a logsumexp with and without keepdim, a row
// sum beside another row reduction whose rows are the loop's own rows, and a NaN in a row. Each against
// the oracle, with every reduction computed by rows and enough rows that threads split them.
TEST(CpuBackend, PerRowLoopsComputeTheirRowReductions) {
  xl::manual_seed(22);
  auto big = xl::randn({4096, 96}) * 4.0f;
  std::vector<int64_t> classes(4096);
  for (size_t i = 0; i < classes.size(); ++i) classes[i] = static_cast<int64_t>((i * 37) % 96);
  auto target = xl::from_bytes(classes.data(), {4096}, xl::DType::i64);
  auto nan_row = xl::where(xl::arange(0, 96).to(xl::DType::f32) == 7.0f, std::numeric_limits<float>::quiet_NaN(), big);
  auto z = xl::randn({40, 30, 20});
  auto w = xl::randn({40, 30});
  struct Case {
    xl::Tensor value;
    size_t by_rows;  // reductions computed by rows
  };
  std::vector<Case> cases = {
      {xl::nn::cross_entropy(big, target), 2},
      {xl::nn::cross_entropy(big, target, -100, 0.0, std::nullopt, "none") * 1.0f, 2},
      {xl::logsumexp(big, {-1}, true), 2},
      {xl::logsumexp(big, {-1}, false), 2},
      {xl::logsumexp(nan_row, {-1}, false), 2},
      {xl::sum(z, {-1}) + xl::amax(w, {-1}, true), 2},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    auto built = xl::lazy::build_graph({cases[c].value.impl()->node()});
    auto plan = xl::compiler::plan_fusion(xl::compiler::optimize(built.graph));
    size_t by_rows = 0;
    for (const auto& d : plan.decisions) by_rows += d.choice == xl::compiler::FusionChoice::compute_by_rows;
    EXPECT_EQ(by_rows, cases[c].by_rows) << "case " << c << "\n" << xl::compiler::describe(plan);
    expect_built_matches_reference(built, xl::numel(cases[c].value.shape()), 1e-5f, 1e-5f, c);
  }
  // Known values: rows of equal logits lose log(classes) each, and a row whose target holds all the mass
  // loses nothing.
  auto equal = xl::zeros({512, 64});
  auto certain = xl::where(xl::arange(0, 64).to(xl::DType::f32) == 3.0f, 100.0f, xl::zeros({512, 64}));
  auto threes = xl::full({512}, 3.0, xl::DType::i64);
  EXPECT_NEAR(xl::nn::cross_entropy(equal, threes).item<float>(), std::log(64.0f), 1e-6f);
  EXPECT_NEAR(xl::nn::cross_entropy(certain, threes).item<float>(), 0.0f, 1e-6f);
}

// A cross-entropy training step reads its logits from memory twice, in two loops: the loss per row and
// the gradient each compute the rows' max and sum of exponentials by rows, the target's one-hot gradient is
// a select inside the gradient's loop (no scatter into a zeroed buffer), and no gradient flows through the
// max. The loss and the gradient against the oracle, and against softmax minus the one-hot target.
TEST(CpuBackend, ACrossEntropyStepReadsItsLogitsInTwoLoops) {
  xl::manual_seed(24);
  const int64_t rows = 4096, classes = 96;
  std::vector<int64_t> picks(rows);
  for (size_t i = 0; i < picks.size(); ++i) picks[i] = static_cast<int64_t>((i * 37) % classes);
  auto target = xl::from_bytes(picks.data(), {rows}, xl::DType::i64);
  auto logits = xl::randn({rows, classes}) * 4.0f;
  xl::sync({logits});  // an argument of the step's graph
  logits.requires_grad_();
  auto loss = xl::nn::cross_entropy(logits, target);
  loss.backward();
  auto built = xl::lazy::build_graph({loss.impl()->node(), logits.grad().impl()->node()});
  const xl::ir::Graph graph = xl::compiler::optimize(built.graph);
  auto plan = xl::compiler::plan_fusion(graph);
  int32_t logits_param = -1;
  for (size_t i = 0; i < graph.instrs.size(); ++i)
    if (graph.instrs[i].op == xl::ir::OpId::parameter && graph.instrs[i].shape == xl::Shape{rows, classes})
      logits_param = static_cast<int32_t>(i);
  ASSERT_GE(logits_param, 0);
  size_t reading_logits = 0, scatters = 0, in_two_loops = 0;
  for (const auto& region : plan.regions) {
    reading_logits += std::count(region.inputs.begin(), region.inputs.end(), logits_param);
    scatters += graph.instrs[region.root].op == xl::ir::OpId::scatter_add;
  }
  for (const auto& d : plan.decisions)
    in_two_loops +=
        d.choice == xl::compiler::FusionChoice::compute_by_rows && d.text.find(" and ") != std::string::npos;
  const std::string described = xl::compiler::describe(plan);
  EXPECT_EQ(reading_logits, 2u) << described;
  EXPECT_EQ(scatters, 0u) << described;
  EXPECT_EQ(in_two_loops, 2u) << described;  // the max and the sum
  EXPECT_EQ(described.find("reduce_max:"), std::string::npos) << described;
  expect_built_matches_reference(built, 1, 1e-6f, 1e-5f, 0);
  expect_built_matches_reference(built, rows * classes, 1e-9f, 1e-5f, 0, 1);
  // The gradient is (softmax - one_hot) / rows.
  auto one_hot = xl::where(xl::arange(0, classes).reshape({1, classes}) == target.reshape({rows, 1}), 1.0f,
                           xl::zeros({rows, classes}));
  auto want = (xl::softmax(logits.detach(), -1) - one_hot) / static_cast<double>(rows);
  EXPECT_TRUE(xl::allclose(logits.grad(), want, 1e-5, 1e-9));
}

// Heads [B, H, T, D] transposed and merged back into rows [B, T, H * D] run tile by tile, D elements at a
// time, so that each head's reads are contiguous (the backward of a head split: three such gradients padded
// into one QKV gradient). The same values as the oracle, bit for bit: the merge through pads and through a
// concat, a slice of whole and of partial tiles, a broadcast bias, a reshape whose input dim holds two
// tiles, a merge of the leading dims, a pad that is not a whole number of tiles, a bf16 conversion, and
// enough elements that the threads split a tile.
TEST(CpuBackend, HeadsMergedBackIntoRowsReadTileByTile) {
  xl::manual_seed(23);
  const int64_t B = 3, H = 5, T = 173, D = 48;
  std::vector<xl::Tensor> g;
  for (int k = 0; k < 3; ++k) g.push_back(xl::randn({B, H, T, D}) * 1.0f);
  auto merged = [&](const xl::Tensor& heads) { return xl::reshape(xl::transpose(heads, 1, 2), {B, T, H * D}); };
  auto bias = xl::randn({3 * H * D});
  auto four_heads = xl::randn({B, 4, T, D}) * 1.0f;
  auto two_tiles = xl::randn({B, T, 2, 2 * D}) * 1.0f;      // each dim of 96 holds two tiles of 48
  auto not_tiles = xl::randn({B, T, 2, H * D / 2}) * 1.0f;  // 120: not a whole number of tiles
  const int64_t HD = H * D;
  std::vector<xl::Tensor> cases = {
      xl::pad(merged(g[0]), {2 * HD, 0}) + xl::pad(merged(g[1]), {HD, HD}) + xl::pad(merged(g[2]), {0, 2 * HD}),
      xl::concat({merged(g[0]), merged(g[1]), merged(g[2])}, 2) + bias,
      xl::slice(merged(g[0]), 2, D, 3 * D) * 2.0f,
      xl::slice(merged(g[1]), 2, 8, 8 + 2 * D) - 1.0f,
      xl::reshape(xl::transpose(four_heads, 1, 2), {B, T, 4 * D}) + xl::reshape(two_tiles, {B, T, 4 * D}),
      merged(g[2]) + xl::reshape(not_tiles, {B, T, HD}),
      xl::reshape(merged(g[0]), {B * T, HD}) * 0.5f,
      xl::pad(merged(g[1]), {8, 40}) + 1.0f,
      merged(g[2]).to(xl::DType::bf16).to(xl::DType::f32) * 3.0f,
  };
  expect_cpu_matches_reference(cases, 0.0f, 0.0f);
}

// GEMM operands that are slices, reshapes and transposes of a computed value (attention heads split out
// of one qkv projection) are read in place through strides: no copy region for them, same values as
// the oracle. Views that cannot be strided (a reshape merging dims that are not contiguous, a slice
// with a step along both matrix dims) are still copied out, and are still right.
TEST(CpuBackend, GemmOperandViewsAreReadInPlace) {
  xl::manual_seed(8);
  const int64_t B = 2, T = 5, H = 3, D = 4;
  auto qkv = xl::randn({B, T, 3 * H * D}) * 1.0f;  // computed (a multiply), not an argument
  auto heads = [&](int part) {
    return xl::slice(qkv, 2, part * H * D, (part + 1) * H * D).reshape({B, T, H, D}).transpose(1, 2);  // [B,H,T,D]
  };
  auto scores = xl::matmul(heads(0), heads(1).transpose(-1, -2));  // [B,H,T,T]
  auto out = xl::matmul(xl::softmax(scores, -1), heads(2));
  auto x = xl::randn({6, 8}) + 0.0f;
  auto odd = xl::matmul(xl::slice(xl::slice(x, 0, 0, 6, 2), 1, 0, 8, 2), xl::randn({4, 3}));  // steps on both dims
  auto merged = xl::matmul(x.transpose(0, 1).reshape({4, 12}), xl::randn({12, 2}));           // not a strided view
  auto y = xl::randn({2, 5, 8}) * 1.0f;
  xl::sync({x, y});  // arguments of the graphs below: views of them need no copy
  auto rows_of_wider = xl::matmul(xl::slice(x, 1, 2, 6), xl::randn({4, 3}));                 // sgemm with lda 8
  auto batched_slice = xl::matmul(xl::slice(y, 2, 1, 5), xl::randn({2, 4, 3}));              // batch stride 40
  auto transposed_b = xl::matmul(xl::randn({3, 8}), xl::slice(x, 0, 1, 4).transpose(0, 1));  // b read by columns
  expect_cpu_matches_reference({scores, out, odd, merged, rows_of_wider, batched_slice, transposed_b}, 1e-4f, 1e-4f);
  auto graph = xl::compiler::optimize(xl::lazy::build_graph({scores.impl()->node()}).graph);
  auto plan = xl::compiler::plan_fusion(graph);
  const std::string text = xl::compiler::describe(plan);
  ASSERT_EQ(plan.regions.size(), 2u) << text;  // the qkv multiply and the GEMM: no copies of the heads
  EXPECT_EQ(graph.instrs[plan.regions[1].root].op, xl::ir::OpId::dot) << text;
  EXPECT_NE(text.find("through strides"), std::string::npos) << text;
}

// Every new shape is a new program with new kernels. With both caches small, the machine code of a
// program leaves the JIT once the program and its kernels have left the caches (it was never freed).
TEST(CpuBackend, MachineCodeLeavesTheJitWithTheLastProgramThatRunsIt) {
  if (std::getenv("XLITE_BACKEND")) GTEST_SKIP() << "about the default cpu backend";
  auto& programs = xl::compiler::executable_cache();
  const size_t programs_before = programs.capacity();
  programs.set_capacity(8);
  xl::backends::cpu::set_kernel_cache_size(8);
  const int64_t compiled = xl::backends::cpu::kernels_compiled();
  for (int n = 1; n <= 150; ++n) {
    auto x = xl::tensor(std::vector<float>(static_cast<size_t>(n), 0.5f));
    EXPECT_NEAR(xl::sum(xl::tanh(x) * 2.0f).item<float>(), n * 2.0f * std::tanh(0.5f), 1e-3f * n);
  }
  EXPECT_GE(xl::backends::cpu::kernels_compiled() - compiled, 150);
  EXPECT_LE(xl::backends::cpu::kernels_cached(), 8);
  // 8 cached kernels and those of 8 cached programs, plus a few held by tests that ran before.
  EXPECT_LE(xl::backends::cpu::jit_modules_alive(), 64);
  programs.set_capacity(programs_before);
  xl::backends::cpu::set_kernel_cache_size(4096);
}
