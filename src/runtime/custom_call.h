#pragma once
// Running registered kernels (xlite/kernels.h): the thunks of custom_call and custom_output steps, and the
// one function that calls a kernel's CPU implementation, which the reference evaluator shares.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/program.h"
#include "xlite/kernels.h"

namespace xlite::runtime {

// Calls kernel.cpu over the buffers on `device`'s threads, lending it at most scratch_limit bytes of
// scratch (scratch_limit below). A failure the kernel reports (CpuContext::fail) comes back as
// "[kernel] message"; an xlite::Error it throws propagates as it is, anything else it throws becomes one
// naming the kernel.
std::optional<std::string> run_cpu_kernel(const kernels::Kernel& kernel, const kernels::Attrs& attrs,
                                          std::span<const void* const> inputs,
                                          std::span<const kernels::TensorType> input_types,
                                          std::span<void* const> outputs,
                                          std::span<const kernels::TensorType> output_types, Device device,
                                          int64_t scratch_limit);

// The scratch a call of the kernel declares (Kernel::scratch) on the runtime's threads; 0 without a rule.
int64_t declared_scratch_bytes(const kernels::Kernel& kernel, const std::vector<kernels::TensorType>& input_types,
                               const kernels::Attrs& attrs);
// What run_cpu_kernel may lend a call: the declared scratch, or -1 (no limit) without a scratch rule.
int64_t scratch_limit(const kernels::Kernel& kernel, const std::vector<kernels::TensorType>& input_types,
                      const kernels::Attrs& attrs);
// The declared scratch for custom_call instruction `instr` of the graph, for the memory plan.
int64_t custom_call_scratch_bytes(const ir::Graph& graph, int32_t instr);

// The step that computes custom_call instruction `instr` of the graph into its buffer (the packed outputs
// when it has several), reading the values `step_inputs` (ProgramStep::inputs, each value once).
std::unique_ptr<Thunk> make_custom_call_thunk(const ir::Graph& graph, int32_t instr,
                                              std::span<const int32_t> step_inputs);
// The step of a custom_output: a view of its output inside the call's packed buffer, which it keeps alive;
// nothing is copied (the step replaces its output, runtime::ProgramStep::replaces_output).
std::unique_ptr<Thunk> make_custom_output_thunk(const ir::Graph& graph, int32_t instr);

}  // namespace xlite::runtime
