#pragma once
// The compilation pipeline every code-generating target shares: graph passes to a fixed point, fusion
// with the target's policy, a schedule (compiler/schedule.h), the buffer plan (passes/memory_plan.h, with
// loops that write over an input that dies there), then the target lowers each region.
#include <memory>

#include "compiler/target.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace xlite::compiler {

// The graph has been verified.
std::shared_ptr<runtime::Executable> compile_for_target(const ir::Graph& graph, Target& target);

// Whether running a region can raise for a value in the data (a bad index, an integer division by zero or
// negative power), inside the reference fallback, or in a custom kernel that may fail.
bool may_raise(const ir::Graph& graph, const Region& region);

}  // namespace xlite::compiler
