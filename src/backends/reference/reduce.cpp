// Reference reductions: each input element is folded into the output element it maps to.
#include <algorithm>
#include <cmath>

#include "backends/reference/kernels.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::OpId;

// Maps every input element to its output element (reduced dims dropped or kept as size 1).
std::vector<int64_t> output_positions(const Shape& in_shape, const std::vector<int64_t>& dims) {
  Shape kept = in_shape;
  for (int64_t d : dims) kept[d] = 1;
  std::vector<int64_t> kept_strides = strides_of(kept);
  std::vector<int64_t> positions(numel(in_shape));
  std::vector<int64_t> index;
  for (int64_t i = 0; i < static_cast<int64_t>(positions.size()); ++i) {
    unravel(i, in_shape, index);
    for (int64_t d : dims) index[d] = 0;
    positions[i] = ravel(index, kept_strides);
  }
  return positions;
}

void reduce(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  std::vector<int64_t> positions = output_positions(x.shape, instr.attrs.get_ints(AttrKey::dims));
  std::vector<bool> seen(out.numel, false);
  if (is_floating(x.dtype)) {
    double init = instr.op == OpId::reduce_prod ? 1.0 : 0.0;
    std::vector<double> acc(out.numel, init);
    for (int64_t i = 0; i < x.numel; ++i) {
      double v = load_f(x, i);
      double& a = acc[positions[i]];
      bool first = !seen[positions[i]];
      seen[positions[i]] = true;
      switch (instr.op) {
        case OpId::reduce_sum: a += v; break;
        case OpId::reduce_prod: a *= v; break;
        case OpId::reduce_max:  // NaN propagates, like PyTorch
          if (first || (!std::isnan(a) && (std::isnan(v) || v > a))) a = v;
          break;
        case OpId::reduce_min:
          if (first || (!std::isnan(a) && (std::isnan(v) || v < a))) a = v;
          break;
        default: break;
      }
    }
    for (int64_t o = 0; o < out.numel; ++o) store_f(out, o, acc[o]);
  } else {
    uint64_t init = instr.op == OpId::reduce_prod ? 1 : 0;
    std::vector<uint64_t> acc(out.numel, init);  // unsigned: sums and products wrap instead of overflowing
    for (int64_t i = 0; i < x.numel; ++i) {
      int64_t v = load_i(x, i);
      uint64_t& a = acc[positions[i]];
      bool first = !seen[positions[i]];
      seen[positions[i]] = true;
      switch (instr.op) {
        case OpId::reduce_sum: a += static_cast<uint64_t>(v); break;
        case OpId::reduce_prod: a *= static_cast<uint64_t>(v); break;
        case OpId::reduce_max: a = first || v > static_cast<int64_t>(a) ? static_cast<uint64_t>(v) : a; break;
        case OpId::reduce_min: a = first || v < static_cast<int64_t>(a) ? static_cast<uint64_t>(v) : a; break;
        default: break;
      }
    }
    for (int64_t o = 0; o < out.numel; ++o) store_i(out, o, static_cast<int64_t>(acc[o]));
  }
}

// The first maximum (or minimum) along dim; NaN counts as the extreme value, like PyTorch.
void arg_reduce(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  int64_t dim = instr.attrs.get_int(AttrKey::dim);
  std::vector<int64_t> positions = output_positions(x.shape, {dim});
  std::vector<int64_t> strides = strides_of(x.shape);
  std::vector<double> best(out.numel, 0.0);
  std::vector<int64_t> best_i(out.numel, 0);
  std::vector<int64_t> best_index(out.numel, -1);
  bool want_max = instr.op == OpId::argmax;
  bool floating = is_floating(x.dtype);
  std::vector<int64_t> index;
  for (int64_t i = 0; i < x.numel; ++i) {
    int64_t o = positions[i];
    unravel(i, x.shape, index);
    bool take = best_index[o] < 0;
    if (!take && floating) {
      double v = load_f(x, i), b = best[o];
      take = !std::isnan(b) && (std::isnan(v) || (want_max ? v > b : v < b));
    } else if (!take) {
      int64_t v = load_i(x, i), b = best_i[o];
      take = want_max ? v > b : v < b;
    }
    if (take) {
      if (floating) best[o] = load_f(x, i);
      else best_i[o] = load_i(x, i);
      best_index[o] = index[dim];
    }
  }
  for (int64_t o = 0; o < out.numel; ++o) store_i(out, o, best_index[o]);
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  for (OpId op : {OpId::reduce_sum, OpId::reduce_prod, OpId::reduce_max, OpId::reduce_min})
    table[static_cast<int>(op)] = reduce;
  table[static_cast<int>(OpId::argmax)] = arg_reduce;
  table[static_cast<int>(OpId::argmin)] = arg_reduce;
}

}  // namespace xlite::backends::reference
