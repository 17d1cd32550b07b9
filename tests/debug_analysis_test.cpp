// XLITE_DEBUG's reports (lazy/debug_report.h) and the call sites they name (core/call_site.h). The report
// tests read XLITE_DEBUG_FILE, which ctest sets with XLITE_DEBUG_LEVEL for processes of their own
// (debug_analysis_level1..3); without it they skip. This file is compiled with -g: its lines are the user
// call sites the reports must name.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "core/call_site.h"
#include "core/debug_output.h"
#include "ir/graph.h"
#include "lazy/debug_report.h"
#include "lazy/debug_warnings.h"
#include "test_support.h"

namespace xl = xlite;
using xlite_test::Occurrences;

namespace {
std::string ThisFile() { return __FILE__; }

[[gnu::noinline]] std::vector<xl::call_site::Frame> FramesHere(int* line) {
  *line = __LINE__ + 1;
  return xl::call_site::Stack::capture().user_frames(4);
}

// What the debug output file gained since this object was made.
class DebugFile {
 public:
  DebugFile() {
    const char* path = std::getenv("XLITE_DEBUG_FILE");
    if (!path) return;
    path_ = path;
    std::ifstream in(path_, std::ios::binary | std::ios::ate);
    start_ = in ? static_cast<std::streamoff>(in.tellg()) : 0;
  }
  bool active() const { return !path_.empty(); }
  std::string added() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str().substr(static_cast<size_t>(start_));
  }

 private:
  std::string path_;
  std::streamoff start_ = 0;
};

#define REQUIRE_DEBUG_FILE(file)                                                  \
  if (!(file).active()) GTEST_SKIP() << "run by ctest with XLITE_DEBUG_FILE set"; \
  ASSERT_GE(xl::debug_output::level(), 1)

// One call site for graphs of different shapes: the explainer compares graphs made here.
int g_site_line = 0;
[[gnu::noinline]] void ScaleAtOneSite(const xl::Tensor& x) {
  xl::Tensor y = x * 3.0;
  g_site_line = __LINE__ + 1;
  xl::sync({y});
}
}  // namespace

TEST(CallSite, TheFirstUserFrameIsTheCallingLine) {
  int line = 0;
  const std::vector<xl::call_site::Frame> frames = FramesHere(&line);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames[0].file, ThisFile());
  EXPECT_EQ(frames[0].line, line);
  EXPECT_NE(frames[0].function.find("FramesHere"), std::string::npos) << frames[0].function;
  // The test body that called it comes next; gtest's and the C library's frames are not the user's.
  ASSERT_GE(frames.size(), 2u);
  EXPECT_EQ(frames[1].file, ThisFile());
  for (const auto& frame : frames) EXPECT_EQ(frame.file.rfind("/usr/", 0), std::string::npos) << frame.file;
}

TEST(CallSite, XlitesOwnFramesAreLeftOut) {
  // A stack captured inside xlite (the node's, under XLITE_DEBUG) starts at the user's line, not in ops.
  int line = 0;
  std::vector<xl::call_site::Frame> frames = FramesHere(&line);
  for (const auto& frame : frames) {
    EXPECT_EQ(frame.file.find("/src/"), std::string::npos) << frame.file;
    EXPECT_EQ(frame.file.find("/include/xlite/"), std::string::npos) << frame.file;
  }
  EXPECT_EQ(xl::call_site::describe(std::vector<xl::call_site::Frame>{}, "  "),
            "  (no user frame with line information: build with -g)\n");
  EXPECT_EQ(xl::call_site::describe(xl::call_site::Frame{"f()", "/a/b.cpp", 7}), "/a/b.cpp:7 (f())");
}

