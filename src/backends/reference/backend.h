#pragma once
#include <memory>

#include "ir/graph.h"
#include "runtime/executable.h"

namespace xlite::backends::reference {

// The oracle: evaluates a graph one instruction at a time with plain loops. Never the fast path.
// As a library below the compiler: constant folding evaluates with it, so folded values are what the
// oracle computes, and the CPU target runs regions it has no code for through it. The graph has been
// verified; its dead instructions are dropped first.
std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph);

// The same, registered as the backend "reference".
std::unique_ptr<runtime::Backend> make_backend();

}  // namespace xlite::backends::reference
