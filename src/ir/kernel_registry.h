#pragma once
// The registered custom kernels (xlite/kernels.h) and what the IR needs of them: custom_call's shape rule
// runs the kernel's, the text parser resolves names against the registry, and the runtime finds the
// implementations here. A kernel's attributes travel in the instruction as one string attribute, `args`,
// in a canonical text that round-trips every value ("eps=1e-05, mode='fast', shape=[2, 3]").
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attrs.h"
#include "ir/node.h"
#include "xlite/kernels.h"

namespace xlite::ir {

// The kernel, or an xlite::Error "[custom_call] no kernel named 'x' is registered".
const kernels::Kernel& kernel_named(std::string_view name);

// The built-in kernels (src/kernels/builtin.cpp) are registered on the registry's first use, through this,
// so that their names are taken before any user's and text IR that names them parses in any process.
void register_builtin_kernels();
// register_kernel without that first use: for register_builtin_kernels itself.
void add_builtin_kernel(kernels::Kernel kernel);

std::string encode_kernel_attrs(const kernels::Attrs& attrs);
// Throws xlite::Error naming the text on malformed input.
kernels::Attrs decode_kernel_attrs(std::string_view text);

// Several outputs travel as one u8 buffer, each output 64-byte aligned in it; custom_output reads one.
struct PackedOutputs {
  std::vector<kernels::TensorType> types;
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
};
PackedOutputs pack_outputs(std::vector<kernels::TensorType> types);

// The output types of a custom_call with these attributes (kernel, args) and operands: the kernel's shape
// rule, whose errors name the kernel. At least one output.
std::vector<kernels::TensorType> custom_call_outputs(const Attrs& attrs, std::span<const OperandType> operands);
// What a kernel's shape rule and implementation see of these operands.
std::vector<kernels::TensorType> kernel_types(std::span<const OperandType> operands);
// The type of the custom_call instruction itself: its one output, or the packed buffer of several.
TypedShape custom_call_type(std::span<const kernels::TensorType> outputs);

}  // namespace xlite::ir
