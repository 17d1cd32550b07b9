// xlite-fuzz-graphs: differential fuzzing of backends on random graphs (see compiler/random_graph.h).
//
//   xlite-fuzz-graphs [--seed S] [--count N] [--backend B] [--against A] [--minutes M]
//                     [--rtol R] [--atol T] [--out-of-range P] [--print] [--shape-rules]
//                     [--math-modes exact|fast|mixed] [--fast-tol F] [--excess-precision]
//
// Graph i uses seed S + i for both the graph and its arguments. Every backend B (default: every backend
// but the one it is compared against) is compared with A (default "reference"). Runs N graphs (default
// 1000, or no limit when --minutes is given) or until M minutes have passed, printing progress. On the
// first mismatch it prints the message with the text IR of the graph and a command that reproduces it,
// and exits 1. --print prints the text IR of every graph (with --count 1: to look at one seed).
// --math-modes compiles the graphs with exact math, with fast math (include/xlite/math_mode.h), or with fast
// math for odd seeds and exact for even ones, switching the mode within the process as a user may (default:
// the process's mode, from XLITE_FAST_MATH). A graph compiled with fast math is compared at the tolerance F
// for both rtol and atol (default 2e-3: the 4e-4 per op through chains of ops), or R and T where larger.
// --excess-precision compiles every graph with excess precision (include/xlite/math_mode.h); the generator
// computes nothing further from an inexact 16-bit value, so the usual 16-bit tolerance holds.
// --shape-rules fuzzes the shape rules instead (compiler/random_shape_rules.h): case i uses seed S + i,
// N cases (default 1000000) or M minutes; the first rule that wraps or throws anything but xlite::Error is
// printed, and the tool exits 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "compiler/cache.h"
#include "testing/random_graph.h"
#include "testing/random_shape_rules.h"
#include "ir/graph.h"
#include "xlite/error.h"
#include "xlite/math_mode.h"

