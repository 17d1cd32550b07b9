// Random graphs: every one verifies and round-trips through text, the generator is deterministic, and
// every backend computes what the reference computes (differential testing; see compiler/random_graph.h).
#include "testing/random_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/cache.h"
#include "compiler/fusion.h"
#include "compiler/optimize.h"
#include "core/address_sanitizer.h"
#include "core/half.h"
#include "ir/graph.h"
#include "runtime/allocator.h"
#include "xlite/error.h"

namespace {
namespace xl = xlite;
namespace xc = xlite::compiler;
namespace xt = xlite::testing;
using xl::ir::OpId;

constexpr uint64_t kDifferentialSeed = 20261202;
constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-4;

// How many graphs the differential test runs: XLITE_RANDOM_GRAPHS, else 2000 (400 under sanitizers).
// The count is exact; the time limit field is there for the long-running tool-style runs.
struct Budget {
  int64_t graphs;
  double seconds;  // <= 0: no time limit
};

Budget differential_budget() {
  if (const char* env = std::getenv("XLITE_RANDOM_GRAPHS"); env && *env) return {std::atoll(env), 0};
  // A fixed count, so that every run checks the same graphs whatever the machine's speed.
  return XLITE_ADDRESS_SANITIZER ? Budget{400, 0} : Budget{2000, 0};
}

bool is_special(double v) { return !std::isfinite(v); }

xl::BufferPtr buffer_of_bytes(const void* data, size_t bytes) {
  xl::BufferPtr b = xl::runtime::allocator(xl::Device{}).allocate(bytes);
  if (bytes) std::memcpy(b->data(), data, bytes);
  return b;
}

template <class T>
xl::BufferPtr buffer_of(const std::vector<T>& values) {
  return buffer_of_bytes(values.data(), values.size() * sizeof(T));
}

xt::BackendRun fake_run(const std::string& name, std::vector<xl::BufferPtr> outputs) {
  xt::BackendRun run;
  run.backend = name;
  run.outputs = std::move(outputs);
  return run;
}

xt::BackendRun fake_throw(const std::string& name, bool xlite_error) {
  xt::BackendRun run;
  run.backend = name;
  run.threw = true;
  run.threw_xlite_error = xlite_error;
  run.error = "[gather] index 9 is out of range for dim 0 of size 3";
  return run;
}

}  // namespace

TEST(RandomGraph, GraphsVerifyAndRoundTripThroughText) {
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    xl::ir::Graph g = xt::random_graph(seed);
    ASSERT_NO_THROW(xl::ir::verify(g)) << xl::ir::to_text(g);
    EXPECT_GE(g.instrs.size(), 5u);
    EXPECT_LE(g.instrs.size(), 60u);
    ASSERT_FALSE(g.outputs.empty());
    std::string text = xl::ir::to_text(g);
    xl::ir::Graph parsed;
    ASSERT_NO_THROW(parsed = xl::ir::parse_graph(text)) << text;
    EXPECT_EQ(parsed.hash(), g.hash()) << text;
    EXPECT_EQ(xl::ir::to_text(parsed), text);
    std::vector<xl::BufferPtr> args = xt::random_arguments(g, seed);
    ASSERT_EQ(static_cast<int64_t>(args.size()), g.num_parameters);
    for (const auto& instr : g.instrs)
      if (instr.op == OpId::parameter) {
        EXPECT_GE(args[instr.attrs.get_int(xl::ir::AttrKey::index)]->bytes(),
                  static_cast<size_t>(xl::numel(instr.shape) * xl::dtype_size(instr.dtype)));
      }
  }
}

