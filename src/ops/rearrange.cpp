// Ops that rearrange or repeat elements, built from the layout ops: repeat, tile, repeat_interleave, roll,
// diag, diagonal, trace, unfold and clone.
#include <algorithm>
#include <string>

#include "ops/op_support.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ops::OpScope;

std::string list_str(const std::vector<int64_t>& v) { return shape_str(Shape(v.begin(), v.end())); }

// Each dim i of x (with ones prepended to reach repeats.size() dims) repeated repeats[i] times, whole.
Tensor repeat_whole(const Tensor& x, const std::vector<int64_t>& repeats) {
  for (int64_t r : repeats)
    if (r < 0) ops::fail("repeats must be >= 0, got " + list_str(repeats));
  Shape shape(repeats.size() - x.dim(), 1);
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  // [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...], then merged pairwise.
  Shape spaced, expanded, merged;
  for (size_t i = 0; i < shape.size(); ++i) {
    spaced.insert(spaced.end(), {1, shape[i]});
    expanded.insert(expanded.end(), {repeats[i], shape[i]});
    merged.push_back(repeats[i] * shape[i]);
  }
  return reshape(expand(reshape(x, spaced), expanded), merged);
}

// The 2-D diagonal `offset` of the last two dims, as the last dim.
Tensor last_two_diagonal(const Tensor& x, int64_t offset) {
  const int64_t rank = x.dim(), rows = x.shape()[rank - 2], cols = x.shape()[rank - 1];
  const int64_t r0 = std::max<int64_t>(0, -offset), c0 = std::max<int64_t>(0, offset);
  const int64_t n = std::max<int64_t>(0, std::min(rows - r0, cols - c0));
  Shape out(x.shape().begin(), x.shape().end() - 2);
  out.push_back(n);
  if (n == 0) return zeros(out, x.dtype(), x.device());
  Tensor block = slice(slice(x, rank - 2, r0, r0 + n), rank - 1, c0, c0 + n);
  Shape flat(out.begin(), out.end() - 1);
  flat.push_back(n * n);
  return slice(reshape(block, flat), rank - 2, 0, n * n, n + 1);  // every (n + 1)th of the n x n block
}
}  // namespace

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  OpScope scope("repeat");
  if (static_cast<int64_t>(repeats.size()) < x.dim())
    ops::fail("needs a repeat count for each of the " + std::to_string(x.dim()) + " dims of " + shape_str(x.shape()) +
              ", got " + list_str(repeats));
  return scope.finish(repeat_whole(x, repeats));
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats) {
  OpScope scope("tile");
  std::vector<int64_t> full(std::max<int64_t>(0, x.dim() - static_cast<int64_t>(repeats.size())), 1);
  full.insert(full.end(), repeats.begin(), repeats.end());
  return scope.finish(repeat_whole(x, full));
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  OpScope scope("repeat_interleave");
  if (repeats < 0) ops::fail("repeats must be >= 0, got " + std::to_string(repeats));
  Tensor in = dim ? x : reshape(x, {-1});
  const int64_t d = ops::normalize_dim(dim.value_or(0), in.dim() == 0 ? 1 : in.dim());
  if (in.dim() == 0) in = reshape(in, {1});
  Shape expanded = in.shape();
  expanded.insert(expanded.begin() + d + 1, repeats);
  Shape merged = in.shape();
  merged[d] *= repeats;
  return scope.finish(reshape(expand(unsqueeze(in, d + 1), expanded), merged));
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  OpScope scope("repeat_interleave");
  if (is_floating(repeats.dtype()) || repeats.dtype() == DType::bool_)
    ops::fail("repeats must be integers, got " + std::string(dtype_name(repeats.dtype())));
  Tensor in = dim ? x : reshape(x, {-1});
  if (in.dim() == 0) in = reshape(in, {1});
  const int64_t d = ops::normalize_dim(dim.value_or(0), in.dim());
  if (repeats.dim() > 1 || (repeats.numel() != 1 && repeats.numel() != in.shape()[d]))
    ops::fail("repeats must be one count or one per element of dim " + std::to_string(d) + " (" +
              std::to_string(in.shape()[d]) + "), got " + shape_str(repeats.shape()));
  // The result's size is the sum of the counts: a value read.
  std::vector<int64_t> counts = repeats.to(DType::i64).to_vector<int64_t>();
  if (counts.size() == 1) counts.assign(in.shape()[d], counts[0]);
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) ops::fail("repeats must be >= 0, got " + std::to_string(counts[i]));
    index.insert(index.end(), counts[i], static_cast<int64_t>(i));
  }
  return scope.finish(index_select(in, d, tensor(index, in.device())));
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  OpScope scope("roll");
  if (dims.empty()) {
    if (shifts.size() != 1) ops::fail("without dims, takes one shift, got " + list_str(shifts));
    return scope.finish(reshape(roll(reshape(x, {-1}), shifts, {0}), x.shape()));
  }
  if (shifts.size() != dims.size())
    ops::fail("needs one shift per dim, got shifts " + list_str(shifts) + " and dims " + list_str(dims));
  Tensor r = ops::fresh_handle(x);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = ops::normalize_dim(dims[i], x.dim()), n = x.shape()[d];
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s != 0) r = concat({slice(r, d, n - s), slice(r, d, 0, n - s)}, d);
  }
  return scope.finish(r);
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  OpScope scope("diagonal");
  if (x.dim() < 2) ops::fail("needs at least 2 dims, got " + shape_str(x.shape()));
  const int64_t d1 = ops::normalize_dim(dim1, x.dim()), d2 = ops::normalize_dim(dim2, x.dim());
  if (d1 == d2) ops::fail("dim1 and dim2 must differ, got " + std::to_string(dim1) + " and " + std::to_string(dim2));
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != d1 && d != d2) order.push_back(d);
  order.insert(order.end(), {d1, d2});
  return scope.finish(last_two_diagonal(permute(x, order), offset));
}

