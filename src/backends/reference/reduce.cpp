// Reference reductions: each output element folds the input elements it covers, in order; floating
// sums are compensated so that the oracle is accurate at any length.
#include <algorithm>
#include <cmath>

#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::OpId;

// Where the elements of a reduction are: each output element folds the input elements at
// bases[o] + offsets[r] for every reduced position r, in row-major order of the reduced dims.
struct Folds {
  std::vector<int64_t> bases;    // per output element (the kept dims)
  std::vector<int64_t> offsets;  // per reduced position (the reduced dims)
};

Folds folds_of(const Shape& in_shape, std::span<const int64_t> dims) {
  const std::vector<int64_t> strides = strides_of(in_shape);
  Shape kept, reduced;
  std::vector<int64_t> kept_strides, reduced_strides;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const bool is_reduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end();
    (is_reduced ? reduced : kept).push_back(in_shape[d]);
    (is_reduced ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  auto positions = [](const Shape& shape, const std::vector<int64_t>& in_strides) {
    std::vector<int64_t> at(numel(shape));
    std::vector<int64_t> index;
    for (int64_t i = 0; i < static_cast<int64_t>(at.size()); ++i) {
      unravel(i, shape, index);
      at[i] = ravel(index, in_strides);
    }
    return at;
  };
  return Folds{positions(kept, kept_strides), positions(reduced, reduced_strides)};
}

// Compensated (Neumaier) summation in double: the error stays within about two units of double
// rounding whatever the count, so float sums round to the float nearest the exact sum and double sums
// are accurate too. A running double sum's error grows with the count: ten million 0.1 end at
// 999999.9998389754.
class AccurateSum {
 public:
  void add(double v) {
    const double t = sum_ + v;
    compensation_ += std::fabs(sum_) >= std::fabs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  // Infinities and NaN make the compensation NaN; the plain sum is then the answer.
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

double fold_floats(OpId op, const Value& x, int64_t base, const std::vector<int64_t>& offsets) {
  if (op == OpId::reduce_sum) {
    AccurateSum s;
    for (int64_t r : offsets) s.add(load_f(x, base + r));
    return s.value();
  }
  double a = op == OpId::reduce_prod ? 1.0 : 0.0;
  bool first = true;
  for (int64_t r : offsets) {
    const double v = load_f(x, base + r);
    switch (ir::reduce_op(op)) {
      case ir::ReduceOp::reduce_sum: a += v; break;  // not reached: sums are compensated above
      case ir::ReduceOp::reduce_prod: a *= v; break;
      case ir::ReduceOp::reduce_max:  // NaN propagates, like PyTorch
        if (first || (!std::isnan(a) && (std::isnan(v) || v > a))) a = v;
        break;
      case ir::ReduceOp::reduce_min:
        if (first || (!std::isnan(a) && (std::isnan(v) || v < a))) a = v;
        break;
    }
    first = false;
  }
  return a;
}

// Unsigned: sums and products wrap instead of overflowing.
int64_t fold_integers(OpId op, const Value& x, int64_t base, const std::vector<int64_t>& offsets) {
  uint64_t a = op == OpId::reduce_prod ? 1 : 0;
  bool first = true;
  for (int64_t r : offsets) {
    const int64_t v = load_i(x, base + r);
    switch (ir::reduce_op(op)) {
      case ir::ReduceOp::reduce_sum: a += static_cast<uint64_t>(v); break;
      case ir::ReduceOp::reduce_prod: a *= static_cast<uint64_t>(v); break;
      case ir::ReduceOp::reduce_max: a = first || v > static_cast<int64_t>(a) ? static_cast<uint64_t>(v) : a; break;
      case ir::ReduceOp::reduce_min: a = first || v < static_cast<int64_t>(a) ? static_cast<uint64_t>(v) : a; break;
    }
    first = false;
  }
  return static_cast<int64_t>(a);
}

void reduce(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const Folds folds = folds_of(x.shape, ir::ReduceAttrs::of(instr.attrs).dims);
  for (int64_t o = 0; o < out.numel; ++o) {
    if (is_floating(x.dtype))
      store_f(out, o, fold_floats(instr.op, x, folds.bases[o], folds.offsets));
    else
      store_i(out, o, fold_integers(instr.op, x, folds.bases[o], folds.offsets));
  }
}

// The first maximum (or minimum) along dim; NaN counts as the extreme value, like PyTorch.
void arg_reduce(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const int64_t dim = ir::ArgReduceAttrs::of(instr.attrs).dim;
  const Folds folds = folds_of(x.shape, std::span<const int64_t>(&dim, 1));
  const bool want_max = instr.op == OpId::argmax;
  for (int64_t o = 0; o < out.numel; ++o) {
    int64_t best_index = folds.offsets.empty() ? -1 : 0;  // -1: nothing to pick from
    for (int64_t r = 1; r < static_cast<int64_t>(folds.offsets.size()); ++r) {
      const int64_t at = folds.bases[o] + folds.offsets[r], best_at = folds.bases[o] + folds.offsets[best_index];
      bool take;
      if (is_floating(x.dtype)) {
        const double v = load_f(x, at), b = load_f(x, best_at);
        take = !std::isnan(b) && (std::isnan(v) || (want_max ? v > b : v < b));
      } else {
        const int64_t v = load_i(x, at), b = load_i(x, best_at);
        take = want_max ? v > b : v < b;
      }
      if (take) best_index = r;
    }
    store_i(out, o, best_index);
  }
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  for (OpId op : {OpId::reduce_sum, OpId::reduce_prod, OpId::reduce_max, OpId::reduce_min})
    table[static_cast<int>(op)] = reduce;
  table[static_cast<int>(OpId::argmax)] = arg_reduce;
  table[static_cast<int>(OpId::argmin)] = arg_reduce;
}

}  // namespace xlite::backends::reference
