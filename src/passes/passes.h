#pragma once
// Graph-to-graph passes that need nothing but the IR, so that both the reference evaluator and the
// compiler can run them (constant folding, which evaluates, is the compiler's: compiler/optimize.h).
// Each keeps the graph's parameters (same count and order) and outputs (same count and order, possibly
// other instructions) and returns a verified-equivalent graph.
#include "ir/graph.h"

namespace xlite::passes {

// Algebraic identities: x*1, x+0, x-0, x/1, neg(neg x), not(not x), reshape of reshape, transpose of
// transpose, broadcast of broadcast, and no-op reshape/transpose/broadcast/slice/convert.
ir::Graph simplify(const ir::Graph& graph);
// Common-subexpression elimination: one instruction per (op, attributes, operands, type).
ir::Graph cse(const ir::Graph& graph);
// Dead-code elimination: drops what no output needs (parameters stay: they are the argument list).
ir::Graph dce(const ir::Graph& graph);

}  // namespace xlite::passes