namespace {

int usage(const char* message) {
  if (message) std::cerr << "xlite-fuzz-graphs: " << message << "\n";
  std::cerr << "usage: xlite-fuzz-graphs [--seed S] [--count N] [--backend B] [--against A] [--minutes M]\n"
               "                         [--rtol R] [--atol T] [--out-of-range P] [--print] [--shape-rules]\n"
               "                         [--math-modes exact|fast|mixed] [--fast-tol F] [--excess-precision]\n";
  return 2;
}

int fuzz_shape_rules(uint64_t seed, int64_t count, double minutes) {
  namespace xc = xlite::compiler;
  namespace xt = xlite::testing;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int64_t done = 0, accepted = 0;
  for (; done < count && !(minutes > 0 && elapsed_s() > minutes * 60); ++done) {
    const uint64_t s = seed + static_cast<uint64_t>(done);
    xt::ShapeRuleOutcome outcome = xt::check_shape_rule(xt::random_shape_rule_case(s));
    if (!outcome.ok) {
      std::cout << "[fuzz] FAILED: the shape rule for seed " << s << " " << outcome.message << std::endl;
      return 1;
    }
    accepted += outcome.accepted;
  }
  std::cout << "[fuzz] done: " << done << " shape-rule cases ok (seeds " << seed << ".." << seed + done - (done > 0)
            << ", " << accepted << " accepted) in " << elapsed_s() << " s" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace xc = xlite::compiler;
  namespace xt = xlite::testing;
  uint64_t seed = 1;
  int64_t count = -1;
  double minutes = -1;
  double rtol = 1e-4, atol = 1e-4;
  std::vector<std::string> backends;
  std::string against = "reference";
  bool print = false, shape_rules = false, excess_precision = false;
  std::string math_modes;
  double fast_tol = 2e-3;
  xt::RandomGraphOptions options;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--seed")
        seed = std::stoull(value());
      else if (arg == "--count")
        count = std::stoll(value());
      else if (arg == "--backend")
        backends.push_back(value());
      else if (arg == "--against")
        against = value();
      else if (arg == "--minutes")
        minutes = std::stod(value());
      else if (arg == "--rtol")
        rtol = std::stod(value());
      else if (arg == "--atol")
        atol = std::stod(value());
      else if (arg == "--out-of-range")
        options.out_of_range_index_probability = std::stod(value());
      else if (arg == "--print")
        print = true;
      else if (arg == "--shape-rules")
        shape_rules = true;
      else if (arg == "--math-modes")
        math_modes = value();
      else if (arg == "--fast-tol")
        fast_tol = std::stod(value());
      else if (arg == "--excess-precision")
        excess_precision = true;
      else if (arg == "--help" || arg == "-h")
        return usage(nullptr), 0;
      else
        return usage(("unknown argument " + arg).c_str());
    }
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  if (!math_modes.empty() && math_modes != "exact" && math_modes != "fast" && math_modes != "mixed")
    return usage(("--math-modes takes exact, fast or mixed, not " + math_modes).c_str());
  if (count < 0) count = minutes > 0 ? std::numeric_limits<int64_t>::max() : shape_rules ? 1000000 : 1000;
  if (shape_rules) return fuzz_shape_rules(seed, count, minutes);
  if (excess_precision) xlite::set_excess_precision(true);
  if (backends.empty())
    for (const std::string& name : xc::backend_names())
      if (name != against) backends.push_back(name);
  if (backends.empty()) {
    std::cout << "[fuzz] only '" << against << "' exists: comparing it with itself\n";
    backends.push_back(against);
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double last_report = 0;
  std::cout << "[fuzz] seeds from " << seed << ", comparing";
  for (const auto& b : backends) std::cout << " '" << b << "'";
  std::cout << " with '" << against << "' (rtol " << rtol << ", atol " << atol << ")" << std::endl;

  int64_t done = 0, threw = 0;
  for (; done < count; ++done) {
    if (minutes > 0 && elapsed_s() > minutes * 60) break;
    const uint64_t s = seed + static_cast<uint64_t>(done);
    xlite::ir::Graph graph;
    std::vector<xlite::BufferPtr> args;
    try {
      graph = xt::random_graph(s, options);
      xlite::ir::verify(graph);
      args = xt::random_arguments(graph, s);
    } catch (const xlite::Error& e) {
      std::cout << "[fuzz] FAILED: the generator made a bad graph for seed " << s << ": " << e.what() << std::endl;
      return 1;
    }
    if (!math_modes.empty()) xlite::set_fast_math(math_modes == "fast" || (math_modes == "mixed" && s % 2 == 1));
    const bool fast = xlite::is_fast_math();
    const double graph_rtol = fast ? std::max(rtol, fast_tol) : rtol,
                 graph_atol = fast ? std::max(atol, fast_tol) : atol;
    if (print) std::cout << "# seed " << s << "\n" << xlite::ir::to_text(graph) << std::flush;
    xt::BackendRun base = xt::run_backend(graph, args, against);
    if (base.threw) ++threw;
    if (base.threw && options.out_of_range_index_probability == 0) {
      // Without out-of-range indices the generator promises graphs that run.
      std::cout << "[fuzz] FAILED: '" << against << "' threw on seed " << s << ": " << base.error << "\n"
                << xlite::ir::to_text(graph) << std::flush;
      return 1;
    }
    for (const std::string& backend : backends) {
      xt::BackendRun run = xt::run_backend(graph, args, backend);
      xt::Comparison c = xt::compare_runs(graph, run, base, graph_rtol, graph_atol);
      if (!c.ok) {
        std::cout << "[fuzz] FAILED on seed " << s << " after " << done << " graphs (" << elapsed_s() << " s)\n"
                  << c.message << "reproduce: xlite-fuzz-graphs --seed " << s << " --count 1 --backend " << backend
                  << " --against " << against << " --rtol " << rtol << " --atol " << atol << " --math-modes "
                  << (fast ? "fast" : "exact") << " --fast-tol " << fast_tol;
        if (excess_precision) std::cout << " --excess-precision";
        if (options.out_of_range_index_probability > 0)
          std::cout << " --out-of-range " << options.out_of_range_index_probability;
        std::cout << std::endl;
        return 1;
      }
    }
    if (elapsed_s() - last_report >= 10) {
      last_report = elapsed_s();
      std::cout << "[fuzz] " << done + 1 << " graphs ok (last seed " << s << ", " << threw << " threw in both), "
                << static_cast<int64_t>(last_report) << " s" << std::endl;
    }
  }
  std::cout << "[fuzz] done: " << done << " graphs ok (seeds " << seed << ".." << seed + done - (done > 0) << ", "
            << threw << " threw in both) in " << elapsed_s() << " s" << std::endl;
  return 0;
}
