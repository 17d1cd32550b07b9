#pragma once
// While compile(fn) traces a step, what the trace touches that a replay must repeat: which tensors that
// existed before the step it reads, which random draws it makes, and whether it ran anything mid-trace.
// One recording per thread, active between begin and end of the trace.
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/buffer.h"

namespace xlite {

class TensorImpl;

struct StepRecording {
  // A tensor that existed before the step and was read, with the state its trace depended on.
  struct Read {
    std::weak_ptr<TensorImpl> impl;
    bool grad_leaf = false;
    const TensorImpl* grad = nullptr;  // the leaf's gradient tensor when first read
  };
  // A random draw: its seed and offset parameters, the offset counted from the generator's at entry.
  struct Draw {
    const Buffer* seed;
    const Buffer* offset;
    uint64_t offset_from_entry;
  };

  uint64_t first_tensor_id = 0;      // tensors with smaller ids existed before the step
  uint64_t first_buffer_serial = 0;  // buffers with smaller serials existed before the step
  uint64_t entry_rng_offset = 0;
  std::unordered_map<const Buffer*, std::vector<Read>> reads;  // by the buffer the graph reads
  std::vector<Draw> draws;
  bool ran_mid_trace = false;  // a value read or eager op computed data inside the step

  void note_read(const Buffer* data, std::weak_ptr<TensorImpl> impl, bool grad_leaf, const TensorImpl* grad);

  static StepRecording* active();
  static void set_active(StepRecording* recording);
};

}  // namespace xlite