TEST(DebugReport, DifferenceNamesTheFirstThingThatChanged) {
  auto graph = [](const std::string& text) { return xl::ir::parse_graph(text); };
  const xl::ir::Graph wide = graph("%0 = parameter(index=0) : f32[8,128]\n%1 = neg(%0) : f32[8,128]\nreturn %1\n");
  const xl::ir::Graph narrow = graph("%0 = parameter(index=0) : f32[8,127]\n%1 = neg(%0) : f32[8,127]\nreturn %1\n");
  const xl::ir::Graph half = graph("%0 = parameter(index=0) : f16[8,128]\n%1 = neg(%0) : f16[8,128]\nreturn %1\n");
  const xl::ir::Graph other = graph("%0 = parameter(index=0) : f32[8,128]\n%1 = exp(%0) : f32[8,128]\nreturn %1\n");
  const xl::ir::Graph two = graph(
      "%0 = parameter(index=0) : f32[8,128]\n%1 = parameter(index=1) : f32[8,128]\n%2 = add(%0, %1) : f32[8,128]\n"
      "return %2\n");
  namespace report = xl::lazy::debug_report;
  EXPECT_EQ(report::difference(narrow, wide), "input 0 shape f32[8,127] vs f32[8,128]");
  EXPECT_EQ(report::difference(half, wide), "input 0 dtype f16 vs f32");
  EXPECT_EQ(report::difference(other, wide), "graph differs at %1: exp f32[8,128] vs neg f32[8,128]");
  EXPECT_EQ(report::difference(two, wide), "inputs: 2 vs 1");
  EXPECT_EQ(report::difference(wide, wide), "");
}

TEST(DebugReport, HumanBytes) {
  namespace report = xl::lazy::debug_report;
  EXPECT_EQ(report::human_bytes(0), "0 B");
  EXPECT_EQ(report::human_bytes(1023), "1023 B");
  EXPECT_EQ(report::human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(report::human_bytes(int64_t{3} << 30), "3.0 GiB");
}

TEST(DebugAnalysis, ANewCompilationIsReportedWithItsCallSite) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  // A shape no other test compiles, so this sync compiles.
  const int op_line = __LINE__ + 1;
  xl::Tensor y = xl::exp(xl::ones({3, 71}) * 2.0);
  const int sync_line = __LINE__ + 1;
  xl::sync({y});
  const std::string out = file.added();
  const std::string site = ThisFile() + ":" + std::to_string(sync_line);
  EXPECT_EQ(Occurrences(out, "[xlite] Compilation Analysis\n"), 1) << out;
  EXPECT_NE(out.find("  cause: user sync\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  graph: 1 inputs, 1 outputs, "), std::string::npos) << out;  // the scalar 2 is an input
  EXPECT_NE(out.find("  compiled: 1 kernels, 0 library calls, 0 reference fallbacks, 0 transfers, 0 custom calls\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  compile time: "), std::string::npos) << out;
  EXPECT_NE(out.find("  call site:\n    " + site + " ("), std::string::npos) << out;
  EXPECT_EQ(Occurrences(out, "[xlite] Post Compilation Analysis\n"), 1) << out;
  EXPECT_NE(out.find("  inputs 4 B, outputs 852 B, aliased 0 B, "), std::string::npos) << out;
  // The result's buffer, with the op and the line that made it.
  EXPECT_NE(out.find("    852 B  %"), std::string::npos) << out;
  EXPECT_NE(out.find("f32[3,71] (from exp) at " + ThisFile() + ":" + std::to_string(op_line)), std::string::npos)
      << out;
  EXPECT_EQ(Occurrences(out, "recompiled:"), 0) << out;
}

