// Reference kernels for custom calls: the kernel's own CPU implementation (there is no other), and
// custom_output as a copy out of the packed buffer.
#include <cstring>

#include "backends/reference/kernels.h"
#include "ir/kernel_registry.h"
#include "ir/op_attrs.h"
#include "runtime/custom_call.h"

namespace xlite::backends::reference {
namespace {

void custom_call(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const ir::CustomCallAttrs call = ir::CustomCallAttrs::of(instr.attrs);
  const kernels::Kernel& kernel = ir::kernel_named(call.kernel);
  std::vector<const void*> inputs;
  std::vector<ir::OperandType> operand_types;
  for (const Value* v : in) {
    inputs.push_back(v->buffer->data());
    operand_types.push_back({v->shape, v->dtype});
  }
  const std::vector<kernels::TensorType> input_types = ir::kernel_types(operand_types);
  const ir::PackedOutputs packed = ir::pack_outputs(ir::custom_call_outputs(instr.attrs, operand_types));
  std::vector<void*> outputs;
  for (int64_t offset : packed.offsets) outputs.push_back(out.buffer->as<char>() + offset);
  const kernels::Attrs attrs = ir::decode_kernel_attrs(call.args);
  if (std::optional<std::string> failure =
          runtime::run_cpu_kernel(kernel, attrs, inputs, input_types, outputs, packed.types, instr.device,
                                  runtime::scratch_limit(kernel, input_types, attrs)))
    throw Error(*failure);
}

void custom_output(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const int64_t offset = ir::CustomOutputAttrs::of(instr.attrs).offset;
  std::memcpy(out.buffer->data(), in[0]->buffer->as<char>() + offset, ir::value_bytes(instr));
}

}  // namespace

void register_custom_kernels(KernelTable& table) {
  table[static_cast<int>(ir::OpId::custom_call)] = custom_call;
  table[static_cast<int>(ir::OpId::custom_output)] = custom_output;
}

}  // namespace xlite::backends::reference