Tensor diag(const Tensor& x, int64_t offset) {
  OpScope scope("diag");
  if (x.dim() == 2) return scope.finish(diagonal(x, offset));
  if (x.dim() != 1) ops::fail("needs a 1-D or 2-D tensor, got " + shape_str(x.shape()));
  const int64_t n = x.shape()[0], k = offset < 0 ? -offset : offset, m = n + k;
  // x_i goes to flat position (row * m + col) of an m x m matrix: i (m + 1) + the offset's start. Each
  // element followed by m zeros puts x_i at i (m + 1).
  Tensor spaced = reshape(pad(unsqueeze(x, 1), {0, m}), {-1});
  const int64_t start = offset >= 0 ? k : k * m;
  Tensor flat = pad(spaced, {start, 0});
  const int64_t length = n * (m + 1) + start;
  flat = length >= m * m ? slice(flat, 0, 0, m * m) : pad(flat, {0, m * m - length});
  return scope.finish(reshape(flat, {m, m}));
}

Tensor trace(const Tensor& x) {
  OpScope scope("trace");
  if (x.dim() != 2) ops::fail("needs a 2-D tensor, got " + shape_str(x.shape()));
  return scope.finish(sum(diagonal(x)));
}

Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  OpScope scope("unfold");
  Tensor in = x.dim() == 0 ? reshape(x, {1}) : x;
  const int64_t d = ops::normalize_dim(dim, in.dim()), n = in.shape()[d];
  if (size < 0 || size > n)
    ops::fail("size " + std::to_string(size) + " does not fit dim " + std::to_string(dim) + " of size " +
              std::to_string(n));
  if (step < 1) ops::fail("step must be >= 1, got " + std::to_string(step));
  const int64_t count = (n - size) / step + 1;
  std::vector<Tensor> columns;  // element j of every window
  for (int64_t j = 0; j < size; ++j) columns.push_back(slice(in, d, j, j + (count - 1) * step + 1, step));
  if (columns.empty()) {
    Shape out = in.shape();
    out[d] = count;
    out.push_back(0);
    return scope.finish(zeros(out, x.dtype(), x.device()));
  }
  return scope.finish(stack(columns, -1));
}

// A new value, not a new handle to x's buffer, so that a compiled step returning a clone of a parameter
// still replays.
Tensor clone(const Tensor& x) {
  OpScope scope("clone");
  return scope.finish(x.dtype() == DType::bool_ ? logical_and(x, x) : mul(x, 1));
}

}  // namespace xlite
