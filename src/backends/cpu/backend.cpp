#include "backends/cpu/backend.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <llvm/ADT/SmallVector.h>

#include "backends/cpu/kernel.h"
#include "backends/cpu/library.h"
#include "backends/cpu/step_profile.h"
#include "compiler/cache.h"
#include "compiler/fusion.h"
#include "compiler/memory_plan.h"
#include "compiler/passes/passes.h"
#include "runtime/allocator.h"
#include "xlite/error.h"

namespace xlite::backends::cpu {
namespace {
using compiler::Region;
using compiler::RegionKind;

// Below this many output elements a loop runs on one thread: forking costs more than it saves.
constexpr int64_t kParallelThreshold = 1 << 15;

struct Step {
  Region region;
  CompiledKernel kernel;                        // Loop and Reduce
  std::shared_ptr<runtime::Executable> oracle;  // Fallback
  std::shared_ptr<Conv2d> conv;                 // Conv
  std::shared_ptr<Matmul> matmul;               // Matmul
  compiler::StridedView view_a, view_b;         // Matmul: where its operands are read from
  int64_t work = 0;                             // output elements
  int64_t cost = 0;                             // elements read: decides whether to use threads
  // Inputs (positions in region.inputs) read only at the element being written: the output may be
  // written over them.
  std::vector<bool> overwritable;
  std::vector<int32_t> graph_instrs;     // Loop and Reduce: the graph instruction of each body instruction
  std::shared_ptr<StepProfile> profile;  // XLITE_PROFILE only
};

// "loop tanh f32[4096,1024] (7 ops)", "matmul f32[256,784] x f32[1024,784]^T": what a profile row sums.
std::string step_label(const ir::Graph& graph, const Region& region) {
  const ir::Instr& root = graph.instrs[region.root];
  auto value = [&](int32_t v) { return std::string(dtype_name(graph.instrs[v].dtype)) + shape_str(graph.instrs[v].shape); };
  switch (region.kind) {
    case RegionKind::Matmul: {
      std::string text = "matmul";
      for (int32_t o : root.operands) {
        bool transposed = ir::is_matrix_transpose(graph.instrs[o]);
        text += (o == root.operands[0] ? " " : " x ") + value(transposed ? graph.instrs[o].operands[0] : o) + (transposed ? "^T" : "");
      }
      return text;
    }
    case RegionKind::Conv: return "conv2d " + value(root.operands[0]) + " * " + value(root.operands[1]);
    case RegionKind::Fallback: return "reference " + std::string(ir::op_name(root.op)) + " " + value(region.root);
    case RegionKind::Loop:
    case RegionKind::Reduce: break;
  }
  return std::string(region.kind == RegionKind::Loop ? "loop " : "reduce ") + std::string(ir::op_name(root.op)) + " " +
         value(region.root) + " (" + std::to_string(region.members.size()) + " ops)";
}

std::vector<bool> overwritable_inputs(const Region& region) {
  const ir::Graph& body = region.body;
  std::vector<bool> safe(region.inputs.size(), region.kind == RegionKind::Loop);
  if (region.kind != RegionKind::Loop) return safe;
  // Any input reached through an op that reads other elements must not be overwritten.
  std::vector<bool> elementwise_path(body.instrs.size(), false);
  elementwise_path[body.outputs[0]] = true;
  for (size_t i = body.instrs.size(); i-- > 0;) {
    const ir::Instr& instr = body.instrs[i];
    bool through = elementwise_path[i] && compiler::elementwise(body, instr);
    for (int32_t o : instr.operands) {
      if (!through && body.instrs[o].op == ir::OpId::parameter) safe[body.instrs[o].attrs.get_int(ir::AttrKey::index)] = false;
      if (through) elementwise_path[o] = true;
    }
  }
  // An input that is the root itself would be a copy; one read nowhere on a preserving path is fine.
  return safe;
}

// Whether running the step can raise for a reason in the data (a bad index, an integer division by zero or
// negative power) or inside a reference kernel. A donated buffer is written only after every such step, so
// that an error leaves the donor's old value intact.
bool may_raise(const Region& region) {
  if (region.kind == RegionKind::Fallback) return true;
  if (region.kind != RegionKind::Loop && region.kind != RegionKind::Reduce) return false;
  return std::any_of(region.body.instrs.begin(), region.body.instrs.end(),
                     [](const ir::Instr& instr) { return ir::may_raise(instr.op, instr.dtype); });
}

// Steps that can raise run as early as their inputs allow. A donated buffer is written only after the last
// of them, and a training step's loss, which gathers its labels, is traced last: left there, it kept every
// weight update out of its weight's buffer. Moving a step earlier keeps every input before it and every
// reader after it.
std::vector<Region> run_raising_steps_early(std::vector<Region> regions) {
  std::vector<Region> order;
  order.reserve(regions.size());
  for (Region& region : regions) {
    size_t slot = order.size();
    if (may_raise(region)) {
      slot = 0;
      for (size_t k = order.size(); k-- > 0;) {
        if (std::find(region.inputs.begin(), region.inputs.end(), order[k].root) == region.inputs.end()) continue;
        slot = k + 1;
        break;
      }
    }
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(slot), std::move(region));
  }
  return order;
}

std::string kernel_error_message(const Region& region, const KernelStatus& status) {
  const ir::Instr& instr = region.body.instrs[status.instr];
  std::string message;
  switch (status.failure()) {
    case KernelFailure::negative_power:
      message = "integers to negative integer powers are not allowed (exponent " + std::to_string(status.value) + ")";
      break;
    case KernelFailure::division_by_zero: message = "integer division by zero"; break;
    case KernelFailure::index_out_of_range:
      message = "index " + std::to_string(status.value) + " is out of range for dim " +
                std::to_string(instr.attrs.get_int(ir::AttrKey::dim)) + " of size " + std::to_string(status.size);
      break;
    case KernelFailure::none: throw InternalError("[cpu] a kernel status without a failure has no message");
  }
  return ir::blame_message(instr.origin, instr.op, message);
}

// The graph instruction of each instruction of a region's body: the body holds the region's inputs and
// members in the graph's order.
std::vector<int32_t> graph_instrs_of_body(const Region& region) {
  std::vector<int32_t> ids = region.inputs;
  ids.insert(ids.end(), region.members.begin(), region.members.end());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Runs a kernel over its elements and returns the failure the program reports for it (KernelStatus).
KernelStatus run_kernel(const Step& step, void* const* buffers) {
  const int64_t n = step.work;
  if (n == 0) return {};
  int chunks = step.cost < kParallelThreshold ? 1 : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), n));
  std::vector<KernelStatus> status(chunks);
  if (chunks == 1) {
    step.kernel.run(buffers, 0, n, &status[0].failed);
  } else {
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
    for (int c = 0; c < chunks; ++c) step.kernel.run(buffers, n * c / chunks, n * (c + 1) / chunks, &status[c].failed);
  }
  KernelStatus first;
  for (const KernelStatus& s : status)
    if (s.failed && (!first.failed || s.instr < first.instr)) first = s;
  return first;
}

