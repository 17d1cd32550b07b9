#pragma once
// Random, well-typed graphs for differential testing of backends and passes against the reference.
//
// random_graph(seed) builds a graph of 5-60 instructions over random shapes (rank 0-4; leaves have dims
// 0-7, often 1, now and then 0) and dtypes (mostly f32), using every IR op (a test fails when a new op is
// missing here), custom calls included (of the kernels testing/test_kernels.h registers). Every graph verifies, and its
// results are well-conditioned: two correct backends that differ only in rounding (f32 instead of double intermediates,
// fused or reordered arithmetic, their own exp/log/sin...) agree within a small tolerance. To get there the generator
// tracks, for every value, a bound on its magnitude, whether it can hold NaN/inf, and whether it is "exact" (every
// correct backend computes the same bits). Discontinuous ops (compare, floor, round, sign, argmax, float->int convert,
// ...) only see exact values; log, sqrt, div, pow, ... only see inputs made safe (max(abs(x), c), abs(x) + c);
// exp/tan/sin only see bounded inputs; integer div/remainder only divide by non-zero values;
// gather/index_select/scatter_add indices are in range (unless the options ask otherwise). A 16-bit float
// value gets at most one inexact op, then is only moved around, so that the f16/bf16 tolerance covers it.
//
// compare_backends runs one graph on two backends and compares every output element.
#include <cstdint>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"

namespace xlite::testing {

struct RandomGraphOptions {
  int min_instructions = 5;
  int max_instructions = 60;
  int max_rank = 4;             // ranks 0..max_rank
  int max_dim = 7;              // dims 0..max_dim (size 1 often, 0 now and then)
  int64_t max_elements = 2048;  // no value holds more elements
  int max_outputs = 6;
  bool random_ops = true;      // rng_uniform / rng_normal with i64 scalar parameters for seed and offset
  bool special_values = true;  // NaN and +-inf constants, flowing only through NaN-aware exact ops
  bool custom_calls = true;    // calls of the kernels testing/test_kernels.h registers
  // Probability that a gather/index_select/scatter_add index operand may hold out-of-range values, so
  // that running the graph throws xlite::Error (both backends must throw). Every op given such an index
  // is also made an output (beyond max_outputs), so that no backend may drop it as dead code.
  double out_of_range_index_probability = 0.0;
};

ir::Graph random_graph(uint64_t seed, const RandomGraphOptions& options = {});

// One buffer per parameter, in parameter order: floats uniform in [-2, 2], integers in [0, 20), bools.
std::vector<BufferPtr> random_arguments(const ir::Graph& graph, uint64_t seed);

struct Comparison {
  bool ok = true;
  std::string message;  // on mismatch: what differs, where, and the whole graph as text IR
};

// What running a graph on one backend gave: outputs, or the error it threw.
struct BackendRun {
  std::string backend;
  bool threw = false;
  bool threw_xlite_error = false;  // false with threw: some other exception, always a failure
  bool threw_internal = false;     // xlite::InternalError: a bug, always a failure
  std::string error;
  std::vector<BufferPtr> outputs;
};

// Compiles and runs the graph with a named backend, catching what it throws.
BackendRun run_backend(const ir::Graph& graph, const std::vector<BufferPtr>& args, const std::string& backend);

// Compares two runs of one graph. Floats: |a - b| <= atol + rtol * max(|a|, |b|), NaN equals NaN, infinities
// must match in sign; f16/bf16 use at least rtol = atol = 1e-2. Integers and bools must be equal. If exactly
// one run threw xlite::Error, or either threw anything else (InternalError included), that is a mismatch;
// the runs agree when both threw xlite::Error for the same op (the bracketed name that starts the message).
Comparison compare_runs(const ir::Graph& graph, const BackendRun& a, const BackendRun& b, double rtol, double atol);

// run_backend on both, then compare_runs.
Comparison compare_backends(const ir::Graph& graph, const std::vector<BufferPtr>& args, const std::string& backend_a,
                            const std::string& backend_b, double rtol, double atol);

}  // namespace xlite::testing
