#pragma once
// Running pending work: the one path from live pending tensors to device data, shared by sync(), value
// reads and eager ops.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tensor/tensor_impl.h"
#include "runtime/executable.h"
#include "xlite/debug.h"

namespace xlite::lazy {

enum class SyncCause { user_sync, value_read, eager_op, compiled_step, memory_stats };

// What a sync ran, kept by compile(fn) so that it can run the same program again without tracing.
struct SyncRecord {
  std::shared_ptr<runtime::Executable> executable;
  uint64_t hash = 0;
  std::vector<BufferPtr> arguments;  // in parameter order
  std::vector<std::pair<Shape, DType>> argument_types;
  std::vector<TensorImpl*> computed;  // the pending tensors it computed
  std::vector<int32_t> outputs;       // for each computed tensor, its position in the results
};

// Computes the pending values of these tensors as one graph and binds the results to them.
void sync_tensors(std::span<TensorImpl* const> impls, SyncCause cause, SyncRecord* record = nullptr);

// The same for every pending tensor of the calling thread (what sync() computes).
void sync_this_thread(SyncCause cause, SyncRecord* record = nullptr);

// What a sync of these tensors would cost in memory (debug::memory_stats): the program is compiled through
// the cache as the sync would, and an in-place update the sync would donate counts as aliased.
debug::MemoryStats planned_memory(std::span<TensorImpl* const> impls);
// The program such a sync would run (compiled through the cache), for debug::memory_timeline.
std::shared_ptr<runtime::Executable> planned_program(std::span<TensorImpl* const> impls);

// The graph hash the calling thread's pending tensors would sync as, without compiling or running.
uint64_t hash_of_this_thread();

// Runs a program a SyncRecord kept, with new arguments: a replayed compiled step.
std::vector<BufferPtr> run_again(runtime::Executable& executable, uint64_t hash, std::span<const BufferPtr> arguments,
                                 std::span<const runtime::Donation> donations);

bool eager();

// Time spent building IR since the last sync is reported as TracingTime with the next sync.
void add_tracing_time(double nanoseconds);

}  // namespace xlite::lazy
