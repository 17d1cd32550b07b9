// The one executor of compiled programs (runtime/program.h), whatever target lowered their steps.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <memory_resource>
#include <unordered_map>

#include "core/check.h"
#include "core/trace.h"
#include "ir/op_attrs.h"
#include "runtime/allocator.h"
#include "runtime/program.h"
#include "runtime/step_profile.h"
#include "runtime/transfer.h"
#include "xlite/error.h"

namespace xlite::runtime {
namespace {

// Of the failures a run noted, the one whose instruction comes first in the graph, as the reference backend
// and eager mode would raise it. Steps are not in the graph's order (raising ones run early), so a run notes
// each failure and goes on through the last step that may raise.
class FirstFailure {
 public:
  void note(StepFailure failure) {
    if (failure_ && failure_->graph_instr <= failure.graph_instr) return;
    failure_ = std::move(failure);
  }
  bool failed() const { return failure_.has_value(); }
  [[noreturn]] void raise() const { throw Error(failure_->message); }

 private:
  std::optional<StepFailure> failure_;
};

class Executor final : public Executable {
 public:
  explicit Executor(Program program) : program_(std::move(program)) {
    const ir::Graph& graph = program_.graph;
    const auto& steps = program_.steps;
    parameter_instr_.assign(graph.num_parameters, -1);
    parameter_device_.assign(graph.num_parameters, Device{});
    argument_of_instr_.assign(graph.instrs.size(), -1);
    for (size_t i = 0; i < graph.instrs.size(); ++i) {
      if (graph.instrs[i].op != ir::OpId::parameter) continue;
      const auto argument = static_cast<int32_t>(ir::ParameterAttrs::of(graph.instrs[i].attrs).index);
      parameter_instr_[argument] = static_cast<int32_t>(i);
      parameter_device_[argument] = graph.instrs[i].device;
      argument_of_instr_[i] = argument;
    }
    output_is_last_use_.assign(graph.outputs.size(), true);
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      for (size_t j = i + 1; j < graph.outputs.size(); ++j)
        if (graph.outputs[j] == graph.outputs[i]) output_is_last_use_[i] = false;
    last_read_.assign(graph.instrs.size(), -1);
    for (const ProgramStep& step : steps) output_allocator_.push_back(&allocator(graph.instrs[step.root].device));
    for (size_t s = 0; s < steps.size(); ++s) {
      for (int32_t v : steps[s].inputs) last_read_[v] = static_cast<int64_t>(s);
      step_of_[steps[s].root] = static_cast<int64_t>(s);
      if (steps[s].may_raise) last_raising_step_ = static_cast<int64_t>(s);
    }
    if (profiling())
      for (const ProgramStep& step : steps) profiles_.push_back(std::make_unique<StepProfile>(step.label));
    timed_ = !profiles_.empty() || debug_kernels() || trace::enabled();
  }

