#pragma once
// While compile(fn) traces a step, what the trace touches that a replay must repeat or guard: which
// tensors that existed before the step it reads, which random draws it makes, which host flags it reads,
// and whether it ran anything mid-trace. One recording per thread, active between begin and end of the
// trace.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/buffer.h"
#include "xlite/traced_flag.h"

namespace xlite {

class TensorImpl;

struct StepRecording {
  // A tensor that existed before the step and was read.
  struct Read {
    std::weak_ptr<TensorImpl> impl;
  };
  // The gradient of a tensor that existed before the step, as fn first met it: when it read a leaf (backward
  // adds to the gradient there is, or makes one), asked for grad() or requires_grad(), or reset the gradient.
  struct GradState {
    std::weak_ptr<TensorImpl> tensor;
    // The gradient tensor at that first meeting, compared by address only: after a reset it may be freed, and
    // a new gradient may take its address.
    const TensorImpl* grad = nullptr;
    // The first meeting was a reset: nothing in the trace saw the gradient the tensor had at entry, so a
    // replay need not find the same one.
    bool reset_first = false;
    bool reset = false;  // fn reset the gradient at some point, so a replay may have to drop it too
  };
  // A random draw: its seed and offset parameters, the offset counted from the generator's at entry.
  struct Draw {
    const Buffer* seed;
    const Buffer* offset;
    uint64_t offset_from_entry;
  };
  struct FlagRead {
    std::weak_ptr<const detail::FlagCell> cell;
    bool value;
  };

  uint64_t first_tensor_id = 0;  // tensors with smaller ids existed before the step
  // fn's tensor arguments. A view among them is read as it is fed; any other view that existed before the
  // step is read through its base, so that a replay computes it from the base's data of that call.
  std::vector<const TensorImpl*> arguments;
  uint64_t first_buffer_serial = 0;  // buffers with smaller serials existed before the step
  uint64_t entry_rng_offset = 0;
  std::unordered_map<const Buffer*, std::vector<Read>> reads;  // by the buffer the graph reads
  // Existing tensors whose requires_grad() or grad() fn asked for, which a replay must find unchanged.
  std::vector<std::weak_ptr<TensorImpl>> observed;
  std::unordered_map<const TensorImpl*, GradState> grads;  // by tensor
  std::vector<Draw> draws;
  std::vector<FlagRead> flags;
  // compile(fn, {.full_graph = true}): running anything mid-trace raises instead of being noted.
  bool full_graph = false;
  // What computed or read data inside the step, e.g. "read a value on the host (item)": such a trace may
  // depend on the data. Empty when nothing did.
  std::string ran_mid_trace;

  void note_read(const Buffer* data, std::weak_ptr<TensorImpl> impl);
  // `grad` is the tensor's gradient now; reset: fn is dropping it. The first meeting of each tensor counts.
  void note_grad(const TensorImpl* tensor, std::weak_ptr<TensorImpl> handle, const TensorImpl* grad, bool reset);
  void note_flag(const std::shared_ptr<const detail::FlagCell>& cell, bool value);

  static StepRecording* active();
  static void set_active(StepRecording* recording);
};

// Called by everything that runs work or reads data on the host (value reads, sync(), eager ops): inside
// a trace it marks the step as not replayable, or raises xlite::Error under full_graph. `op` is the
// public op ("item", "sync", "add"), `what` says what it did ("read a value on the host"). Every eager op
// calls it, so outside a trace it costs a thread-local read.
void note_run_in_trace(StepRecording& recording, const char* op, const char* what);
inline void note_mid_trace_run(const char* op, const char* what) {
  if (StepRecording* recording = StepRecording::active()) note_run_in_trace(*recording, op, what);
}

}  // namespace xlite
