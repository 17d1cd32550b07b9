// Reference sort: the stable sorting permutation along one dim. NaN orders above every number, so it comes
// last ascending and first descending, and equal values keep their order either way (as PyTorch's stable
// sort does).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {

void argsort(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const ir::SortAttrs attrs = ir::SortAttrs::of(instr.attrs);
  const int64_t dim = attrs.dim;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
  for (size_t d = dim + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t n = x.shape[dim];
  const bool floating = is_floating(x.dtype);
  std::vector<int64_t> order(n);
  std::vector<double> fkeys(floating ? n : 0);
  std::vector<int64_t> ikeys(floating ? 0 : n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) {
        if (floating)
          fkeys[k] = load_f(x, base + k * inner);
        else
          ikeys[k] = load_i(x, base + k * inner);
      }
      // a before b: a is smaller (ascending) or larger (descending); NaN is the largest value.
      auto before = [&](int64_t a, int64_t b) {
        if (floating) {
          const double va = fkeys[a], vb = fkeys[b];
          if (std::isnan(va) || std::isnan(vb)) return attrs.descending ? !std::isnan(vb) : !std::isnan(va);
          return attrs.descending ? va > vb : va < vb;
        }
        return attrs.descending ? ikeys[a] > ikeys[b] : ikeys[a] < ikeys[b];
      };
      // Equal keys in position order: std::sort with the position as the last key is a stable sort
      // (std::stable_sort's buffer is deprecated in the libstdc++ that clang builds the fuzzers with).
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        if (before(a, b)) return true;
        if (before(b, a)) return false;
        return a < b;
      });
      for (int64_t k = 0; k < n; ++k) store_i(out, base + k * inner, order[k]);
    }
  }
}

}  // namespace

void register_sort_kernels(KernelTable& table) { table[static_cast<int>(ir::OpId::argsort)] = argsort; }

}  // namespace xlite::backends::reference