// The error a run raises: of the steps that failed, the one whose instruction comes first in the graph,
// as the reference backend and eager mode would raise it. Steps are not in the graph's order (raising
// ones run early), so a run notes each failure and goes on through the last step that may raise.
class FirstFailure {
 public:
  void note(int32_t graph_instr, std::string message) {
    if (graph_instr_ >= 0 && graph_instr_ <= graph_instr) return;
    graph_instr_ = graph_instr;
    message_ = std::move(message);
  }
  bool failed() const { return graph_instr_ >= 0; }
  [[noreturn]] void raise() const { throw Error(message_); }

 private:
  int32_t graph_instr_ = -1;
  std::string message_;
};

class CpuExecutable final : public runtime::Executable {
 public:
  explicit CpuExecutable(ir::Graph graph) : graph_(std::move(graph)) {
    compiler::FusionPlan plan = compiler::plan_fusion(graph_);
    std::vector<int32_t> writes;
    std::vector<std::vector<int32_t>> reads;
    for (Region& region : run_raising_steps_early(std::move(plan.regions))) {
      Step step;
      step.region = std::move(region);
      step.work = numel(graph_.instrs[step.region.root].shape);
      step.cost = step.region.kind == RegionKind::Reduce ? numel(graph_.instrs[graph_.instrs[step.region.root].operands[0]].shape)
                                                         : step.work;
      switch (step.region.kind) {
        case RegionKind::Loop:
        case RegionKind::Reduce:
          step.kernel = compile_kernel(step.region.body);
          step.graph_instrs = graph_instrs_of_body(step.region);
          stats_.code_bytes += step.kernel.code_bytes;
          ++stats_.kernels;
          break;
        case RegionKind::Fallback:
          step.oracle = compiler::compile_with(step.region.body, "reference");
          break;
        case RegionKind::Conv: {
          const ir::Instr& root = graph_.instrs[step.region.root];
          const Shape& input = graph_.instrs[root.operands[0]].shape;
          const Shape& weight = graph_.instrs[root.operands[1]].shape;
          // With no input channels (or an empty batch) the sums are empty: zeros, no library call.
          if (step.work > 0 && numel(input) > 0 && numel(weight) > 0) step.conv = std::make_shared<Conv2d>(root, input, weight);
          break;
        }
        case RegionKind::Matmul: {
          // Operands are read in place, through strides, from the buffers the plan says they are views of.
          const ir::Instr& root = graph_.instrs[step.region.root];
          const Shape& a = graph_.instrs[root.operands[0]].shape;
          const Shape& b = graph_.instrs[root.operands[1]].shape;
          // With an empty dim there is nothing to multiply: zeros (or nothing), no library call.
          if (numel(a) > 0 && numel(b) > 0 && step.work > 0) {
            const auto& views = step.region.operand_views;
            if (views.size() != 2 || !views[0] || !views[1])
              throw InternalError("[cpu] a matmul operand of %" + std::to_string(step.region.root) + " is neither computed nor a view of a computed value");
            step.view_a = *views[0];
            step.view_b = *views[1];
            step.matmul = std::make_shared<Matmul>(a, step.view_a.strides, b, step.view_b.strides);
          }
          break;
        }
      }
      step.overwritable = overwritable_inputs(step.region);
      if (profiling()) step.profile = std::make_shared<StepProfile>(step_label(graph_, step.region));
      if (may_raise(step.region)) last_raising_step_ = static_cast<int64_t>(steps_.size());
      writes.push_back(step.region.root);
      reads.push_back(step.region.inputs);
      steps_.push_back(std::move(step));
    }
    freed_after_ = compiler::last_uses(graph_, reads);
    parameter_instr_.assign(graph_.num_parameters, -1);
    argument_of_instr_.assign(graph_.instrs.size(), -1);
    for (size_t i = 0; i < graph_.instrs.size(); ++i) {
      if (graph_.instrs[i].op != ir::OpId::parameter) continue;
      const auto argument = static_cast<int32_t>(graph_.instrs[i].attrs.get_int(ir::AttrKey::index));
      parameter_instr_[argument] = static_cast<int32_t>(i);
      argument_of_instr_[i] = argument;
    }
    output_is_last_use_.assign(graph_.outputs.size(), true);
    for (size_t i = 0; i < graph_.outputs.size(); ++i)
      for (size_t j = i + 1; j < graph_.outputs.size(); ++j)
        if (graph_.outputs[j] == graph_.outputs[i]) output_is_last_use_[i] = false;
    last_read_.assign(graph_.instrs.size(), -1);
    for (size_t s = 0; s < reads.size(); ++s)
      for (int32_t v : reads[s]) last_read_[v] = static_cast<int64_t>(s);
    for (size_t s = 0; s < steps_.size(); ++s) step_of_[steps_[s].region.root] = static_cast<int64_t>(s);
    debug::MemoryStats planned = compiler::plan_memory(graph_, writes, reads);
    planned.code_bytes = stats_.code_bytes;
    planned.kernels = stats_.kernels;
    planned.fusion = compiler::describe(plan);
    stats_ = planned;
  }