TEST(RandomGraph, CoversEveryOpDtypeAndRank) {
  std::set<OpId> ops;
  std::set<xl::DType> dtypes;
  std::set<size_t> ranks;
  bool empty_value = false, parameter_output = false, repeated_output = false, special_constant = false;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    xl::ir::Graph g = xt::random_graph(seed);
    for (const auto& instr : g.instrs) {
      ops.insert(instr.op);
      dtypes.insert(instr.dtype);
      ranks.insert(instr.shape.size());
      empty_value = empty_value || xl::numel(instr.shape) == 0;
      if (instr.op == OpId::constant)
        special_constant = special_constant || is_special(instr.attrs.get_float(xl::ir::AttrKey::value));
    }
    std::set<int32_t> seen;
    for (int32_t o : g.outputs) {
      parameter_output = parameter_output || g.instrs[o].op == OpId::parameter;
      repeated_output = repeated_output || !seen.insert(o).second;
    }
  }
  for (int i = 0; i < xl::ir::kNumOps; ++i)
    EXPECT_TRUE(ops.count(static_cast<OpId>(i))) << "no random graph uses " << xl::ir::op_name(static_cast<OpId>(i));
  for (xl::DType d : {xl::DType::f32, xl::DType::f64, xl::DType::f16, xl::DType::bf16, xl::DType::i32, xl::DType::i64,
                      xl::DType::u8, xl::DType::bool_})
    EXPECT_TRUE(dtypes.count(d)) << "no random graph uses " << xl::dtype_name(d);
  for (size_t r = 0; r <= 4; ++r) EXPECT_TRUE(ranks.count(r)) << "no value of rank " << r;
  EXPECT_TRUE(empty_value);
  EXPECT_TRUE(parameter_output);
  EXPECT_TRUE(repeated_output);
  EXPECT_TRUE(special_constant);
}

TEST(RandomGraph, IsDeterministicForASeed) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    xl::ir::Graph a = xt::random_graph(seed);
    xl::ir::Graph b = xt::random_graph(seed);
    ASSERT_EQ(xl::ir::to_text(a), xl::ir::to_text(b)) << "seed " << seed;
    ASSERT_EQ(a.hash(), b.hash());
    ASSERT_TRUE(a == b) << "seed " << seed;
    hashes.insert(a.hash());
    auto x = xt::random_arguments(a, seed);
    auto y = xt::random_arguments(b, seed);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(x[i]->bytes(), y[i]->bytes());
      EXPECT_EQ(std::memcmp(x[i]->data(), y[i]->data(), x[i]->bytes()), 0) << "seed " << seed << " argument " << i;
    }
  }
  EXPECT_GE(hashes.size(), 195u) << "different seeds should give different graphs";
  // Options take part: a different size range gives a different graph.
  xt::RandomGraphOptions small;
  small.min_instructions = small.max_instructions = 10;
  EXPECT_NE(xt::random_graph(7, small).hash(), xt::random_graph(7).hash());
}

TEST(RandomGraph, RespectsOptions) {
  xt::RandomGraphOptions o;
  o.min_instructions = o.max_instructions = 12;
  o.max_rank = 2;
  o.max_elements = 64;
  o.random_ops = false;
  o.special_values = false;
  o.max_outputs = 2;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    xl::ir::Graph g = xt::random_graph(seed, o);
    ASSERT_NO_THROW(xl::ir::verify(g));
    EXPECT_EQ(g.instrs.size(), 12u) << xl::ir::to_text(g);
    EXPECT_LE(g.outputs.size(), 2u);
    for (const auto& instr : g.instrs) {
      EXPECT_LE(instr.shape.size(), 2u);
      EXPECT_LE(xl::numel(instr.shape), 64);
      EXPECT_NE(instr.op, OpId::rng_uniform);
      EXPECT_NE(instr.op, OpId::rng_normal);
      if (instr.op == OpId::constant || instr.op == OpId::pad) {
        EXPECT_FALSE(is_special(instr.attrs.get_float(xl::ir::AttrKey::value))) << xl::ir::to_text(g);
      }
    }
  }
}

