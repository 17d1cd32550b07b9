#pragma once
// The Tensor handle. A tensor holds either device data or a pending value (an IR node that has not run).
// Copies of a handle are aliases: an in-place op rebinds the shared value, and every alias sees it.
// View ops (view, reshape where strides allow, slice, select, narrow, transpose, permute, expand, squeeze,
// unsqueeze, flatten, detach, basic indexing) return views, as PyTorch's do: an in-place op on a view updates
// its base and every other view of it, and an update of the base is seen through its views.
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "xlite/device.h"
#include "xlite/dtype.h"
#include "xlite/scalar.h"

namespace xlite {

class TensorIndex;

class TensorImpl;  // internal

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; every op on it raises xlite::Error
  explicit Tensor(std::shared_ptr<TensorImpl> impl);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  DType dtype() const;
  Device device() const;
  int64_t dim() const;
  int64_t numel() const;
  int64_t size(int64_t dim) const;  // negative dims count from the end
  bool is_pending() const;          // true while the value is IR that has not run

  // Reading a value syncs what this tensor needs (and nothing else pending). Values convert to T.
  template <class T>
  T item() const;
  template <class T>
  std::vector<T> to_vector() const;

  Tensor to(DType dtype) const;
  // The value on another device (a transfer, lazy like any op; its gradient flows back to this device).
  Tensor to(Device device) const;

  // Autograd. requires_grad_ marks a leaf whose gradient backward() accumulates into grad().
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  // Accumulates d(this)/d(leaf) * gradient into every leaf's grad(); gradient defaults to 1 for a scalar.
  void backward(const Tensor& gradient = Tensor()) const;
  // The accumulated gradient (undefined before the first backward). It is a tensor like any other:
  // zero_() and other in-place ops update it.
  Tensor grad() const;
  // Makes grad() undefined, as PyTorch's `p.grad = None`: the next backward writes a new gradient instead of
  // adding to the old one.
  void reset_grad();
  // The same value, cut off from the graph: no gradient flows through it. A view: it shares storage.
  Tensor detach() const;
  // Replaces the value with one of any shape, dtype and device, outside autograd (PyTorch's `x.data = value`): every
  // handle to this tensor, such as a module's field, sees it. A gradient of another type is dropped.
  void set_data(const Tensor& value);

  // In-place ops: compute lazily and rebind this tensor (and its aliases) to the result.
  // The result must be castable to this tensor's dtype (no float -> int, no number -> bool).
  Tensor& add_(const Tensor& other);
  Tensor& add_(Scalar other);
  Tensor& sub_(const Tensor& other);
  Tensor& sub_(Scalar other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& copy_(const Tensor& src);  // src broadcasts to this shape and converts to this dtype
  Tensor& zero_();
  Tensor& fill_(Scalar value);
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(Scalar o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(Scalar o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(Scalar o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(Scalar o) { return div_(o); }

  // Method forms of common ops (see ops.h for the meaning of each).
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  // x.sum(1) and x.mean(1, true): one dim (a template, so that x.sum({}) still means every dim).
  template <std::integral I>
  Tensor sum(I dim, bool keepdim = false) const {
    return sum(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  template <std::integral I>
  Tensor mean(I dim, bool keepdim = false) const {
    return mean(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor prod() const;
  Tensor max() const;
  Tensor max(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor min() const;
  Tensor min(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor square() const;
  Tensor pow(Scalar exponent) const;
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // transpose of a 2-D tensor
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor expand(const Shape& shape) const;
  Tensor slice(int64_t dim, int64_t start = 0, int64_t stop = INT64_MAX, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor matmul(const Tensor& other) const;
  Tensor select(int64_t dim, int64_t index) const;
  // Whether the elements sit in storage in row-major order, as PyTorch's strides would say (a transposed or
  // strided view's do not); contiguous() is this tensor when they do and a copy when they do not.
  bool is_contiguous() const;
  Tensor contiguous() const;

  // Indexing (xlite/indexing.h): x.index({Slice(1, 3), 2, None}) reads, index_put_ writes in place.
  Tensor index(const std::vector<TensorIndex>& indices) const;
  Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate = false);
  Tensor& index_put_(const std::vector<TensorIndex>& indices, Scalar value);
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha = 1);
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& src);

  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  Tensor& assign_(const Tensor& value);
  std::shared_ptr<TensorImpl> impl_;
};

// Prints values (a value read, so it syncs), dtype and device.
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator&(const Tensor& a, const Tensor& b);  // logical_and
Tensor operator|(const Tensor& a, const Tensor& b);  // logical_or
Tensor operator^(const Tensor& a, const Tensor& b);  // logical_xor
Tensor operator!(const Tensor& a);                   // logical_not

}  // namespace xlite
