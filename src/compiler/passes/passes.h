#pragma once
// Graph-to-graph passes. Each keeps the graph's parameters (same count and order) and outputs (same
// count and order, possibly other instructions) and returns a verified-equivalent graph.
#include "ir/graph.h"

namespace xlite::compiler::passes {

// Algebraic identities: x*1, x+0, x-0, x/1, neg(neg x), not(not x), reshape of reshape, transpose of
// transpose, broadcast of broadcast, and no-op reshape/transpose/broadcast/slice/convert.
ir::Graph simplify(const ir::Graph& graph);
// Common-subexpression elimination: one instruction per (op, attributes, operands, type).
ir::Graph cse(const ir::Graph& graph);
// Dead-code elimination: drops what no output needs (parameters stay: they are the argument list).
ir::Graph dce(const ir::Graph& graph);
// Evaluates elementwise ops on scalar constants at compile time.
ir::Graph fold_constants(const ir::Graph& graph);
// All of the above, to a fixed point.
ir::Graph optimize(const ir::Graph& graph);

}  // namespace xlite::compiler::passes
