// Reference indexing kernels. Every index value is checked before it is used.
#include <cstring>

#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::OpId;

int64_t checked_index(const ir::Instr& instr, const Value& index, int64_t i, int64_t dim, int64_t size) {
  int64_t v = load_i(index, i);
  if (v < 0 || v >= size)
    kernel_error(instr, "index " + std::to_string(v) + " is out of range for dim " + std::to_string(dim) + " of size " +
                            std::to_string(size));
  return v;
}

// Copies x at the output's position with dim replaced by an index value. gather reads the index at the
// output's own position; index_select at the output's coordinate along dim.
void select_along(const ir::Instr& instr, std::span<const Value* const> in, Value& out, bool per_element) {
  const Value& x = *in[0];
  int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
  std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> index;
  int64_t size = dtype_size(x.dtype);
  for (int64_t o = 0; o < out.numel; ++o) {
    unravel(o, out.shape, index);
    index[dim] = checked_index(instr, *in[1], per_element ? o : index[dim], dim, x.shape[dim]);
    std::memcpy(out.buffer->as<char>() + o * size, x.buffer->as<char>() + ravel(index, strides) * size, size);
  }
}

void gather(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  select_along(instr, in, out, true);
}
void index_select(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  select_along(instr, in, out, false);
}

void scatter_add(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const Value& idx = *in[1];
  const Value& src = *in[2];
  int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
  std::memcpy(out.buffer->data(), x.buffer->data(), x.numel * dtype_size(x.dtype));
  std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<int64_t> index;
  for (int64_t i = 0; i < idx.numel; ++i) {
    unravel(i, idx.shape, index);
    index[dim] = checked_index(instr, idx, i, dim, x.shape[dim]);
    int64_t o = ravel(index, strides);
    if (is_floating(x.dtype))
      store_f(out, o, load_f(out, o) + load_f(src, i));
    else
      store_i(out, o,
              static_cast<int64_t>(static_cast<uint64_t>(load_i(out, o)) + static_cast<uint64_t>(load_i(src, i))));
  }
}

void dot(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  const Value& a = *in[0];
  const Value& b = *in[1];
  size_t r = a.shape.size();
  int64_t m = a.shape[r - 2], k = a.shape[r - 1], n = b.shape[r - 1];
  int64_t batch = m * n == 0 ? 0 : out.numel / (m * n);
  bool floating = is_floating(a.dtype);
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t ai = (bi * m + i) * k + p, bj = (bi * k + p) * n + j;
          if (floating)
            acc += load_f(a, ai) * load_f(b, bj);
          else
            iacc += static_cast<uint64_t>(load_i(a, ai)) * static_cast<uint64_t>(load_i(b, bj));
        }
        int64_t o = (bi * m + i) * n + j;
        if (floating)
          store_f(out, o, acc);
        else
          store_i(out, o, static_cast<int64_t>(iacc));
      }
    }
  }
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table[static_cast<int>(OpId::gather)] = gather;
  table[static_cast<int>(OpId::index_select)] = index_select;
  table[static_cast<int>(OpId::scatter_add)] = scatter_add;
}

void register_dot_kernels(KernelTable& table) { table[static_cast<int>(OpId::dot)] = dot; }

}  // namespace xlite::backends::reference
