#include "runtime/custom_call.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "runtime/allocator.h"
#include "xlite/error.h"

namespace xlite::runtime {
namespace {

// What CpuContext::fail throws, caught where the kernel was called.
struct KernelFailure {
  std::string message;
};

class Context final : public kernels::CpuContext {
 public:
  // A negative limit: the kernel declared no scratch rule.
  Context(Device device, int64_t scratch_limit) : device_(device), scratch_limit_(scratch_limit) {}
  int num_threads() const override { return omp_get_max_threads(); }

  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) override {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    const int64_t chunks = std::min<int64_t>(num_threads(), (n + grain - 1) / grain);
    if (chunks <= 1) return body(0, n);
    // An exception must not leave an OpenMP region: each chunk keeps its own, the first is rethrown.
    std::vector<std::exception_ptr> errors(static_cast<size_t>(chunks));
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
    for (int64_t c = 0; c < chunks; ++c) {
      try {
        body(n * c / chunks, n * (c + 1) / chunks);
      } catch (...) {
        errors[static_cast<size_t>(c)] = std::current_exception();
      }
    }
    for (const std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
  }

  void* scratch(size_t bytes) override {
    std::lock_guard lock(mutex_);
    scratch_taken_ += static_cast<int64_t>(bytes);
    if (scratch_limit_ >= 0 && scratch_taken_ > scratch_limit_)
      throw KernelFailure{"took " + std::to_string(scratch_taken_) + " bytes of scratch, more than the " +
                          std::to_string(scratch_limit_) + " its scratch rule declared"};
    scratch_.push_back(allocator(device_).allocate(bytes));
    return scratch_.back()->data();
  }

  [[noreturn]] void fail(const std::string& message) override { throw KernelFailure{message}; }

 private:
  Device device_;
  int64_t scratch_limit_;
  std::mutex mutex_;
  int64_t scratch_taken_ = 0;
  std::vector<BufferPtr> scratch_;  // freed when the call returns
};

class CustomCallThunk final : public Thunk {
 public:
  CustomCallThunk(const ir::Graph& graph, int32_t instr, std::span<const int32_t> step_inputs)
      : instr_(instr),
        device_(graph.instrs[instr].device),
        kernel_(ir::kernel_named(ir::CustomCallAttrs::of(graph.instrs[instr].attrs).kernel)),
        attrs_(ir::decode_kernel_attrs(ir::CustomCallAttrs::of(graph.instrs[instr].attrs).args)),
        input_types_(ir::kernel_types(ir::operand_types(graph, graph.instrs[instr]))),
        scratch_limit_(scratch_limit(kernel_, input_types_, attrs_)),
        packed_(ir::pack_outputs(
            ir::custom_call_outputs(graph.instrs[instr].attrs, ir::operand_types(graph, graph.instrs[instr])))) {
    // The step reads each value once; the kernel gets one input per operand, repeats included.
    for (int32_t o : graph.instrs[instr].operands)
      slot_.push_back(std::find(step_inputs.begin(), step_inputs.end(), o) - step_inputs.begin());
  }

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    std::vector<const void*> in(slot_.size());
    for (size_t k = 0; k < slot_.size(); ++k) in[k] = inputs[slot_[k]]->data();
    std::vector<void*> outputs(packed_.types.size());
    char* base = (*out)->as<char>();
    for (size_t k = 0; k < outputs.size(); ++k) outputs[k] = base + packed_.offsets[k];
    std::optional<std::string> failure =
        run_cpu_kernel(kernel_, attrs_, in, input_types_, outputs, packed_.types, device_, scratch_limit_);
    if (!failure) return std::nullopt;
    // Something harmless for the steps after it; but never over a buffer lent for an update in place, which
    // is the caller's data (a kernel that declared it cannot fail failed all the same).
    const bool lent = kernel_.updates_input >= 0 && base == in[static_cast<size_t>(kernel_.updates_input)];
    if (!lent) std::memset(base, 0, (*out)->bytes());
    return StepFailure{instr_, std::move(*failure)};
  }

