#include "compiler/pipeline.h"

#include <algorithm>
#include <optional>

#include "passes/memory_plan.h"
#include "compiler/optimize.h"
#include "compiler/schedule.h"
#include "core/clock.h"
#include "core/debug_output.h"
#include "core/trace.h"
#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "runtime/step_profile.h"
#include "runtime/custom_call.h"
#include "runtime/transfer.h"

namespace xlite::compiler {
namespace {

// "loop tanh f32[4096,1024] (7 ops)", "matmul f32[256,784] x f32[1024,784]^T": what a profile row sums.
std::string step_label(const ir::Graph& graph, const Region& region) {
  const ir::Instr& root = graph.instrs[region.root];
  auto value = [&](int32_t v) {
    return std::string(dtype_name(graph.instrs[v].dtype)) + shape_str(graph.instrs[v].shape);
  };
  const std::string kind = region_kind_name(region.kind);
  switch (region.kind) {
    case RegionKind::Matmul: {
      std::string text = kind;
      for (size_t k = 0; k < root.operands.size(); ++k) {
        const int32_t o = root.operands[k];
        bool transposed = ir::is_matrix_transpose(graph.instrs[o]);
        text += (k == 0 ? " " : " x ") + value(transposed ? graph.instrs[o].operands[0] : o) + (transposed ? "^T" : "");
      }
      return text;
    }
    case RegionKind::Conv: return kind + " " + value(root.operands[0]) + " * " + value(root.operands[1]);
    case RegionKind::Fallback: return kind + " " + std::string(ir::op_name(root.op)) + " " + value(region.root);
    case RegionKind::Transfer:
      return kind + " " + value(region.root) + " " + graph.instrs[root.operands[0]].device.str() + " -> " +
             root.device.str();
    case RegionKind::CustomCall:
      if (root.op == ir::OpId::custom_output)
        return "custom_output " + std::to_string(ir::CustomOutputAttrs::of(root.attrs).index) + " of %" +
               std::to_string(root.operands[0]) + " " + value(region.root);
      return kind + " " + std::string(ir::CustomCallAttrs::of(root.attrs).kernel) + " " + value(region.root);
    case RegionKind::Loop:
    case RegionKind::Reduce: break;
  }
  return kind + " " + std::string(ir::op_name(root.op)) + " " + value(region.root) + " (" +
         std::to_string(region.members.size()) + " ops)";
}

// The kernel of a custom_call region, or null for any other region.
const kernels::Kernel* custom_kernel(const ir::Graph& graph, const Region& region) {
  if (region.kind != RegionKind::CustomCall || graph.instrs[region.root].op != ir::OpId::custom_call) return nullptr;
  return &ir::kernel_named(ir::CustomCallAttrs::of(graph.instrs[region.root].attrs).kernel);
}

// A kernel that updates an input in place and cannot fail may be handed that input's donated buffer, when
// the call reads the input through that operand only (kernels::Kernel::updates_input).
std::vector<bool> overwritable_kernel_inputs(const ir::Graph& graph, const Region& region,
                                             const kernels::Kernel& kernel) {
  std::vector<bool> safe(region.inputs.size(), false);
  if (kernel.updates_input < 0 || kernel.may_fail) return safe;
  const std::vector<int32_t>& operands = graph.instrs[region.root].operands;
  const int32_t updated = operands[static_cast<size_t>(kernel.updates_input)];
  if (std::count(operands.begin(), operands.end(), updated) == 1)
    safe[std::find(region.inputs.begin(), region.inputs.end(), updated) - region.inputs.begin()] = true;
  return safe;
}

// Which element of a value a region's output element reads. `flat`: the one at the output's own row-major
// position. `shift` (when the value has the output's rank): the one at the output's index plus shift.
// Neither: somewhere else, or several.
struct ReadAt {
  bool reached = false;
  bool flat = false;
  std::optional<std::vector<int64_t>> shift;
  bool operator==(const ReadAt&) const = default;
};

ReadAt shifted(const Shape& root, const Shape& value, std::vector<int64_t> shift) {
  const bool zero = std::all_of(shift.begin(), shift.end(), [](int64_t s) { return s == 0; });
  return {true, zero && value == root, std::move(shift)};
}

// The operand's reads, given the instruction's: elementwise ops read at the same place, a reshape at the
// same row-major position, a pad moves back by its low padding and a unit-stride slice forward by its
// start. So the write-back of a view (a pad of a slice of the base, selected into the base) reads each
// base element only for the output element at its own place, and may write over it.
ReadAt operand_read(const ir::Graph& body, const Shape& root, const ir::Instr& instr, const ReadAt& at,
                    int32_t operand) {
  const ReadAt elsewhere{true, false, std::nullopt};
  if (elementwise(body, instr)) return at;
  if (instr.op == ir::OpId::reshape) return at.flat ? ReadAt{true, true, std::nullopt} : elsewhere;
  std::optional<std::vector<int64_t>> shift = at.shift;
  if (!shift && at.flat && instr.shape == root) shift = std::vector<int64_t>(root.size(), 0);
  if (!shift || shift->size() != instr.shape.size()) return elsewhere;
  const Shape& shape = body.instrs[operand].shape;
  if (instr.op == ir::OpId::pad) {
    const ir::PadAttrs pad = ir::PadAttrs::of(instr.attrs);
    for (size_t d = 0; d < shift->size(); ++d) (*shift)[d] -= pad.lo[d];
    return shifted(root, shape, std::move(*shift));
  }
  if (instr.op == ir::OpId::slice) {
    const ir::SliceAttrs slice = ir::SliceAttrs::of(instr.attrs);
    if (std::any_of(slice.stride.begin(), slice.stride.end(), [](int64_t s) { return s != 1; })) return elsewhere;
    for (size_t d = 0; d < shift->size(); ++d) (*shift)[d] += slice.start[d];
    return shifted(root, shape, std::move(*shift));
  }
  return elsewhere;
}

// Per input: read only at the element the region writes, so the output may be written over it.
std::vector<bool> overwritable_inputs(const ir::Graph& graph, const Region& region) {
  if (const kernels::Kernel* kernel = custom_kernel(graph, region))
    return overwritable_kernel_inputs(graph, region, *kernel);
  const ir::Graph& body = region.body;
  std::vector<bool> safe(region.inputs.size(), region.kind == RegionKind::Loop);
  if (region.kind != RegionKind::Loop) return safe;
  // From the output back, where each value is read; a value two readers read at different places is read
  // elsewhere. An input read anywhere but at the output's own element must not be overwritten.
  std::vector<ReadAt> read(body.instrs.size());
  const int32_t root = body.outputs[0];
  const Shape& root_shape = body.instrs[root].shape;
  read[root] = {true, true, std::vector<int64_t>(root_shape.size(), 0)};
  for (size_t i = body.instrs.size(); i-- > 0;) {
    if (!read[i].reached) continue;
    const ir::Instr& instr = body.instrs[i];
    for (int32_t o : instr.operands) {
      ReadAt r = operand_read(body, root_shape, instr, read[i], o);
      if (read[o].reached && !(read[o] == r)) r = {true, false, std::nullopt};
      read[o] = std::move(r);
    }
  }
  for (size_t i = 0; i < body.instrs.size(); ++i) {
    const ir::Instr& instr = body.instrs[i];
    if (instr.op == ir::OpId::parameter && read[i].reached && !read[i].flat)
      safe[ir::ParameterAttrs::of(instr.attrs).index] = false;
  }
  // An input that is the root itself would be a copy; one read nowhere is fine.
  return safe;
}

// Per step, the input whose buffer its output may take. A step that hands back a buffer of its own may
// return a view of an input (a fallback's reshape, a custom call's output), so neither its value nor what it
// reads may be lent.
std::vector<int32_t> in_place_writes(const ir::Graph& graph, const std::vector<runtime::ProgramStep>& steps,
                                     const std::vector<int32_t>& writes,
                                     const std::vector<std::vector<int32_t>>& reads) {
  std::vector<bool> viewed(graph.instrs.size(), false);
  for (const runtime::ProgramStep& step : steps)
    if (step.replaces_output)
      for (int32_t v : step.inputs) viewed[v] = true;
  std::vector<bool> may_lend(steps.size());
  std::vector<std::vector<bool>> overwritable(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    may_lend[s] = !steps[s].replaces_output && !viewed[steps[s].root];
    overwritable[s] = steps[s].overwritable;
  }
  return passes::in_place_writes(graph, writes, reads, overwritable, may_lend);
}

// Operations a step performs, roughly: one per element of each value a loop or reduction computes (or reads,
// for a reduction), 2*M*N*K for a GEMM, two per multiply-add of a convolution.
double estimated_flops(const ir::Graph& graph, const Region& region) {
  const ir::Instr& root = graph.instrs[region.root];
  auto elements = [](const Shape& shape) { return static_cast<double>(numel(shape)); };
  switch (region.kind) {
    case RegionKind::Matmul: {
      const Shape& lhs = graph.instrs[root.operands[0]].shape;
      return 2 * elements(root.shape) * (lhs.empty() ? 1.0 : static_cast<double>(lhs.back()));
    }
    case RegionKind::Conv: {
      const Shape& weight = graph.instrs[root.operands[1]].shape;
      return weight.empty() || weight[0] == 0
                 ? 0
                 : 2 * elements(root.shape) * elements(weight) / static_cast<double>(weight[0]);
    }
    case RegionKind::Loop:
    case RegionKind::Reduce: {
      double flops = 0;
      for (const ir::Instr& instr : region.body.instrs) {
        if (instr.op == ir::OpId::parameter) continue;
        double most = elements(instr.shape);
        for (int32_t o : instr.operands) most = std::max(most, elements(region.body.instrs[o].shape));
        flops += most;
      }
      return flops;
    }
    case RegionKind::CustomCall:
      if (const kernels::Kernel* kernel = custom_kernel(graph, region); kernel && kernel->cost)
        return kernel->cost(ir::kernel_types(ir::operand_types(graph, root)),
                            ir::decode_kernel_attrs(ir::CustomCallAttrs::of(root.attrs).args));
      return 0;
    case RegionKind::Fallback:
    case RegionKind::Transfer: return 0;
  }
  return 0;
}

// The largest buffers of a run: its arguments and each step's result.
std::vector<runtime::CompileSummary::Buffer> largest_buffers(const ir::Graph& graph,
                                                             const std::vector<int32_t>& step_roots) {
  constexpr size_t kShown = 5;
  std::vector<runtime::CompileSummary::Buffer> buffers;
  auto note = [&](int32_t v, std::string value) {
    const ir::Instr& instr = graph.instrs[v];
    buffers.push_back({ir::value_bytes(instr),
                       std::move(value) + " " + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape),
                       instr.origin, instr.site});
  };
  for (size_t v = 0; v < graph.instrs.size(); ++v)
    if (graph.instrs[v].op == ir::OpId::parameter)
      note(static_cast<int32_t>(v), "input " + std::to_string(ir::ParameterAttrs::of(graph.instrs[v].attrs).index));
  for (int32_t root : step_roots)
    note(root, "%" + std::to_string(root) + " = " + std::string(ir::op_name(graph.instrs[root].op)));
  // Largest first; among equals, by name, so the report does not depend on the sort.
  std::sort(buffers.begin(), buffers.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value; });
  if (buffers.size() > kShown) buffers.resize(kShown);
  return buffers;
}

