#pragma once
// A target: what a backend that generates code gives the compiler. The compiler owns the pipeline
// (compiler/pipeline.h: passes, fusion with the target's policy, schedule, buffer plan); the target lowers
// each fused region into a runtime::Thunk, and one executor (runtime/program.h) runs the result. The CPU
// backend is one (backends/cpu/target.cpp); a CUDA or NVPTX target would be another.
#include <cstdint>
#include <memory>
#include <string>

#include "compiler/fusion.h"
#include "ir/graph.h"
#include "runtime/program.h"

namespace xlite::compiler {

struct LoweredRegion {
  std::unique_ptr<runtime::Thunk> thunk;
  bool replaces_output = false;   // the thunk returns a buffer of its own (runtime::ProgramStep)
  int64_t code_bytes = 0;         // generated machine code (MemoryStats), 0 for library calls
  bool generated_kernel = false;  // counted in MemoryStats::kernels
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  virtual FusionPolicy fusion_policy() const { return {}; }
  // The thunk that computes region.root of graph. Called once per region when a program is compiled.
  virtual LoweredRegion lower(const ir::Graph& graph, const Region& region) = 0;
};

}  // namespace xlite::compiler
