#pragma once
// The program compile(fn) keeps from a trace: where each graph argument comes from on a later call, which
// tensors the results rebind, and the guards under which running it again is the same as tracing again.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/step_recording.h"
#include "tensor/tensor_impl.h"
#include "lazy/sync.h"
#include "xlite/compile.h"

namespace xlite::detail {

// A tensor that existed before the call: an argument by position, or one fn reached by itself.
struct Existing {
  int64_t argument = -1;
  std::weak_ptr<TensorImpl> captured;
};

// Where a replay gets one graph argument.
struct Feed {
  enum class Kind { existing, frozen, rng_seed, rng_offset };
  Kind kind = Kind::existing;
  std::vector<Existing> sources;   // existing: every tensor that held this buffer when traced
  BufferPtr frozen;                // frozen: data made while tracing from host values
  uint64_t offset_from_entry = 0;  // rng_offset
  Device device;                   // rng_seed, rng_offset: where the draw reads it
};

struct Rebind {  // an existing tensor fn updated in place
  Existing target;
  int32_t output;
  int32_t entry_argument;  // the graph argument that read its old value, or -1
};

struct GradSlot {  // a gradient tensor that fn's backward created for an existing leaf
  Existing leaf;
  int32_t output;
};

struct ResultSlot {
  enum class Kind { undefined, output, existing, frozen };
  Kind kind = Kind::undefined;
  int32_t output = -1;
  Existing existing;
  BufferPtr frozen;
  Shape shape;
  DType dtype = DType::f32;
  Device device;
};

// State of an existing tensor that the trace depended on.
struct StateGuard {
  Existing who;
  std::string what;
  bool grad_leaf = false;
  const TensorImpl* grad = nullptr;  // captured tensors: the very gradient tensor
  bool had_grad = false;             // arguments: only whether there was one
  bool any_grad = false;             // fn reset the gradient before it saw it: any gradient will do
  // Captured tensors that are not among fn's results: the handles to it after the trace. Fewer handles at a
  // later call mean that a variable may have been rebound to another tensor, which fn would now read.
  long holders = -1;
};

// A host flag (TracedFlag) the trace read, such as a module's training mode.
struct FlagGuard {
  std::weak_ptr<const detail::FlagCell> cell;
  bool value = false;
  std::string what;
};

struct OutputType {
  Shape shape;
  DType dtype = DType::f32;
  Device device;
};

struct Program {
  uint64_t hash = 0;
  std::shared_ptr<runtime::Executable> executable;  // null when the step computes nothing
  std::vector<Feed> feeds;
  std::vector<std::pair<Shape, DType>> feed_types;
  std::vector<Rebind> rebinds;
  std::vector<GradSlot> grads;
  std::vector<Existing> grad_resets;  // existing tensors whose gradient fn reset and left undefined
  std::vector<ResultSlot> results;
  std::vector<size_t> result_sizes;
  std::vector<StateGuard> guards;
  std::vector<FlagGuard> flags;
  std::vector<OutputType> output_types;
  uint64_t rng_blocks = 0;
  bool confirmed = false;   // a second trace fed the same host values
  std::string unconfirmed;  // why it is not confirmed yet
};

// What a trace leaves besides the synced graph.
struct TraceFacts {
  const StepRecording& recording;
  uint64_t entry_seed;
  const std::vector<const Buffer*>& input_buffers;  // each tensor input's data at entry, else null
  const std::vector<std::pair<std::weak_ptr<TensorImpl>, const Buffer*>>& updated;  // in-place updates
};

// Builds the program from the trace that just synced; returns why there is none, or "".
std::string record_program(const TraceFacts& trace, const std::vector<StepInput>& inputs, const StepValues* results,
                           const lazy::SyncRecord& synced, Program& p);

// Adds a new trace's program to those of its signature. It is confirmed (may be replayed) when the trace
// just before it, for the same signature, made the same graph (previous_hash) and fed it the same host
// values: a fn whose graph alternates with host state it keeps to itself never replays.
void add_program(std::vector<Program>& programs, Program p, uint64_t previous_hash);

// Runs the program for these inputs and binds its results; false (with why) when a guard fails.
bool replay_program(Program& p, const std::vector<StepInput>& inputs, StepValues& out, std::string& why);

std::string type_text(DType dtype, const Shape& shape);

}  // namespace xlite::detail
