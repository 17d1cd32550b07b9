#pragma once
// Reference kernels: one per IR op, in a table indexed by OpId. Each reads elements through the dtype-
// generic accessors below (floats as double, integers as int64) so that one loop serves every dtype.
#include <array>
#include <span>
#include <string>

#include "core/buffer.h"
#include "ir/graph.h"
#include "xlite/error.h"

namespace xlite::backends::reference {

struct Value {
  BufferPtr buffer;
  Shape shape;
  DType dtype;
  int64_t numel;
};

using Kernel = void (*)(const ir::Instr& instr, std::span<const Value* const> in, Value& out);
using KernelTable = std::array<Kernel, ir::kNumOps>;

const KernelTable& kernels();
void register_elementwise_kernels(KernelTable& table);
void register_reduce_kernels(KernelTable& table);
void register_layout_kernels(KernelTable& table);
void register_index_kernels(KernelTable& table);
void register_scan_kernels(KernelTable& table);
void register_sort_kernels(KernelTable& table);
void register_dot_kernels(KernelTable& table);
void register_conv_kernels(KernelTable& table);
void register_custom_kernels(KernelTable& table);

Value allocate_value(const Shape& shape, DType dtype, Device device);

double load_f(const Value& v, int64_t i);
int64_t load_i(const Value& v, int64_t i);
void store_f(const Value& v, int64_t i, double x);
void store_i(const Value& v, int64_t i, int64_t x);

// Row-major strides and index arithmetic.
std::vector<int64_t> strides_of(const Shape& shape);
void unravel(int64_t linear, const Shape& shape, std::vector<int64_t>& index);
int64_t ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& strides);

// Names the public op the user called, and the IR op when that is a different one.
[[noreturn]] inline void kernel_error(const ir::Instr& instr, const std::string& message) {
  throw Error(ir::blame_message(instr.origin, instr.op, message));
}

}  // namespace xlite::backends::reference