// Regions the runtime runs whatever the target: copies between devices, and custom kernels (a registered
// kernel brings its own implementation per device kind). Empty for the others.
LoweredRegion lower_in_runtime(const ir::Graph& graph, const Region& region) {
  switch (region.kind) {
    case RegionKind::Transfer: return {runtime::make_transfer_thunk()};
    case RegionKind::CustomCall:
      if (graph.instrs[region.root].op == ir::OpId::custom_output)
        return {runtime::make_custom_output_thunk(graph, region.root), /*replaces_output=*/true};
      return {runtime::make_custom_call_thunk(graph, region.root, region.inputs)};
    case RegionKind::Loop:
    case RegionKind::Reduce:
    case RegionKind::Matmul:
    case RegionKind::Conv:
    case RegionKind::Fallback: break;
  }
  return {};
}

}  // namespace

bool may_raise(const ir::Graph& graph, const Region& region) {
  if (region.kind == RegionKind::Fallback) return true;
  if (region.kind == RegionKind::CustomCall) {
    const kernels::Kernel* kernel = custom_kernel(graph, region);
    return kernel && kernel->may_fail;
  }
  if (region.kind != RegionKind::Loop && region.kind != RegionKind::Reduce) return false;
  return std::any_of(region.body.instrs.begin(), region.body.instrs.end(),
                     [](const ir::Instr& instr) { return ir::may_raise(instr.op, instr.dtype); });
}

