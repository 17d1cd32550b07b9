#pragma once
// The compiler's pass pipeline: the IR passes (passes/passes.h) and constant folding, which evaluates
// with the reference evaluator, to a fixed point.
#include "ir/graph.h"

namespace xlite::compiler {

// Evaluates elementwise ops on scalar constants at compile time.
ir::Graph fold_constants(const ir::Graph& graph);
// simplify, CSE, constant folding and DCE, to a fixed point.
ir::Graph optimize(const ir::Graph& graph);

}  // namespace xlite::compiler
