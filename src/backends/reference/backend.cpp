// The reference executable: instructions run in order; a value's buffer is dropped after its last use.
#include "backends/reference/backend.h"

#include "backends/reference/kernels.h"
#include "passes/memory_plan.h"
#include "passes/passes.h"
#include "core/check.h"
#include "ir/op_attrs.h"
#include "runtime/transfer.h"

namespace xlite::backends::reference {

const KernelTable& kernels() {
  static const KernelTable table = [] {
    KernelTable t{};
    register_elementwise_kernels(t);
    register_reduce_kernels(t);
    register_layout_kernels(t);
    register_index_kernels(t);
    register_scan_kernels(t);
    register_sort_kernels(t);
    register_dot_kernels(t);
    register_conv_kernels(t);
    register_custom_kernels(t);
    return t;
  }();
  return table;
}

namespace {

class ReferenceExecutable final : public runtime::Executable {
 public:
  explicit ReferenceExecutable(ir::Graph graph) : graph_(std::move(graph)), device_(ir::home_device(graph_)) {
    parameter_device_.assign(graph_.num_parameters, Device{});
    for (const ir::Instr& instr : graph_.instrs)
      if (instr.op == ir::OpId::parameter) parameter_device_[ir::ParameterAttrs::of(instr.attrs).index] = instr.device;
    last_use_.assign(graph_.instrs.size(), -1);
    for (size_t i = 0; i < graph_.instrs.size(); ++i)
      for (int32_t o : graph_.instrs[i].operands) last_use_[o] = static_cast<int64_t>(i);
    for (int32_t o : graph_.outputs) last_use_[o] = static_cast<int64_t>(graph_.instrs.size());
  }

  // The oracle never reuses argument buffers: it is the plain semantics that donation must match.
  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const runtime::Donation>,
                             const runtime::RunOn& on) override {
    runtime::check_run(on, device_, args, parameter_device_);
    const KernelTable& table = kernels();
    std::vector<Value> values(graph_.instrs.size());
    std::vector<const Value*> operands;
    for (size_t i = 0; i < graph_.instrs.size(); ++i) {
      const ir::Instr& instr = graph_.instrs[i];
      if (instr.op == ir::OpId::parameter) {
        const BufferPtr& arg = args[ir::ParameterAttrs::of(instr.attrs).index];
        int64_t n = numel(instr.shape);
        if (arg->bytes() < static_cast<size_t>(n * dtype_size(instr.dtype)))
          XLITE_FAIL("[run] argument " + std::to_string(ir::ParameterAttrs::of(instr.attrs).index) +
                     " is smaller than its type " + shape_str(instr.shape));
        values[i] = Value{arg, instr.shape, instr.dtype, n};
      } else {
        operands.clear();
        for (int32_t o : instr.operands) operands.push_back(&values[o]);
        values[i] = allocate_value(instr.shape, instr.dtype, instr.device);
        table[static_cast<int>(instr.op)](instr, operands, values[i]);
      }
      for (int32_t o : instr.operands)
        if (last_use_[o] == static_cast<int64_t>(i)) values[o].buffer.reset();
    }
    std::vector<BufferPtr> outputs;
    outputs.reserve(graph_.outputs.size());
    for (int32_t o : graph_.outputs) outputs.push_back(values[o].buffer);
    return outputs;
  }

  debug::MemoryStats memory_stats() const override {
    std::vector<int32_t> writes;
    std::vector<std::vector<int32_t>> reads;
    for (size_t i = 0; i < graph_.instrs.size(); ++i) {
      if (graph_.instrs[i].op == ir::OpId::parameter) continue;
      writes.push_back(static_cast<int32_t>(i));
      reads.push_back(graph_.instrs[i].operands);
    }
    return passes::plan_memory(graph_, writes, reads);
  }

  Device device() const override { return device_; }

 private:
  ir::Graph graph_;
  Device device_;
  std::vector<Device> parameter_device_;
  std::vector<int64_t> last_use_;
};

class ReferenceBackend final : public runtime::Backend {
 public:
  std::string name() const override { return "reference"; }
  std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) override { return reference::compile(graph); }
};

}  // namespace

std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) {
  for (const ir::Instr& instr : graph.instrs)
    if (instr.op != ir::OpId::parameter && !kernels()[static_cast<int>(instr.op)])
      XLITE_FAIL("[compile] the reference backend has no kernel for " + std::string(ir::op_name(instr.op)));
  // Dead instructions are dropped first, as the cpu target's passes drop them, so that a bad value in
  // a value nothing needs (an index out of range, a remainder by zero) raises on neither backend.
  return std::make_shared<ReferenceExecutable>(passes::dce(graph));
}

std::unique_ptr<runtime::Backend> make_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace xlite::backends::reference