std::shared_ptr<runtime::Executable> compile_for_target(const ir::Graph& input, Target& target) {
  runtime::Program program;
  runtime::CompileSummary& summary = program.summary;
  int64_t phase_start = now_ns();
  auto phase_done = [&](int64_t& phase_ns, const char* phase) {
    const int64_t now = now_ns();
    phase_ns = now - phase_start;
    if (trace::enabled()) trace::span("compile", phase, phase_start, now);
    phase_start = now;
  };
  program.graph = optimize(input);
  const ir::Graph& graph = program.graph;
  summary.instructions = static_cast<int64_t>(graph.instrs.size());
  phase_done(summary.passes_ns, "passes");
  FusionPlan plan = plan_fusion(graph, target.fusion_policy());
  const std::string fusion = describe(plan);
  phase_done(summary.fusion_ns, "fusion");

  std::vector<int32_t> writes;
  std::vector<std::vector<int32_t>> reads;
  std::vector<int64_t> scratch;
  int64_t code_bytes = 0, kernels = 0;
  for (Region& region : schedule(graph, std::move(plan.regions))) {
    // Copies between devices and custom kernels are the runtime's; the target lowers what computes.
    LoweredRegion lowered = lower_in_runtime(graph, region);
    if (!lowered.thunk) lowered = target.lower(graph, region);
    code_bytes += lowered.code_bytes;
    kernels += lowered.generated_kernel ? 1 : 0;
    summary.library_calls += region.kind == RegionKind::Matmul || region.kind == RegionKind::Conv;
    summary.fallbacks += region.kind == RegionKind::Fallback;
    summary.transfers += region.kind == RegionKind::Transfer;
    summary.custom_calls +=
        region.kind == RegionKind::CustomCall && graph.instrs[region.root].op == ir::OpId::custom_call;
    runtime::ProgramStep step;
    step.root = region.root;
    step.inputs = region.inputs;
    step.thunk = std::move(lowered.thunk);
    step.output_bytes = ir::value_bytes(graph.instrs[region.root]);
    if (region.kind == RegionKind::CustomCall && graph.instrs[region.root].op == ir::OpId::custom_call)
      step.scratch_bytes = runtime::custom_call_scratch_bytes(graph, region.root);
    step.may_raise = may_raise(graph, region);
    step.replaces_output = lowered.replaces_output;
    step.overwritable = overwritable_inputs(graph, region);
    step.may_write_into_argument =
        region.kind == RegionKind::Loop ||
        std::find(step.overwritable.begin(), step.overwritable.end(), true) != step.overwritable.end();
    step.label = step_label(graph, region);
    step.flops = estimated_flops(graph, region);
    step.bytes_moved = static_cast<double>(step.output_bytes);
    for (int32_t v : region.inputs) step.bytes_moved += static_cast<double>(ir::value_bytes(graph.instrs[v]));
    writes.push_back(region.root);
    reads.push_back(region.inputs);
    scratch.push_back(step.scratch_bytes);
    program.steps.push_back(std::move(step));
  }
  const std::vector<int32_t> written_over = in_place_writes(graph, program.steps, writes, reads);
  for (size_t s = 0; s < program.steps.size(); ++s) program.steps[s].written_over = written_over[s];
  program.freed_after = passes::last_uses(graph, reads);
  program.stats = passes::plan_memory(graph, writes, reads, scratch, &program.live_bytes, written_over);
  program.stats.code_bytes = code_bytes;
  program.stats.kernels = kernels;
  program.stats.fusion = fusion;
  program.device = home_device(graph);
  summary.kernels = kernels;
  phase_done(summary.lowering_ns, "codegen");
  if (debug_output::level() >= 1) summary.largest_buffers = largest_buffers(graph, writes);
  return runtime::make_executor(std::move(program));
}

}  // namespace xlite::compiler
