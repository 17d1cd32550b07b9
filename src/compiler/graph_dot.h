#pragma once
// A graph and its fusion plan as Graphviz text: one node per instruction, each fused region a cluster
// labelled with its kind, so a user sees which ops became one loop and which values got buffers.
#include <string>

#include "compiler/fusion.h"
#include "ir/graph.h"

namespace xlite::compiler {

std::string to_dot(const ir::Graph& graph, const FusionPlan& plan);
// A traced graph as the compiler runs it: after the passes (compiler/optimize.h), with the default fusion
// policy (the CPU target's).
std::string fused_dot(const ir::Graph& traced);

}  // namespace xlite::compiler
