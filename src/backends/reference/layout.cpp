// Reference data-movement kernels: each output element is copied from the input element it maps to.
#include <cstring>

#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"
#include "runtime/transfer.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::OpId;

void copy_element(const Value& from, int64_t i, const Value& to, int64_t o) {
  int64_t size = dtype_size(to.dtype);
  std::memcpy(to.buffer->as<char>() + o * size, from.buffer->as<char>() + i * size, size);
}

// For every output element, find_input(output index, input index) fills the input index to copy from.
template <class F>
void gather_elements(const Value& x, Value& out, F&& find_input) {
  std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> out_index, in_index(x.shape.size());
  for (int64_t o = 0; o < out.numel; ++o) {
    unravel(o, out.shape, out_index);
    find_input(out_index, in_index);
    copy_element(x, ravel(in_index, strides), out, o);
  }
}

void reshape(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  std::memcpy(out.buffer->data(), in[0]->buffer->data(), out.numel * dtype_size(out.dtype));
}

void transpose(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const auto& perm = ir::TransposeAttrs::of(instr.attrs).perm;
  gather_elements(*in[0], out, [&](const auto& o, auto& i) {
    for (size_t k = 0; k < perm.size(); ++k) i[perm[k]] = o[k];
  });
}

void broadcast(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const auto& dims = ir::BroadcastAttrs::of(instr.attrs).dims;
  const Shape& in_shape = in[0]->shape;
  gather_elements(*in[0], out, [&](const auto& o, auto& i) {
    for (size_t k = 0; k < dims.size(); ++k) i[k] = in_shape[k] == 1 ? 0 : o[dims[k]];
  });
}

void slice(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const auto& start = ir::SliceAttrs::of(instr.attrs).start;
  const auto& stride = ir::SliceAttrs::of(instr.attrs).stride;
  gather_elements(*in[0], out, [&](const auto& o, auto& i) {
    for (size_t k = 0; k < o.size(); ++k) i[k] = start[k] + o[k] * stride[k];
  });
}

void flip(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const auto& dims = ir::FlipAttrs::of(instr.attrs).dims;
  gather_elements(*in[0], out, [&](const auto& o, auto& i) {
    i.assign(o.begin(), o.end());
    for (int64_t d : dims) i[d] = out.shape[d] - 1 - o[d];
  });
}

void concat(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
  std::vector<int64_t> out_strides = strides_of(out.shape);
  std::vector<int64_t> index, out_index;
  int64_t base = 0;
  for (const Value* x : in) {
    for (int64_t i = 0; i < x->numel; ++i) {
      unravel(i, x->shape, index);
      index[dim] += base;
      copy_element(*x, i, out, ravel(index, out_strides));
    }
    base += x->shape[dim];
  }
}

void pad(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const auto& lo = ir::PadAttrs::of(instr.attrs).lo;
  double value = ir::PadAttrs::of(instr.attrs).value;
  for (int64_t o = 0; o < out.numel; ++o) {
    if (is_floating(out.dtype))
      store_f(out, o, value);
    else
      store_i(out, o, static_cast<int64_t>(value));
  }
  std::vector<int64_t> out_strides = strides_of(out.shape);
  std::vector<int64_t> index;
  const Value& x = *in[0];
  for (int64_t i = 0; i < x.numel; ++i) {
    unravel(i, x.shape, index);
    for (size_t d = 0; d < index.size(); ++d) index[d] += lo[d];
    copy_element(x, i, out, ravel(index, out_strides));
  }
}

}  // namespace

// The output was allocated on the transfer's device.
void transfer(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  runtime::copy_between_devices(*in[0]->buffer, *out.buffer);
}

// The value, once `after` (the second operand) is known.
void barrier(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  runtime::copy_between_devices(*in[0]->buffer, *out.buffer);
}

void register_layout_kernels(KernelTable& table) {
  table[static_cast<int>(OpId::reshape)] = reshape;
  table[static_cast<int>(OpId::transpose)] = transpose;
  table[static_cast<int>(OpId::broadcast)] = broadcast;
  table[static_cast<int>(OpId::slice)] = slice;
  table[static_cast<int>(OpId::flip)] = flip;
  table[static_cast<int>(OpId::concat)] = concat;
  table[static_cast<int>(OpId::pad)] = pad;
  table[static_cast<int>(OpId::transfer)] = transfer;
  table[static_cast<int>(OpId::opt_barrier)] = barrier;
}

}  // namespace xlite::backends::reference
