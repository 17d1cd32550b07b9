// What a user looks at: the optimized graph with its fusion plan, the same as Graphviz, the metrics
// report, and every synced graph saved to a file (XLITE_SAVE_GRAPHS, set by ctest for its own processes).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>
#include <xlite/xlite.h>

#include "ir/graph.h"
#include "test_support.h"

namespace xl = xlite;
using xlite_test::Occurrences;

namespace {
// Every "vN -> vM" edge names nodes the text defines, and braces balance. (No std::regex: GCC 12 warns
// inside it under the sanitizer build.)
void ExpectWellFormedDot(const std::string& dot) {
  EXPECT_EQ(dot.rfind("digraph xlite {", 0), 0u) << dot;
  EXPECT_EQ(Occurrences(dot, "{"), Occurrences(dot, "}")) << dot;
  std::set<std::string> defined;
  std::vector<std::pair<std::string, std::string>> edges;
  std::istringstream lines(dot);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, second, third;
    words >> first >> second >> third;
    if (first.size() > 1 && first[0] == 'v' && second.rfind("[label=", 0) == 0) defined.insert(first);
    if (second == "->") edges.emplace_back(first, third.substr(0, third.size() - 1));  // drop the ';'
  }
  EXPECT_FALSE(edges.empty());
  for (const auto& [from, to] : edges) {
    EXPECT_TRUE(defined.count(from)) << from << " is not defined";
    if (to[0] == 'v') {
      EXPECT_TRUE(defined.count(to)) << to << " is not defined";
    }
  }
}
}  // namespace

TEST(DebugViews, OptimizedTextShowsThePassesAndTheFusionPlan) {
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  xl::Tensor b = xl::tensor(std::vector<float>{1, 2, 3});
  xl::Tensor y = xl::transpose(xl::tanh(x + b * 1.0), 0, 1);  // the * 1 is simplified away
  const std::string text = xl::debug::optimized_text({y});
  EXPECT_EQ(Occurrences(text, " mul("), 0) << text;
  EXPECT_EQ(Occurrences(text, "fusion:\n"), 1) << text;
  EXPECT_NE(text.find("transpose: 4 ops fused, 2 inputs"), std::string::npos) << text;
  // The graph part parses back.
  EXPECT_NO_THROW(xl::ir::parse_graph(text.substr(0, text.find("fusion:\n"))));
}

TEST(DebugViews, GraphDotDrawsEachRegionAsACluster) {
  xl::Tensor x = xl::randn({8, 16});
  xl::Tensor w = xl::randn({16, 4});
  xl::Tensor h = xl::relu(xl::matmul(x, w) + 1.5);  // a GEMM, then a loop
  xl::Tensor s = xl::sum(xl::exp(h), {1});          // a reduction
  const std::string dot = xl::debug::graph_dot({s, h});
  ExpectWellFormedDot(dot);
  EXPECT_GE(Occurrences(dot, "subgraph cluster_"), 3) << dot;
  EXPECT_NE(dot.find("label=\"matmul %"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"reduce %"), std::string::npos) << dot;
  EXPECT_NE(dot.find("shape=ellipse"), std::string::npos) << dot;  // parameters
  EXPECT_EQ(Occurrences(dot, "shape=plaintext"), 2) << dot;        // two outputs
}

TEST(DebugViews, GraphDotRendersWithGraphviz) {
  xl::Tensor x = xl::randn({4, 4});
  const std::string dot = xl::debug::graph_dot({xl::softmax(x, -1)});
  const std::string path = ::testing::TempDir() + "xlite_graph.dot";
  std::ofstream(path) << dot;
  // graphviz comes with scripts/install-deps.sh.
  const int status = std::system(("dot -Tsvg " + path + " -o " + path + ".svg 2>&1").c_str());
  ASSERT_EQ(status, 0) << "dot could not render:\n" << dot;
  std::ifstream svg(path + ".svg");
  std::stringstream rendered;
  rendered << svg.rdbuf();
  EXPECT_NE(rendered.str().find("<svg"), std::string::npos);
  std::remove(path.c_str());
  std::remove((path + ".svg").c_str());
}

TEST(DebugViews, MetricsReportHasRatesAndPercentilesAndAShortForm) {
  for (int i = 0; i < 5; ++i) xl::sum(xl::ones({16 + i})).item<float>();  // five compiles, five executions
  const std::string full = xl::metrics::metrics_report();
  EXPECT_NE(full.find("Metric: CompileTime\n  TotalSamples: "), std::string::npos) << full;
  EXPECT_NE(full.find("  Rate: "), std::string::npos) << full;
  EXPECT_NE(full.find("  Percentiles: 50%="), std::string::npos) << full;
  EXPECT_NE(full.find("Counter: CreateTensor"), std::string::npos) << full;
  const std::string brief = xl::metrics::short_metrics_report();
  EXPECT_NE(brief.find("Metric: ExecuteTime"), std::string::npos) << brief;
  EXPECT_NE(brief.find("Counter: UncachedCompile"), std::string::npos) << brief;
  EXPECT_EQ(brief.find("CreateTensor"), std::string::npos) << brief;
}

