#pragma once
// Buffer assignment with liveness: in execution order, each materialized value is live from the step
// that writes it to the last step that reads it; the peak of intermediates alive at once is what a
// program needs beyond its arguments and outputs.
#include <span>
#include <vector>

#include "ir/graph.h"
#include "xlite/debug.h"

namespace xlite::passes {

// steps[k] writes writes[k], reads reads[k] and borrows scratch[k] bytes while it runs (empty: none);
// graph outputs live to the end. A step whose written_over[k] is a value (not -1) writes into that input's
// buffer (in_place_writes) and takes no new memory. With live_per_step, also the bytes held while each step
// runs: the arguments, every output written so far and the intermediates still alive, the step's own result
// and scratch included (xlite::debug::memory_timeline).
debug::MemoryStats plan_memory(const ir::Graph& graph, const std::vector<int32_t>& writes,
                               const std::vector<std::vector<int32_t>>& reads, std::span<const int64_t> scratch = {},
                               std::vector<int64_t>* live_per_step = nullptr,
                               std::span<const int32_t> written_over = {});
// Per step, the input whose buffer it may write its value into, or -1: an intermediate (not an output; written by an
// earlier step whose buffer is its own, may_lend) whose last read this step is, that the step reads only at
// the element it writes (overwritable[k][i] for reads[k][i]), of the value's size and element type. A loop
// that turns one large intermediate into another then needs one buffer, not two, as PyTorch's in-place
// activations and XLA's buffer assignment ("can share buffer") do.
std::vector<int32_t> in_place_writes(const ir::Graph& graph, const std::vector<int32_t>& writes,
                                     const std::vector<std::vector<int32_t>>& reads,
                                     const std::vector<std::vector<bool>>& overwritable,
                                     const std::vector<bool>& may_lend);
// For each step, the values whose last read it is (their buffers go back to the allocator after it).
std::vector<std::vector<int32_t>> last_uses(const ir::Graph& graph, const std::vector<std::vector<int32_t>>& reads);

}  // namespace xlite::passes