  // The step that may write its output into a donated argument, or -1.
  int64_t donation_target(const Donation& d) const {
    const ir::Graph& graph = program_.graph;
    const int32_t out = graph.outputs[d.output];
    auto it = step_of_.find(out);
    if (it == step_of_.end()) return -1;
    const ProgramStep& step = program_.steps[it->second];
    if (d.argument < 0 || d.argument >= static_cast<int32_t>(parameter_instr_.size())) return -1;
    const int32_t param = parameter_instr_[d.argument];
    if (!step.may_write_into_argument) return -1;
    if (it->second <= last_raising_step_) return -1;
    if (ir::value_bytes(graph.instrs[param]) != ir::value_bytes(graph.instrs[out])) return -1;
    if (graph.instrs[param].device != graph.instrs[out].device) return -1;
    for (int32_t o : graph.outputs)
      if (o == param) return -1;                    // the argument is itself a result
    if (last_read_[param] > it->second) return -1;  // read after the output is written
    if (last_read_[param] == it->second) {
      auto pos = std::find(step.inputs.begin(), step.inputs.end(), param) - step.inputs.begin();
      if (!step.overwritable[pos]) return -1;
    }
    return it->second;
  }

  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const Donation> donations,
                             const RunOn& on) override {
    const ir::Graph& graph = program_.graph;
    const auto& steps = program_.steps;
    check_placement(on, program_.device, args, parameter_device_);
    // The per-run tables of a small program live on the stack: an eager op's one-step program allocates
    // nothing here.
    std::array<std::byte, 2048> scratch;
    std::pmr::monotonic_buffer_resource arena(scratch.data(), scratch.size());
    // Per step, the donated buffer it writes into (empty when nothing is donated).
    std::pmr::vector<BufferPtr> donated(&arena);
    int64_t first_donated = static_cast<int64_t>(steps.size());
    for (const Donation& d : donations) {
      const int64_t s = donation_target(d);
      if (s < 0) continue;
      if (donated.empty()) donated.resize(steps.size());
      if (donated[s]) continue;
      donated[s] = args[d.argument];
      first_donated = std::min(first_donated, s);
    }
    // From the first write into a donated buffer on, nothing may fail: the later outputs are allocated
    // before it, so running out of memory cannot leave a donor half overwritten.
    std::pmr::vector<BufferPtr> preallocated(&arena);
    if (first_donated < static_cast<int64_t>(steps.size())) preallocated.resize(steps.size());
    for (size_t s = first_donated; s < steps.size(); ++s)
      if (!donated[s] && !steps[s].replaces_output && steps[s].written_over < 0)
        preallocated[s] = output_allocator_[s]->allocate(static_cast<size_t>(steps[s].output_bytes));
    // Each value by instruction (RunValues).
    std::pmr::vector<Buffer*> values(graph.instrs.size(), nullptr, &arena);
    std::pmr::vector<BufferPtr> owned(graph.instrs.size(), &arena);
    bool placed = true;  // each argument on its parameter's device, checked where the arguments are bound
    for (size_t a = 0; a < parameter_instr_.size(); ++a) {
      values[parameter_instr_[a]] = args[a].get();
      placed = placed && args[a]->device() == parameter_device_[a];
    }
    if (!placed) [[unlikely]]
      fail_run(on, program_.device, args, parameter_device_);
    const RunValues run_values{values.data(), owned.data(), args, argument_of_instr_.data()};
    FirstFailure failure;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (failure.failed() && static_cast<int64_t>(s) > last_raising_step_) failure.raise();
      const ProgramStep& step = steps[s];
      const int64_t started = timed_ ? now_ns() : 0;
      BufferPtr out = !donated.empty() && donated[s]             ? std::move(donated[s])
                      : !preallocated.empty() && preallocated[s] ? std::move(preallocated[s])
                      : in_place(step, owned.data())
                          ? owned[step.written_over]
                          : output_allocator_[s]->allocate(static_cast<size_t>(step.output_bytes));
      const StepInputs inputs(step.inputs, run_values);
      if (std::optional<StepFailure> failed = step.thunk->run(inputs, &out)) failure.note(std::move(*failed));
      if (timed_) [[unlikely]] {
        const int64_t took = now_ns() - started;
        if (!profiles_.empty()) profiles_[s]->add(took);
        if (debug_kernels()) report_kernel(step.label, took, step.flops, step.bytes_moved);
        if (trace::enabled()) trace::span("kernel", step.label, started, started + took);
      }
      values[step.root] = out.get();
      owned[step.root] = std::move(out);
      for (int32_t v : program_.freed_after[s]) {
        owned[v].reset();
        values[v] = nullptr;
      }
    }
    if (failure.failed()) failure.raise();
    std::vector<BufferPtr> outputs;
    outputs.reserve(graph.outputs.size());
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const int32_t o = graph.outputs[i];
      outputs.push_back(output_is_last_use_[i] && owned[o] ? std::move(owned[o]) : run_values.shared(o));
    }
    return outputs;
  }

  // The pipeline lends only buffers nothing else views (passes::in_place_writes); the count confirms it.
  static bool in_place(const ProgramStep& step, const BufferPtr* owned) {
    return step.written_over >= 0 && owned[step.written_over] && owned[step.written_over].use_count() == 1;
  }

  debug::MemoryStats memory_stats() const override { return program_.stats; }
  Device device() const override { return program_.device; }
  CompileSummary compile_summary() const override { return program_.summary; }

  std::vector<debug::MemoryStep> memory_timeline() const override {
    std::vector<debug::MemoryStep> timeline;
    for (size_t s = 0; s < program_.steps.size(); ++s)
      timeline.push_back({program_.steps[s].label, program_.steps[s].output_bytes, program_.live_bytes[s]});
    return timeline;
  }

 private:
  Program program_;
  std::vector<int32_t> parameter_instr_;             // per argument: the instruction that reads it
  std::vector<Device> parameter_device_;             // per argument: where it must live
  std::vector<CachingAllocator*> output_allocator_;  // per step: its output's device's
  std::vector<int32_t> argument_of_instr_;           // per instruction: its argument, or -1
  std::vector<bool> output_is_last_use_;             // per output: no later output is the same value
  std::vector<int64_t> last_read_;                   // per instruction: the last step that reads it
  std::unordered_map<int32_t, int64_t> step_of_;     // root instruction -> step
  int64_t last_raising_step_ = -1;
  std::vector<std::unique_ptr<StepProfile>> profiles_;  // per step, under XLITE_PROFILE
  bool timed_ = false;  // XLITE_PROFILE (totals or trace) or XLITE_DEBUG_LEVEL=3 times each step
};

}  // namespace

std::shared_ptr<Executable> make_executor(Program program) { return std::make_shared<Executor>(std::move(program)); }

}  // namespace xlite::runtime
