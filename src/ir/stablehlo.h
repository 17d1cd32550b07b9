#pragma once
// A graph as a StableHLO module, the input format of XLA and of the tools around it (JAX, IREE,
// torch-mlir): `func.func public @main` takes the parameters in order and returns the outputs. Ops are in
// MLIR's generic syntax, each preceded by a comment naming the instruction it comes from.
//
// Every op keeps xlite's semantics where StableHLO's differ: remainder takes the divisor's sign, argmax
// picks the first extreme with NaN as the largest, a float converts to a narrow integer through i64 and
// wraps, reductions of f16/bf16 accumulate in f32. Where xlite raises at run time (an index out of range,
// integer division by zero) XLA clamps or returns a value instead. Random draws (rng_uniform, rng_normal)
// become `stablehlo.rng`, XLA's generator: the shape and distribution match, the numbers do not. A
// transfer is the identity: the module describes one device.
#include <string>

#include "ir/graph.h"

namespace xlite::ir {

std::string to_stablehlo(const Graph& graph);

}  // namespace xlite::ir