TEST(DebugAnalysis, AShapeChangeAtOneCallSiteIsExplained) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  xl::Tensor a = xl::ones({8, 127});
  xl::Tensor b = xl::ones({8, 131});
  xl::sync({a, b});
  ScaleAtOneSite(a);
  ScaleAtOneSite(b);
  const std::string out = file.added();
  // One explainer line: the second graph at that site, against the first.
  EXPECT_EQ(Occurrences(out, "  recompiled: "), 1) << out;
  EXPECT_NE(out.find("  recompiled: input 0 shape f32[8,131] vs f32[8,127] (the closest of 1 graphs compiled here "
                     "before)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(ThisFile() + ":" + std::to_string(g_site_line)), std::string::npos) << out;
  // Level 3 adds the text-IR diff.
  EXPECT_EQ(out.find("  text IR against that graph:\n") != std::string::npos, xl::debug_output::level() >= 3) << out;
  if (xl::debug_output::level() >= 3) {
    EXPECT_NE(out.find("  - %0 = parameter(index=0) : f32[8,127]\n"), std::string::npos) << out;
    EXPECT_NE(out.find("  + %0 = parameter(index=0) : f32[8,131]\n"), std::string::npos) << out;
  }
}

TEST(DebugAnalysis, ExecutionsAreReportedFromLevelTwoAndEagerOpsFromLevelThree) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  xl::Tensor x = xl::ones({5, 37});
  xl::sync({x});
  const std::string before_eager = file.added();
  const int level = xl::debug_output::level();
  EXPECT_EQ(Occurrences(before_eager, "[xlite] Execution Analysis\n") >= 1, level >= 2) << before_eager;
  if (level >= 2) {
    EXPECT_NE(before_eager.find("  bytes moved: 740 B (0 inputs 0 B, 1 outputs 740 B)\n"), std::string::npos)
        << before_eager;
  }
  DebugFile eager_file;
  {
    xl::EagerModeGuard eager(true);
    xl::Tensor y = xl::neg(x);
  }
  const std::string eager = eager_file.added();
  EXPECT_EQ(eager.find("cause: eager op") != std::string::npos, level >= 3) << eager;
  // Level 3: each executed kernel on a line of its own, with its rates.
  EXPECT_EQ(eager.find("[xlite] kernel loop neg f32[5,37] (1 ops)") != std::string::npos, level >= 3) << eager;
  if (level >= 3) {
    EXPECT_NE(eager.find("GFLOP/s"), std::string::npos) << eager;
    EXPECT_NE(eager.find("GB/s"), std::string::npos) << eager;
  }
}

// A kernel's cost rule gives its line a rate: gmm of [256, 128] rows by [2, 128, 192] does 2*256*128*192
// operations. The second call is read: the first also sets oneDNN up.
TEST(DebugAnalysis, CustomKernelLinesShowTheKernelsRate) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  if (xl::debug_output::level() < 3) return;  // kernel lines print at level 3 (ctest debug_analysis_level3)
  const double operations = 2.0 * 256 * 128 * 192;
  for (int call = 0; call < 2; ++call) {
    DebugFile this_call;
    const xl::Tensor out =
        xl::kernels::gmm(xl::ones({256, 128}), xl::ones({2, 128, 192}), xl::tensor(std::vector<int32_t>{100, 156}));
    xl::sync({out});
    if (call == 0) continue;
    const std::string text = this_call.added();
    const size_t line = text.find("[xlite] kernel custom_call gmm f32[256,192]");
    ASSERT_NE(line, std::string::npos) << text;
    const std::string rest = text.substr(line, text.find('\n', line) - line);
    double microseconds = 0, gflops = 0;
    ASSERT_EQ(std::sscanf(rest.c_str() + rest.find("192]") + 4, " %lf us %lf GFLOP/s", &microseconds, &gflops), 2)
        << rest;
    EXPECT_NEAR(gflops * microseconds * 1e3, operations, 0.05 * operations) << rest;
  }
}

// The warnings print once per process: these two tests are the only ones here that read values in a loop
// and compile a new shape at one site again and again.
TEST(DebugAnalysis, ValueReadsInALoopWarnNamingTheLine) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  xl::Tensor x = xl::ones({2});
  xl::sync({x});
  int read_line = 0;
  float total = 0;
  for (int i = 0; i < 24; ++i) {
    read_line = __LINE__ + 1;
    total += xl::sum(x * static_cast<double>(i + 1), {0}).item<float>();  // one graph, compiled once
  }
  EXPECT_EQ(total, 600.0f);
  const std::string out = file.added();
  EXPECT_EQ(Occurrences(out, "[xlite] warning: TransferFromDevice too frequent: "), 1) << out;
  EXPECT_NE(out.find(" of them at " + ThisFile() + ":" + std::to_string(read_line) + " ("), std::string::npos) << out;
}

