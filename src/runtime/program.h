#pragma once
// A compiled program: an ordered list of steps, each a thunk that computes one value of the graph (a
// generated kernel, a library call, a fallback to the reference evaluator; custom calls, copies and
// collectives later). Targets lower fused regions into thunks (compiler/target.h); one executor runs every
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

// The buffers of a step's inputs, in the order of ProgramStep::inputs.
class StepInputs {
 public:
  StepInputs(std::span<const int32_t> ids, Buffer* const* values, const BufferPtr* owned,
             std::span<const BufferPtr> args, const int32_t* argument_of)
      : ids_(ids), values_(values), owned_(owned), args_(args), argument_of_(argument_of) {}
  size_t size() const { return ids_.size(); }
  // A view: valid while the step runs.
  Buffer* operator[](size_t k) const { return values_[ids_[k]]; }
  // A shared handle, for a thunk that passes the buffer on (to a nested evaluator).
  BufferPtr shared(size_t k) const {
    const int32_t v = ids_[k];
    return owned_[v] || argument_of_[v] < 0 ? owned_[v] : args_[argument_of_[v]];
  }

 private:
  std::span<const int32_t> ids_;
  Buffer* const* values_;
  const BufferPtr* owned_;
  std::span<const BufferPtr> args_;
  const int32_t* argument_of_;
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
  bool may_raise = false;        // can fail for a value in the data (donated buffers are written only after)
  bool replaces_output = false;  // the thunk hands back a buffer of its own instead of filling *out
  // May write its output into a donated argument: a loop that writes each element once, after reading
  // the inputs below at that element only.
  bool may_write_into_argument = false;
  std::vector<bool> overwritable;  // per input: read only at the element being written
  std::string label;               // what XLITE_PROFILE sums its time under ("loop tanh f32[4096] (7 ops)")
};

struct Program {
  ir::Graph graph;
  std::vector<ProgramStep> steps;                 // in execution order
  std::vector<std::vector<int32_t>> freed_after;  // per step: the values whose last read it is
  debug::MemoryStats stats;
};

// The executor for a program, as the Executable the lazy layer runs.
std::shared_ptr<Executable> make_executor(Program program);

}  // namespace xlite::runtime
