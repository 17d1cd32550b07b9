#pragma once
// A compiled program: an ordered list of steps, each a thunk that computes one value of the graph (a
// generated kernel, a library call, a fallback to the reference evaluator, a copy between devices; custom
// calls and collectives later). Targets lower fused regions into thunks (compiler/target.h); one executor runs every
// target's programs: it allocates each step's output, frees values after their last read, writes into
// donated arguments where that is safe, raises the failure the uncompiled program would raise, and times
// steps under XLITE_PROFILE. Nothing here knows what an op computes.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"
#include "runtime/executable.h"
#include "xlite/debug.h"

namespace xlite::runtime {

// A failure in the data (an index out of range, an integer division by zero), found while a step ran. The
// executor raises the one whose instruction comes first in the graph, as the reference backend would.
struct StepFailure {
  int32_t graph_instr;
  std::string message;
};

// A run's buffers by graph value: arguments are only viewed (the caller holds them, and a shared_ptr copy
// is an atomic operation an eager op would pay per argument); step results are owned by the run.
struct RunValues {
  Buffer* const* views;    // every live value
  const BufferPtr* owned;  // step results
  std::span<const BufferPtr> args;
  const int32_t* argument_of;  // per value: its argument, or -1
  // A shared handle: the run's own, or the caller's argument.
  BufferPtr shared(int32_t v) const { return owned[v] || argument_of[v] < 0 ? owned[v] : args[argument_of[v]]; }
};

// The buffers of a step's inputs, in the order of ProgramStep::inputs.
class StepInputs {
 public:
  StepInputs(std::span<const int32_t> ids, const RunValues& values) : ids_(ids), values_(values) {}
  size_t size() const { return ids_.size(); }
  // A view: valid while the step runs.
  Buffer* operator[](size_t k) const { return values_.views[ids_[k]]; }
  // A shared handle, for a thunk that passes the buffer on (to a nested evaluator).
  BufferPtr shared(size_t k) const { return values_.shared(ids_[k]); }

 private:
  std::span<const int32_t> ids_;
  const RunValues& values_;
};

class Thunk {
 public:
  virtual ~Thunk() = default;
  // Computes the step's value into *out, a buffer of the value's size. A thunk whose evaluator makes its own
  // result buffer replaces *out (ProgramStep::replaces_output). A failure in the data is returned, and the
  // output then holds something harmless (zeros) that later steps may read; everything else throws.
  virtual std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const = 0;
};

struct ProgramStep {
  int32_t root = -1;            // the graph instruction whose value the step computes
  std::vector<int32_t> inputs;  // the graph values it reads
  std::unique_ptr<Thunk> thunk;
  int64_t output_bytes = 0;
  int64_t scratch_bytes = 0;     // memory it borrows while it runs: a custom kernel's declared scratch
  bool may_raise = false;        // can fail for a value in the data (donated buffers are written only after)
  bool replaces_output = false;  // the thunk hands back a buffer of its own instead of filling *out
  // May write its output into a donated argument: a loop that writes each element once, after reading
  // the inputs below at that element only.
  bool may_write_into_argument = false;
  std::vector<bool> overwritable;  // per input: read only at the element being written
  // An intermediate input whose last read this step is and whose buffer the output takes
  // (passes::in_place_writes), or -1.
  int32_t written_over = -1;
  // What profiles, traces, debug reports and memory timelines call it ("loop tanh f32[4096] (7 ops)").
  std::string label;
  // Estimates, as doubles: a legal graph may be far too large to run, and its counts must not overflow.
  double flops = 0;        // floating-point (or integer) operations, estimated from the region
  double bytes_moved = 0;  // its inputs' and output's bytes
};

struct Program {
  ir::Graph graph;
  std::vector<ProgramStep> steps;                 // in execution order
  std::vector<std::vector<int32_t>> freed_after;  // per step: the values whose last read it is
  debug::MemoryStats stats;
  std::vector<int64_t> live_bytes;  // per step: the bytes its run holds while it runs (passes::plan_memory)
  CompileSummary summary;
  Device device;  // what it is compiled for (ir::home_device); each step's output goes on its root's device
};

// The executor for a program, as the Executable the lazy layer runs.
std::shared_ptr<Executable> make_executor(Program program);

}  // namespace xlite::runtime