// Every backend against the reference on random graphs. With only the reference, it is compared with
// itself so that the harness still runs.
TEST(RandomGraph, BackendsMatchTheReference) {
  std::vector<std::string> backends;
  for (const std::string& name : xc::backend_names())
    if (name != "reference") backends.push_back(name);
  if (backends.empty()) {
    std::cout << "[   INFO   ] no backend besides 'reference' yet: comparing 'reference' with itself\n";
    backends.push_back("reference");
  }
  const Budget budget = differential_budget();
  for (const std::string& backend : backends) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    int64_t done = 0, threw = 0;
    std::vector<uint64_t> failed;
    for (; done < budget.graphs; ++done) {
      if (budget.seconds > 0 && elapsed() > budget.seconds / static_cast<double>(backends.size())) break;
      const uint64_t seed = kDifferentialSeed + static_cast<uint64_t>(done);
      xl::ir::Graph graph = xt::random_graph(seed);
      std::vector<xl::BufferPtr> args = xt::random_arguments(graph, seed);
      xt::BackendRun reference = xt::run_backend(graph, args, "reference");
      if (reference.threw && threw++ < 3)  // the generator promises graphs that run
        ADD_FAILURE() << "the reference threw on seed " << seed << ": " << reference.error << "\n"
                      << xl::ir::to_text(graph);
      xt::BackendRun other = xt::run_backend(graph, args, backend);
      xt::Comparison c = xt::compare_runs(graph, other, reference, kRtol, kAtol);
      if (!c.ok) {
        if (failed.size() < 3)
          ADD_FAILURE() << "seed " << seed << " (reproduce: xlite-fuzz-graphs --seed " << seed
                        << " --count 1 --backend " << backend << ")\n"
                        << c.message;
        failed.push_back(seed);
      }
    }
    std::cout << "[   INFO   ] '" << backend << "' vs 'reference': " << done << " random graphs from seed "
              << kDifferentialSeed << " in " << elapsed() << " s, " << failed.size() << " mismatched, " << threw
              << " threw in the reference" << (done < budget.graphs ? " (stopped by the time budget)" : "") << "\n";
    if (!failed.empty()) {
      std::string seeds;
      for (size_t i = 0; i < failed.size() && i < 30; ++i) seeds += " " + std::to_string(failed[i]);
      ADD_FAILURE() << "'" << backend << "': " << failed.size() << " of " << done
                    << " graphs mismatched; seeds:" << seeds;
    }
    if (budget.graphs > 0) {
      EXPECT_GT(done, 0);
    }
  }
}

// Out-of-range indices must throw xlite::Error in every backend (compare_runs accepts two throws). The
// generator returns every op whose index may be out of range, so no backend may drop it as dead code.
TEST(RandomGraph, OutOfRangeIndicesThrowInEveryBackend) {
  xt::RandomGraphOptions o;
  o.out_of_range_index_probability = 1.0;
  o.max_instructions = 25;
  int64_t reference_threw = 0;
  const int64_t count = XLITE_ADDRESS_SANITIZER ? 40 : 100;
  for (uint64_t seed = 0; seed < static_cast<uint64_t>(count); ++seed) {
    xl::ir::Graph graph = xt::random_graph(seed, o);
    auto args = xt::random_arguments(graph, seed);
    xt::BackendRun reference = xt::run_backend(graph, args, "reference");
    reference_threw += reference.threw;
    if (reference.threw) {
      EXPECT_TRUE(reference.threw_xlite_error) << reference.error;
    }
    for (const std::string& backend : xc::backend_names()) {
      if (backend == "reference") continue;
      xt::Comparison c = xt::compare_runs(graph, xt::run_backend(graph, args, backend), reference, kRtol, kAtol);
      EXPECT_TRUE(c.ok) << "seed " << seed << "\n" << c.message;
      if (!c.ok) break;
    }
  }
  EXPECT_GT(reference_threw, count / 20) << "the option should make some graphs index out of range";
}