 private:
  int32_t instr_;
  Device device_;
  const kernels::Kernel& kernel_;
  kernels::Attrs attrs_;
  std::vector<kernels::TensorType> input_types_;
  int64_t scratch_limit_;  // the rule's answer for these inputs, asked once rather than per run
  ir::PackedOutputs packed_;
  std::vector<size_t> slot_;  // per operand, its place in the step's inputs
};

// Gives back the bytes of a view by dropping its hold on the packed buffer, then itself.
class ViewReleaser final : public BufferReleaser {
 public:
  explicit ViewReleaser(BufferPtr parent) : parent_(std::move(parent)) {}
  void release(void*, size_t) override { delete this; }

 private:
  BufferPtr parent_;
};

class CustomOutputThunk final : public Thunk {
 public:
  CustomOutputThunk(const ir::Graph& graph, int32_t instr)
      : offset_(ir::CustomOutputAttrs::of(graph.instrs[instr].attrs).offset),
        bytes_(ir::value_bytes(graph.instrs[instr])) {}

  std::optional<StepFailure> run(const StepInputs& inputs, BufferPtr* out) const override {
    BufferPtr packed = inputs.shared(0);
    void* data = packed->as<char>() + offset_;
    const Device device = packed->device();
    *out = std::make_shared<Buffer>(data, static_cast<size_t>(bytes_), static_cast<size_t>(bytes_), device,
                                    new ViewReleaser(std::move(packed)));
    return std::nullopt;
  }

 private:
  int64_t offset_;
  int64_t bytes_;
};

}  // namespace

std::optional<std::string> run_cpu_kernel(const kernels::Kernel& kernel, const kernels::Attrs& attrs,
                                          std::span<const void* const> inputs,
                                          std::span<const kernels::TensorType> input_types,
                                          std::span<void* const> outputs,
                                          std::span<const kernels::TensorType> output_types, Device device,
                                          int64_t scratch_limit) {
  Context context(device, scratch_limit);
  // An update in place starts from the input's value, unless the runtime lent the input's own buffer.
  if (kernel.updates_input >= 0 && outputs[0] != inputs[kernel.updates_input] && output_types[0].bytes() > 0)
    std::memcpy(outputs[0], inputs[kernel.updates_input], static_cast<size_t>(output_types[0].bytes()));
  try {
    kernel.cpu(kernels::CpuCall(kernel.name, attrs, inputs, input_types, outputs, output_types), context);
  } catch (const KernelFailure& failure) {
    return "[" + kernel.name + "] " + failure.message;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("[" + kernel.name + "] the kernel failed: " + e.what());
  }
  return std::nullopt;
}

int64_t declared_scratch_bytes(const kernels::Kernel& kernel, const std::vector<kernels::TensorType>& input_types,
                               const kernels::Attrs& attrs) {
  if (!kernel.scratch) return 0;
  const int64_t bytes = kernel.scratch(input_types, attrs, omp_get_max_threads());
  if (bytes < 0) throw Error("[" + kernel.name + "] the scratch rule gave " + std::to_string(bytes) + " bytes");
  return bytes;
}

int64_t scratch_limit(const kernels::Kernel& kernel, const std::vector<kernels::TensorType>& input_types,
                      const kernels::Attrs& attrs) {
  return kernel.scratch ? declared_scratch_bytes(kernel, input_types, attrs) : -1;
}

int64_t custom_call_scratch_bytes(const ir::Graph& graph, int32_t instr) {
  const ir::CustomCallAttrs call = ir::CustomCallAttrs::of(graph.instrs[instr].attrs);
  return declared_scratch_bytes(ir::kernel_named(call.kernel),
                                ir::kernel_types(ir::operand_types(graph, graph.instrs[instr])),
                                ir::decode_kernel_attrs(call.args));
}

std::unique_ptr<Thunk> make_custom_call_thunk(const ir::Graph& graph, int32_t instr,
                                              std::span<const int32_t> step_inputs) {
  return std::make_unique<CustomCallThunk>(graph, instr, step_inputs);
}

std::unique_ptr<Thunk> make_custom_output_thunk(const ir::Graph& graph, int32_t instr) {
  return std::make_unique<CustomOutputThunk>(graph, instr);
}

}  // namespace xlite::runtime
