// Ops whose result's size depends on values: nonzero, masked_select and unique. Each reads what decides the
// size (a value read: the sync is recorded with its cause, shown by XLITE_DEBUG, and inside compile(fn) it
// is a guard like any other read), then builds the rest lazily.
#include <string>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
// The flat positions of x's non-zero elements, read on the host.
std::vector<int64_t> nonzero_positions(const Tensor& x) {
  std::vector<uint8_t> set = ne(x, 0).to(DType::u8).to_vector<uint8_t>();
  std::vector<int64_t> positions;
  for (size_t i = 0; i < set.size(); ++i)
    if (set[i]) positions.push_back(static_cast<int64_t>(i));
  return positions;
}
}  // namespace

Tensor nonzero(const Tensor& x) {
  ops::OpScope scope("nonzero");
  const std::vector<int64_t> positions = nonzero_positions(x);
  const int64_t rank = x.dim(), count = static_cast<int64_t>(positions.size());
  std::vector<int64_t> index(static_cast<size_t>(count * rank));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = positions[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[k * rank + d] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
  }
  return scope.finish(tensor(index, {count, rank}, x.device()));
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  ops::OpScope scope("masked_select");
  if (mask.dtype() != DType::bool_) ops::fail("mask must be bool, got " + std::string(dtype_name(mask.dtype())));
  const Shape shape = ops::broadcast_shapes(x.shape(), mask.shape());
  Tensor flat = reshape(broadcast_to(x, shape), {-1});
  return scope.finish(index_select(flat, 0, tensor(nonzero_positions(broadcast_to(mask, shape)), x.device())));
}

Unique unique(const Tensor& x, bool return_inverse, bool return_counts) {
  ops::OpScope scope("unique");
  // Sorted on the device; the run boundaries are read back to size the result.
  Tensor flat = reshape(x, {-1});
  ValuesIndices sorted = sort(flat);
  const int64_t n = flat.numel();
  Unique r;
  if (n == 0) {
    r.values = flat;
    r.inverse = zeros(x.shape(), DType::i64, x.device());
    r.counts = zeros({0}, DType::i64, x.device());
    return r;
  }
  Tensor starts_run =
      concat({ones({1}, DType::bool_, x.device()), ne(slice(sorted.values, 0, 1), slice(sorted.values, 0, 0, n - 1))});
  std::vector<int64_t> firsts = nonzero_positions(starts_run);
  Tensor first = tensor(firsts, x.device());
  r.values = index_select(sorted.values, 0, first);
  if (return_inverse) {
    // Each sorted element's run number, scattered back to where it came from.
    Tensor run = cumsum(starts_run.to(DType::i64), 0) - 1;
    r.inverse = reshape(scatter_add(zeros({n}, DType::i64, x.device()), 0, sorted.indices, run), x.shape());
  }
  if (return_counts) {
    std::vector<int64_t> counts(firsts.size());
    for (size_t i = 0; i < firsts.size(); ++i) counts[i] = (i + 1 < firsts.size() ? firsts[i + 1] : n) - firsts[i];
    r.counts = tensor(counts, x.device());
  }
  return r;
}

}  // namespace xlite