TEST(RandomGraph, CompareRunsAcceptsWhatIsCloseAndReportsWhatIsNot) {
  const std::string text =
      "%0 = parameter(index=0) : f32[2,2]\n"
      "%1 = exp(%0) : f32[2,2]\n"
      "%2 = convert(%1, dtype=f16) : f16[2,2]\n"
      "%3 = convert(%0, dtype=i32) : i32[2,2]\n"
      "%4 = isnan(%1) : bool[2,2]\n"
      "return %1, %2, %3, %4\n";
  const xl::ir::Graph g = xl::ir::parse_graph(text);
  const float nan = std::nanf(""), inf = INFINITY;
  auto f16 = [](std::vector<float> v) {
    std::vector<uint16_t> h;
    for (float x : v) h.push_back(xl::float_to_f16(x));
    return buffer_of(h);
  };
  auto run = [&](const std::string& name, std::vector<float> f, std::vector<float> h, std::vector<int32_t> i,
                 std::vector<uint8_t> b) { return fake_run(name, {buffer_of(f), f16(h), buffer_of(i), buffer_of(b)}); };
  const xt::BackendRun base = run("a", {1, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0});
  auto compare = [&](const xt::BackendRun& other) { return xt::compare_runs(g, other, base, 1e-4, 1e-4); };

  EXPECT_TRUE(compare(run("b", {1, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);
  // Within rtol / atol; f16 within its looser 1e-2.
  EXPECT_TRUE(compare(run("b", {1.00005f, nan, inf, 2.0001f}, {1.005f, 2, 0.005f, 0}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);
  // Any non-zero byte is true.
  EXPECT_TRUE(compare(run("b", {1, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 7, 0, 0})).ok);

  // The same relative error is too much for f32.
  xt::Comparison c = compare(run("b", {1.005f, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0}));
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("output 0 (%1)"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("element 0 (index [0,0])"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("'b' gives 1.005, 'a' gives 1 (1 of 4 elements differ"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("%1 = exp(%0) : f32[2,2]"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find(text), std::string::npos) << "the whole graph belongs in the message:\n" << c.message;

  EXPECT_FALSE(compare(run("b", {1, 1, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);     // NaN vs 1
  EXPECT_FALSE(compare(run("b", {1, nan, -inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);  // inf sign
  EXPECT_FALSE(
      compare(run("b", {1, nan, 3e38f, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);  // inf vs finite
  EXPECT_FALSE(compare(run("b", {1, nan, inf, 2}, {1, 2.1f, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);  // f16 5%

  c = compare(run("b", {1, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 5, 4}, {0, 1, 0, 0}));  // integers are exact
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("output 2 (%3) i32[2,2] differs at element 2 (index [1,0]): 'b' gives 5, 'a' gives 3"),
            std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find("instruction: %3 = convert(%0, dtype=i32) : i32[2,2]"), std::string::npos) << c.message;
  c = compare(run("b", {1, nan, inf, 2}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 1, 0}));
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("'b' gives true, 'a' gives false"), std::string::npos) << c.message;

  // Outputs missing or too small.
  EXPECT_FALSE(compare(fake_run("b", {buffer_of(std::vector<float>{1, nan, inf, 2})})).ok);
  EXPECT_FALSE(compare(run("b", {1, nan, inf}, {1, 2, 0, 0.001f}, {1, 2, 3, 4}, {0, 1, 0, 0})).ok);

  // Errors: both xlite::Error is agreement; one, or anything else, is not.
  EXPECT_TRUE(xt::compare_runs(g, fake_throw("a", true), fake_throw("b", true), 0, 0).ok);
  c = xt::compare_runs(g, fake_throw("a", true), base, 0, 0);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("only one of them threw"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("index 9 is out of range"), std::string::npos) << c.message;
  EXPECT_FALSE(xt::compare_runs(g, base, fake_throw("b", true), 0, 0).ok);
  EXPECT_FALSE(xt::compare_runs(g, fake_throw("a", false), fake_throw("b", true), 0, 0).ok);
}

TEST(RandomGraph, CompareBackendsRunsBothAndCatchesErrors) {
  xl::ir::Graph g = xt::random_graph(3);
  auto args = xt::random_arguments(g, 3);
  xt::Comparison same = xt::compare_backends(g, args, "reference", "reference", 0, 0);
  EXPECT_TRUE(same.ok) << same.message;
  // An unknown backend throws xlite::Error when compiling: a mismatch with one that runs.
  xt::Comparison c = xt::compare_backends(g, args, "reference", "no-such-backend", 1e-4, 1e-4);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("unknown backend"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find(xl::ir::to_text(g)), std::string::npos);
  // Too few arguments is a bug of the caller inside xlite: both throw xlite::InternalError, and an internal
  // error is never agreement, even when both backends throw it.
  ASSERT_GT(g.num_parameters, 0);
  args.pop_back();
  c = xt::compare_backends(g, args, "reference", "reference", 0, 0);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("InternalError"), std::string::npos) << c.message;
}

// The differential test exercises the backend's plan-dependent paths: row reductions computed inside the
// loop that reads them, and GEMM operands read in place through strides.
TEST(RandomGraph, ReachesRowFusionAndGemmOperandViews) {
  int row_fused = 0, gemm_views = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    const std::string plan = xc::describe(xc::plan_fusion(xc::optimize(xt::random_graph(seed))));
    row_fused += plan.find("row by row") != std::string::npos;
    gemm_views += plan.find("through strides") != std::string::npos;
  }
  EXPECT_GE(row_fused, 20);
  EXPECT_GE(gemm_views, 5);
  std::cout << "of 1000 graphs, " << row_fused << " have a row-fused reduction and " << gemm_views
            << " a GEMM operand read through strides\n";
}
