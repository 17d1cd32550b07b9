#pragma once
// Looking inside: the pending graph as text and why the last sync happened.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xlite/tensor.h"

namespace xlite::debug {

// The pending graph that computes these tensors, in xlite's text IR (parseable back to the same graph).
std::string graph_text(const std::vector<Tensor>& tensors);
// The same graph after the compiler's passes, followed by its fusion plan ("fusion:" then one line per
// region and per materialized or recomputed value, with the reason): what the CPU target compiles.
std::string optimized_text(const std::vector<Tensor>& tensors);
// The optimized graph as Graphviz text (render with `dot -Tsvg`): each fused region is a cluster labelled
// with its kind (loop, reduce, matmul, conv2d, reference, transfer), parameters are ellipses.
std::string graph_dot(const std::vector<Tensor>& tensors);
// The pending graph as a StableHLO module (MLIR text) that XLA loads and runs: `@main` takes the graph's
// inputs (the tensors it reads, in the order graph_text numbers its parameters) and returns these tensors'
// values. Ops keep xlite's semantics; random draws use XLA's generator instead of xlite's.
std::string stablehlo(const std::vector<Tensor>& tensors);
// The structural hash of that graph: equal for the same ops, shapes and dtypes whatever the data.
uint64_t graph_hash(const std::vector<Tensor>& tensors);

struct SyncInfo {
  std::string cause;  // "user sync", "value read (item/to_vector/print)", "eager op", ...
  uint64_t graph_hash = 0;
  int64_t num_inputs = 0;
  int64_t num_outputs = 0;
  bool cache_hit = false;
};
// The last sync that ran a graph.
SyncInfo last_sync();

// What a compiled program costs in memory, from its buffer plan.
struct MemoryStats {
  int64_t argument_bytes = 0;  // parameters read
  int64_t output_bytes = 0;    // results written (outputs that are parameters count as aliased)
  int64_t alias_bytes = 0;     // outputs that share an argument's buffer
  int64_t temp_bytes = 0;      // peak of intermediate buffers alive at once, with the scratch of the step
  int64_t scratch_bytes = 0;   // the most scratch one step's custom kernel declares (Kernel::scratch)
  int64_t code_bytes = 0;      // generated machine code
  int64_t kernels = 0;         // compiled loops
  std::string fusion;          // one line per fusion decision
};
// Compiles (through the cache) the pending graph of these tensors and reports its memory plan.
MemoryStats memory_stats(const std::vector<Tensor>& tensors);
// One step of a compiled program, in the order it runs, with the memory the run holds while it runs.
struct MemoryStep {
  std::string step;          // "matmul f32[64,64] x f32[64,64]", "loop tanh f32[4096] (7 ops)"
  int64_t output_bytes = 0;  // the buffer the step writes
  int64_t live_bytes = 0;    // arguments, the step's output and every earlier result still needed
};
// The memory timeline of the program that would compute these tensors (compiled through the cache): its
// largest live_bytes is the program's peak; values are freed after their last reader.
std::vector<MemoryStep> memory_timeline(const std::vector<Tensor>& tensors);

// The runtime context: every piece of process-wide state made so far, by name, with what it holds now
// ({"executable cache", "12 of 2048 programs"}, {"allocators", "cpu:0: 4096 B used, 0 B cached"}, ...).
std::vector<std::pair<std::string, std::string>> runtime_state();

}  // namespace xlite::debug

namespace xlite {
// Empties every cache (like jax.clear_caches()): compiled programs, compiled kernels, and the freed memory
// the allocators keep. The next sync of each graph compiles it again; tensors and compiled steps keep working.
void clear_caches();
}  // namespace xlite
