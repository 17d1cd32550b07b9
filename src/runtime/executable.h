#pragma once
// What a backend produces from a graph and what the lazy layer runs. Backends (reference, CPU JIT, later
// CUDA) implement these two interfaces; nothing above this layer knows which one runs.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/call_site.h"
#include "xlite/debug.h"

namespace xlite::ir {
struct Graph;
}

namespace xlite::runtime {

// Where a run's work goes: the device the program was compiled for, and a stream slot on it (CPU devices run
// each program to its end on the calling thread and have only slot 0; a CUDA target will map slots to streams).
struct RunOn {
  Device device;
  int32_t stream = 0;
};

// An argument whose buffer no one else can observe: the backend may write that output into it.
struct Donation {
  int32_t output;    // position in the graph's outputs
  int32_t argument;  // parameter index
};

// How a program was compiled, for XLITE_DEBUG's Compilation Analysis.
struct CompileSummary {
  int64_t passes_ns = 0;      // optimize: the graph passes
  int64_t fusion_ns = 0;      // the fusion plan
  int64_t lowering_ns = 0;    // regions to thunks: code generation, library-call setup
  int64_t instructions = 0;   // after the passes
  int64_t kernels = 0;        // generated loops
  int64_t library_calls = 0;  // GEMMs and convolutions
  int64_t fallbacks = 0;      // steps the reference evaluator runs
  int64_t transfers = 0;      // copies between devices
  int64_t custom_calls = 0;   // registered kernels called
  // The five largest buffers a run holds (inputs, step results), largest first.
  struct Buffer {
    int64_t bytes = 0;
    std::string value;        // "%4 = dot f32[512,512]" in the optimized graph, or "input 0 f32[...]"
    const char* origin = "";  // the public op that built it
    std::shared_ptr<const call_site::Stack> site;  // under XLITE_DEBUG, the stack that built it
  };
  std::vector<Buffer> largest_buffers;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // args are in parameter order, each on its parameter's device; returns one buffer per graph output. Errors
  // found while computing (an index out of range, memory) are thrown as xlite::Error, and so is a run on
  // another device than device(). Donations are offers, not orders.
  virtual std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const Donation> donations,
                                     const RunOn& on) = 0;
  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const Donation> donations) {
    return run(args, donations, RunOn{device()});
  }
  std::vector<BufferPtr> run(std::span<const BufferPtr> args) { return run(args, {}, RunOn{device()}); }
  // The device the program runs on (ir::home_device of its graph).
  virtual Device device() const = 0;
  // Bytes by kind, from the buffer plan (see xlite::debug::MemoryStats).
  virtual debug::MemoryStats memory_stats() const = 0;
  virtual CompileSummary compile_summary() const { return {}; }
  // Per step in run order, from the buffer plan (xlite::debug::memory_timeline).
  virtual std::vector<debug::MemoryStep> memory_timeline() const { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // The graph has been verified.
  virtual std::shared_ptr<Executable> compile(const ir::Graph& graph) = 0;
};

}  // namespace xlite::runtime
