#pragma once
// Indexing with PyTorch's C++ forms: x.index({Slice(1, 3), 2, None, Ellipsis, index_tensor, bool_mask}) reads,
// x.index_put_({...}, values) writes, with NumPy's rules (basic indices select, integer and bool tensors
// index elementwise and broadcast together; their result dims go where the first of them was when they are
// adjacent, else first). Results are values, not views: writing into a result does not change x.
// A bool mask (a tensor) is read on the host to find its positions (a sync); everything else stays lazy.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xlite/tensor.h"

namespace xlite {
namespace indexing {
struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
struct NoneIndexType {};
inline constexpr NoneIndexType None{};

// A bound of a slice: a position, or None (the start or the end of the dim).
struct SliceBound {
  SliceBound() = default;
  SliceBound(int v) : value(v) {}
  SliceBound(long v) : value(v) {}
  SliceBound(long long v) : value(v) {}
  SliceBound(NoneIndexType) {}
  SliceBound(std::optional<int64_t> v) : value(v) {}
  std::optional<int64_t> value;
};

// start:stop:step, like Python's (step >= 1).
struct Slice {
  Slice(SliceBound start = {}, SliceBound stop = {}, int64_t step = 1)
      : start(start.value), stop(stop.value), step(step) {}
  std::optional<int64_t> start, stop;
  int64_t step;
};
}  // namespace indexing

class TensorIndex {
 public:
  enum class Kind { integer, slice, ellipsis, none, boolean, tensor };
  TensorIndex(int i) : kind_(Kind::integer), integer_(i) {}
  TensorIndex(long i) : kind_(Kind::integer), integer_(i) {}
  TensorIndex(long long i) : kind_(Kind::integer), integer_(i) {}
  TensorIndex(bool b) : kind_(Kind::boolean), integer_(b) {}
  TensorIndex(indexing::Slice s) : kind_(Kind::slice), slice_(s) {}
  TensorIndex(indexing::EllipsisIndexType) : kind_(Kind::ellipsis) {}
  TensorIndex(indexing::NoneIndexType) : kind_(Kind::none) {}
  TensorIndex(Tensor t) : kind_(Kind::tensor), tensor_(std::move(t)) {}

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }  // the int, or the bool as 0 or 1
  const indexing::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  indexing::Slice slice_;
  Tensor tensor_;
};

// x[indices] and x[indices] = values (accumulate: +=, summing at repeated positions).
Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices);
Tensor index_put(const Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& values,
                 bool accumulate = false);

// The scatter family, as values (each has an in-place Tensor method too).
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);         // value where mask (broadcast)
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);  // value: a 0-dim tensor
// source's elements in order at the positions where mask holds (without reading the mask on the host).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// x with src added (index_add, times alpha) or copied (index_copy) at the entries of the 1-D index along dim.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha = 1);
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// x with src written over x[start:end:step] along dim (slice_scatter) or over x.select(dim, index).
Tensor slice_scatter(const Tensor& x, const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index);
Tensor select(const Tensor& x, int64_t dim, int64_t index);  // x[..., index, ...]: dim removed

}  // namespace xlite
