// kernels::call: one custom_call node (and a custom_output per output when there are several), with the
// kernel's backward attached to each output as a custom gradient.
#include "autograd/custom_gradient.h"
#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "lazy/sync.h"
#include "ops/op_support.h"
#include "xlite/kernels.h"

namespace xlite::kernels {
namespace {

// The kernel's backward for the gradient of output `index` alone; the others get none (undefined).
CustomBackward backward_of_output(const Kernel& kernel, std::vector<ir::NodePtr> outputs, size_t index, Attrs attrs) {
  return [&kernel, outputs = std::move(outputs), index, attrs = std::move(attrs)](const std::vector<Tensor>& inputs,
                                                                                  const Tensor&, const Tensor& grad) {
    if (!kernel.backward)
      throw Error("[" + kernel.name + "] has no backward: register one (Kernel::backward) to differentiate it");
    std::vector<Tensor> grads(outputs.size()), values;
    for (const ir::NodePtr& output : outputs) values.push_back(ops::wrap(output));
    grads[index] = grad;
    return kernel.backward(inputs, values, grads, attrs);
  };
}

}  // namespace

std::vector<Tensor> call(const std::string& name, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const Kernel& kernel = ir::kernel_named(name);
  // The registry's copy of the name outlives the scope, which keeps a pointer to it for error messages.
  ops::OpScope scope(kernel.name.c_str());
  bool wants_gradient = false;
  std::vector<ir::NodePtr> gradient_inputs = autograd::gradient_inputs(inputs, kernel.name.c_str(), &wants_gradient);
  std::vector<Tensor> outputs;
  {
    const std::string args = ir::encode_kernel_attrs(attrs);
    const ir::CustomCallAttrs call_attrs{.kernel = kernel.name, .args = args};
    Tensor value = ops::make(ir::OpId::custom_call, std::span<const Tensor>(inputs), call_attrs.to_attrs());
    std::vector<ir::OperandType> types;
    for (const Tensor& t : inputs) types.push_back({ops::impl_of(t).shape(), t.dtype()});
    const std::vector<TensorType> output_types = ir::custom_call_outputs(call_attrs.to_attrs(), types);
    if (output_types.size() == 1) {
      outputs.push_back(value);
    } else {
      const ir::PackedOutputs packed = ir::pack_outputs(output_types);
      for (size_t i = 0; i < output_types.size(); ++i) {
        const ir::CustomOutputAttrs output{.index = static_cast<int64_t>(i),
                                           .offset = packed.offsets[i],
                                           .shape = output_types[i].shape,
                                           .dtype = output_types[i].dtype};
        outputs.push_back(ops::make(ir::OpId::custom_output, {value}, output.to_attrs()));
      }
    }
  }
  if (wants_gradient) {
    // In eager mode the kernel runs here, on the nodes the backward will read, so that the backward reads
    // its results instead of running it again (the sync of the wrapped results below then copies nothing
    // new: they are the same values).
    if (lazy::eager()) {
      std::vector<TensorImpl*> impls;
      for (const Tensor& t : outputs) impls.push_back(t.impl().get());
      lazy::sync_tensors(impls, lazy::SyncCause::eager_op);
    }
    std::vector<ir::NodePtr> values;  // the backward sees the kernel's own outputs
    for (const Tensor& t : outputs) values.push_back(t.impl()->node());
    for (size_t i = 0; i < outputs.size(); ++i)
      outputs[i] = autograd::with_custom_gradient(outputs[i], gradient_inputs,
                                                  backward_of_output(kernel, values, i, attrs), kernel.name.c_str());
  }
  return scope.finish(std::move(outputs));
}

}  // namespace xlite::kernels