// The module's signature is the graph's: its inputs in parameter order, the tensors' values out. That XLA
// runs it and agrees with xlite is tests/python/stablehlo_xla.py's job (ctest stablehlo_xla).
TEST(DebugViews, StablehloTakesTheInputsAndReturnsTheTensors) {
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  xl::Tensor w = xl::tensor(std::vector<float>{1, 0, 0, 1, 1, 1}, {3, 2});
  xl::Tensor h = xl::relu(xl::matmul(x, w));
  xl::Tensor total = xl::sum(h, {1});
  const std::string module = xl::debug::stablehlo({total, h});
  EXPECT_EQ(module.rfind("module @xlite {\n  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>) -> "
                         "(tensor<2xf32>, tensor<2x2xf32>) {\n",
                         0),
            0u)
      << module;
  EXPECT_EQ(Occurrences(module, "\"stablehlo.dot_general\"(%arg0, %arg1)"), 1) << module;
  EXPECT_EQ(Occurrences(module, "\"stablehlo.reduce\""), 1) << module;
  EXPECT_EQ(Occurrences(module, "\"func.return\""), 1) << module;
  // Each IR instruction's text line is a comment above its ops.
  EXPECT_EQ(Occurrences(module, "    // %2 = dot(%0, %1) : f32[2,2]\n"), 1) << module;
  EXPECT_EQ(xl::debug::stablehlo({total, h}), module);  // exporting does not sync or change the graph
  EXPECT_THROW(xl::debug::stablehlo({xl::Tensor()}), xl::Error);
}

// Run by ctest with XLITE_SAVE_GRAPHS set to a fresh file (and XLITE_SAVE_GRAPHS_FMT to text, dot or
// stablehlo).
TEST(DebugViews, SavedGraphsAreAppendedPerSync) {
  const char* path = std::getenv("XLITE_SAVE_GRAPHS");
  if (!path) GTEST_SKIP() << "run with XLITE_SAVE_GRAPHS=FILE";
  std::remove(path);
  const char* fmt = std::getenv("XLITE_SAVE_GRAPHS_FMT");
  const std::string format = fmt ? fmt : "text";
  xl::Tensor a = xl::tensor(std::vector<float>{1, 2, 3});
  xl::Tensor b = xl::exp(a) * 2.0;
  xl::sync();
  xl::Tensor c = xl::sum(b, {0});
  EXPECT_NEAR(c.item<float>(), 2 * (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-3);
  std::ifstream in(path);
  std::stringstream saved;
  saved << in.rdbuf();
  const std::string text = saved.str();
  // Each header is a comment of the format: '#' in text IR and dot, '//' in MLIR.
  const std::string header = format == "stablehlo" ? "// graph " : "# graph ";
  ASSERT_EQ(Occurrences(text, header), 2) << text;
  EXPECT_NE(text.find("(user sync)"), std::string::npos) << text;
  EXPECT_NE(text.find("(value read"), std::string::npos) << text;
  if (format == "dot") {
    EXPECT_EQ(Occurrences(text, "digraph xlite {"), 2) << text;
  } else if (format == "stablehlo") {
    EXPECT_EQ(Occurrences(text, "module @xlite {"), 2) << text;
    EXPECT_EQ(Occurrences(text, "\"stablehlo.exponential\""), 1) << text;
    EXPECT_EQ(Occurrences(text, "\"stablehlo.reduce\""), 1) << text;
  } else {
    // Each saved graph parses back.
    const size_t second = text.find(header, 1);
    EXPECT_NO_THROW(xl::ir::parse_graph(text.substr(0, second)));
    EXPECT_NO_THROW(xl::ir::parse_graph(text.substr(second)));
  }
}

TEST(DebugViews, TheMemoryTimelineFollowsTheBufferPlan) {
  // A[64,64] -> B = A @ A -> C = B @ A -> sum(C): B is freed after C is computed, A is the caller's.
  std::vector<float> host(64 * 64);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 5) * 0.01f;
  xl::Tensor a = xl::tensor(host, {64, 64});
  xl::Tensor c = xl::matmul(xl::matmul(a, a), a);
  xl::Tensor total = xl::sum(c, {0, 1});
  const int64_t executed = xl::metrics::counter_value("Execute");
  const std::vector<xl::debug::MemoryStep> timeline = xl::debug::memory_timeline({total});
  EXPECT_EQ(xl::metrics::counter_value("Execute"), executed);  // planned, not run
  ASSERT_EQ(timeline.size(), 3u);
  const int64_t matrix = 64 * 64 * 4;
  EXPECT_EQ(timeline[0].step, "matmul f32[64,64] x f32[64,64]");
  EXPECT_EQ(timeline[0].output_bytes, matrix);
  EXPECT_EQ(timeline[0].live_bytes, 2 * matrix);  // A and B
  EXPECT_EQ(timeline[1].live_bytes, 3 * matrix);  // A, B and C: the peak
  EXPECT_EQ(timeline[2].step.rfind("reduce reduce_sum f32[]", 0), 0u) << timeline[2].step;
  EXPECT_EQ(timeline[2].output_bytes, 4);
  EXPECT_EQ(timeline[2].live_bytes, 2 * matrix + 4);  // B is gone: A, C and the sum
  EXPECT_THROW(xl::debug::memory_timeline({xl::Tensor()}), xl::Error);
}
