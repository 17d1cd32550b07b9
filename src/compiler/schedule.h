#pragma once
// The order in which a program's steps run. Steps that can raise, and the steps they read, run first (a
// donated buffer is written only after them). The others run in an order that keeps few large buffers alive
// at once: of the steps whose inputs are ready, the one that frees the most bytes net of what it allocates
// (a list scheduler, as XLA's memory scheduler is), with the steps that may write a result into a donated
// argument last. The traced order is kept where it needs less memory.
#include <vector>

#include "compiler/fusion.h"
#include "ir/graph.h"

namespace xlite::compiler {

// `regions` are in an order in which each runs after the regions that write its inputs.
std::vector<Region> schedule(const ir::Graph& graph, std::vector<Region> regions);

}  // namespace xlite::compiler
