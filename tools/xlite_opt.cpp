// xlite-opt: runs named passes, and fusion planning, on a graph in text IR and prints the result, so that
// pass and fusion tests are text in, text out (tests/xir/*.xir, checked by FileCheck under lit).
//
//   xlite-opt FILE|- [--pass NAME]... [--fusion | --stablehlo]
//
// NAME is one of simplify, cse, dce, fold-constants, optimize (all of them to a fixed point); passes run in
// the order given, and the graph they leave is printed. --fusion prints the fusion plan of that graph
// (one line per region, materialized value and refusal) after it. A malformed graph, an unknown pass or
// an unreadable file prints the error on stderr and exits 1. --stablehlo prints the graph the passes leave as
// a StableHLO module instead of text IR.
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/fusion.h"
#include "compiler/optimize.h"
#include "passes/passes.h"
#include "ir/graph.h"
#include "ir/stablehlo.h"
#include "xlite/error.h"

namespace {

using Pass = std::function<xlite::ir::Graph(const xlite::ir::Graph&)>;

const std::map<std::string, Pass>& passes() {
  namespace p = xlite::passes;
  namespace c = xlite::compiler;
  static const std::map<std::string, Pass> all = {
      {"simplify", p::simplify}, {"cse", p::cse}, {"dce", p::dce}, {"fold-constants", c::fold_constants},
      {"optimize", c::optimize},
  };
  return all;
}

std::string read_input(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(path);
  if (!in) throw xlite::Error("[xlite-opt] cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int usage() {
  std::cerr << "usage: xlite-opt FILE|- [--pass NAME]... [--fusion | --stablehlo]\n  passes:";
  for (const auto& [name, pass] : passes()) std::cerr << " " << name;
  std::cerr << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  std::vector<std::string> pipeline;
  bool fusion = false, stablehlo = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--pass" && i + 1 < argc)
      pipeline.push_back(argv[++i]);
    else if (arg == "--fusion")
      fusion = true;
    else if (arg == "--stablehlo")
      stablehlo = true;
    else if (path.empty() && (arg == "-" || arg[0] != '-'))
      path = arg;
    else
      return usage();
  }
  if (path.empty() || (fusion && stablehlo)) return usage();
  try {
    xlite::ir::Graph graph = xlite::ir::parse_graph(read_input(path));
    for (const std::string& name : pipeline) {
      auto it = passes().find(name);
      if (it == passes().end()) throw xlite::Error("[xlite-opt] unknown pass '" + name + "'");
      graph = it->second(graph);
      xlite::ir::verify(graph);
    }
    std::cout << (stablehlo ? xlite::ir::to_stablehlo(graph) : xlite::ir::to_text(graph));
    if (fusion) std::cout << "fusion:\n" << xlite::compiler::describe(xlite::compiler::plan_fusion(graph));
  } catch (const xlite::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