TEST(DebugAnalysis, ShapesThatKeepChangingWarnNamingTheInput) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  for (int i = 0; i < 24; ++i) {
    xl::Tensor x = xl::ones({4, 200 + i});
    xl::sync({x});
    ScaleAtOneSite(x);
  }
  const std::string out = file.added();
  EXPECT_EQ(Occurrences(out, "[xlite] warning: CompileTime too frequent: "), 1) << out;
  const std::string input = "  input 0 at " + ThisFile() + ":" + std::to_string(g_site_line);
  EXPECT_NE(out.find(input + " (ScaleAtOneSite"), std::string::npos) << out;
  EXPECT_NE(out.find("took 8 or more shapes: [4,200] [4,201]"), std::string::npos) << out;
  EXPECT_NE(out.find("Pad or bucket these shapes"), std::string::npos) << out;
}

// The time warnings' thresholds, on made-up windows of syncs after the warm-up.
TEST(DebugWarnings, CompileTimeDominatesWhenCompilingTakesMostOfTheWindow) {
  namespace w = xl::lazy::debug_warnings;
  constexpr int64_t kMs = 1000000;
  const w::Window compiling{20, 20, 1000 * kMs, 100 * kMs, 600 * kMs, 200 * kMs};
  EXPECT_EQ(w::compile_time_warning(compiling),
            "CompileTime dominates: after the first 10 syncs, compiling took 600 ms of 1000 ms (20 compiles in 20 "
            "syncs).");
  EXPECT_EQ(w::tracing_time_warning(compiling), "");
  EXPECT_EQ(w::compile_time_warning({20, 2, 1000 * kMs, 100 * kMs, 500 * kMs, 200 * kMs}), "");  // half is not more
}

TEST(DebugWarnings, TracingTimeDominatesWhenTheHostBuildsGraphsSlowerThanTheyRun) {
  namespace w = xl::lazy::debug_warnings;
  constexpr int64_t kMs = 1000000;
  const w::Window tracing{20, 0, 1000 * kMs, 700 * kMs, 0, 100 * kMs};
  EXPECT_EQ(w::tracing_time_warning(tracing),
            "TracingTime dominates: after the first 10 syncs, building graphs on the host took 700 ms of 1000 ms, "
            "running them 100 ms (20 syncs). The steps wait on tracing: xlite::compile(fn) traces a step once and "
            "replays it.");
  EXPECT_EQ(w::compile_time_warning(tracing), "");
  // Running takes more than half as long as tracing: the host keeps up well enough.
  EXPECT_EQ(w::tracing_time_warning({20, 0, 1000 * kMs, 600 * kMs, 0, 350 * kMs}), "");
  // Tracing is not most of the time (the rest is the program's own work).
  EXPECT_EQ(w::tracing_time_warning({20, 0, 1000 * kMs, 400 * kMs, 0, 10 * kMs}), "");
  EXPECT_EQ(w::tracing_time_warning({}), "");
}

// Run by ctest (debug_warning_tracing) in a process of its own with XLITE_DEBUG_LEVEL=1: a loop that traces
// hundreds of ops on a two-element tensor each step spends its time on the host, not running the program.
TEST(DebugWarnings, ATracingBoundLoopWarnsOnce) {
  DebugFile file;
  REQUIRE_DEBUG_FILE(file);
  xl::Tensor x = xl::ones({2});
  xl::sync({x});
  for (int step = 0; step < 40; ++step) {
    xl::Tensor y = x;
    for (int i = 0; i < 300; ++i) y = y * 1.0001 + 0.0001;
    xl::sync({y});
  }
  const std::string out = file.added();
  EXPECT_EQ(Occurrences(out, "[xlite] warning: TracingTime dominates: after the first 10 syncs, "), 1) << out;
  EXPECT_NE(out.find("xlite::compile(fn) traces a step once"), std::string::npos) << out;
  EXPECT_EQ(Occurrences(out, "CompileTime"), 0) << out;  // one graph, compiled once
}