  // The step that may write its output into a donated argument, or -1.
  int64_t donation_target(const runtime::Donation& d) const {
    int32_t out = graph_.outputs[d.output];
    auto it = step_of_.find(out);
    if (it == step_of_.end()) return -1;
    const Step& step = steps_[it->second];
    if (d.argument < 0 || d.argument >= static_cast<int32_t>(parameter_instr_.size())) return -1;
    const int32_t param = parameter_instr_[d.argument];
    if (step.region.kind != RegionKind::Loop) return -1;
    if (it->second <= last_raising_step_) return -1;
    if (compiler::value_bytes(graph_.instrs[param]) != compiler::value_bytes(graph_.instrs[out])) return -1;
    for (int32_t o : graph_.outputs)
      if (o == param) return -1;  // the argument is itself a result
    if (last_read_[param] > it->second) return -1;  // read after the output is written
    if (last_read_[param] == it->second) {
      auto pos = std::find(step.region.inputs.begin(), step.region.inputs.end(), param) - step.region.inputs.begin();
      if (!step.overwritable[pos]) return -1;
    }
    return it->second;
  }

  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const runtime::Donation> donations) override {
    std::unordered_map<int64_t, BufferPtr> donated;  // step -> buffer to write into
    for (const runtime::Donation& d : donations)
      if (int64_t s = donation_target(d); s >= 0 && !donated.count(s)) donated[s] = args[d.argument];
    if (static_cast<int64_t>(args.size()) != graph_.num_parameters)
      throw InternalError("[run] expected " + std::to_string(graph_.num_parameters) + " arguments, got " + std::to_string(args.size()));
    // From the first write into a donated buffer on, nothing may fail: the later outputs are allocated
    // before it, so running out of memory cannot leave a donor half overwritten.
    int64_t first_donated = static_cast<int64_t>(steps_.size());
    for (const auto& [step, buffer] : donated) first_donated = std::min(first_donated, step);
    // Inline capacity for an eager op's one-step program, which then allocates nothing here.
    llvm::SmallVector<BufferPtr, 4> preallocated;
    if (first_donated < static_cast<int64_t>(steps_.size())) preallocated.resize(steps_.size());
    for (size_t s = first_donated; s < steps_.size(); ++s)
      if (!donated.count(static_cast<int64_t>(s)) && steps_[s].region.kind != RegionKind::Fallback)
        preallocated[s] = runtime::allocator(Device{}).allocate(static_cast<size_t>(compiler::value_bytes(graph_.instrs[steps_[s].region.root])));
    // Each value by instruction: arguments are only viewed (the caller holds them, and a shared_ptr copy
    // is an atomic operation an eager op would pay per argument); step results are owned here.
    llvm::SmallVector<Buffer*, 8> values(graph_.instrs.size(), nullptr);
    llvm::SmallVector<BufferPtr, 8> owned(graph_.instrs.size());
    for (size_t a = 0; a < parameter_instr_.size(); ++a) values[parameter_instr_[a]] = args[a].get();
    auto shared = [&](int32_t v) -> BufferPtr {
      if (owned[v] || argument_of_instr_[v] < 0) return owned[v];
      return args[argument_of_instr_[v]];
    };
    llvm::SmallVector<void*, 8> pointers;
    FirstFailure failure;
    for (size_t s = 0; s < steps_.size(); ++s) {
      if (failure.failed() && static_cast<int64_t>(s) > last_raising_step_) failure.raise();
      const Step& step = steps_[s];
      const ir::Instr& root = graph_.instrs[step.region.root];
      const int64_t started = step.profile ? now_ns() : 0;
      auto given = donated.find(static_cast<int64_t>(s));
      BufferPtr out = given != donated.end()                   ? given->second
                      : !preallocated.empty() && preallocated[s] ? std::move(preallocated[s])
                                                                 : runtime::allocator(Device{}).allocate(static_cast<size_t>(compiler::value_bytes(root)));
      switch (step.region.kind) {
        case RegionKind::Loop:
        case RegionKind::Reduce:
          pointers.clear();
          for (int32_t v : step.region.inputs) pointers.push_back(values[v]->data());
          pointers.push_back(out->data());
          if (KernelStatus status = run_kernel(step, pointers.data()); status.failed)
            failure.note(step.graph_instrs[status.instr], kernel_error_message(step.region, status));
          break;
        case RegionKind::Matmul:
          if (step.matmul)
            step.matmul->run(values[step.view_a.base]->as<float>() + step.view_a.offset,
                             values[step.view_b.base]->as<float>() + step.view_b.offset, out->as<float>());
          else if (step.work > 0) std::memset(out->data(), 0, static_cast<size_t>(compiler::value_bytes(root)));
          break;
        case RegionKind::Conv:
          if (step.conv) step.conv->run(values[root.operands[0]]->as<float>(), values[root.operands[1]]->as<float>(), out->as<float>());
          else if (step.work > 0) std::memset(out->data(), 0, static_cast<size_t>(compiler::value_bytes(root)));
          break;
        case RegionKind::Fallback: {
          std::vector<BufferPtr> inputs;
          for (int32_t v : step.region.inputs) inputs.push_back(shared(v));
          try {
            out = step.oracle->run(inputs)[0];
          } catch (const InternalError&) {
            throw;
          } catch (const Error& e) {
            failure.note(step.region.root, e.what());
            std::memset(out->data(), 0, static_cast<size_t>(compiler::value_bytes(root)));  // read by later raising steps
          }
          break;
        }
      }
      if (step.profile) step.profile->add(now_ns() - started);
      values[step.region.root] = out.get();
      owned[step.region.root] = std::move(out);
      for (int32_t v : freed_after_[s]) {
        owned[v].reset();
        values[v] = nullptr;
      }
    }
    if (failure.failed()) failure.raise();
    std::vector<BufferPtr> outputs;
    outputs.reserve(graph_.outputs.size());
    for (size_t i = 0; i < graph_.outputs.size(); ++i) {
      const int32_t o = graph_.outputs[i];
      outputs.push_back(output_is_last_use_[i] && owned[o] ? std::move(owned[o]) : shared(o));
    }
    return outputs;
  }

  debug::MemoryStats memory_stats() const override { return stats_; }

 private:
  ir::Graph graph_;
  std::vector<Step> steps_;
  std::vector<std::vector<int32_t>> freed_after_;
  std::vector<int32_t> parameter_instr_;           // per argument: the instruction that reads it
  std::vector<int32_t> argument_of_instr_;         // per instruction: its argument, or -1
  std::vector<bool> output_is_last_use_;           // per output: no later output is the same value
  std::vector<int64_t> last_read_;                 // per instruction: the last step that reads it
  std::unordered_map<int32_t, int64_t> step_of_;  // root instruction -> step
  int64_t last_raising_step_ = -1;
  debug::MemoryStats stats_;
};

class CpuBackend final : public runtime::Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) override {
    return std::make_shared<CpuExecutable>(compiler::passes::optimize(graph));
  }
};
}  // namespace

std::unique_ptr<runtime::Backend> make_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace xlite::backends::cpu
