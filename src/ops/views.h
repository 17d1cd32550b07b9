#pragma once
// View ops share their input's storage (tensor/view_link.h). These make a result a view of its input's base,
// compute the layouts that say what PyTorch would do with strides, and write an in-place op's value through
// a view into its base.
#include <optional>
#include <vector>

#include "tensor/view_link.h"
#include "xlite/tensor.h"

namespace xlite::ops {

// View ops make views only in the op the user called (op_support.h: in_user_call) and inside this scope,
// where an op composes the view it returns from other view ops (index from slices).
class ViewsInside {
 public:
  ViewsInside();
  ~ViewsInside();
  ViewsInside(const ViewsInside&) = delete;
  ViewsInside& operator=(const ViewsInside&) = delete;

 private:
  bool before_;
};

// How x's elements sit in storage: its view layout, or contiguous when it is no view.
ViewLayout layout_of(const Tensor& x);
bool is_contiguous(const ViewLayout& layout);
// Strides that read `from`'s elements in order as `shape`, or nothing when no strides can (PyTorch's view
// rule: each run of merged dims must be contiguous in storage).
std::optional<std::vector<int64_t>> view_strides(const ViewLayout& from, const Shape& shape);

// The view ops, on values only: x's value as `shape` (same count), x[start:stop:step] along dim, x's dims
// permuted, x broadcast to `shape`, and x itself (detached or not). Each returns a view of x's base.
Tensor reshape_view(const Tensor& x, const Shape& shape, std::vector<int64_t> strides);
Tensor slice_view(const Tensor& x, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor permute_view(const Tensor& x, const std::vector<int64_t>& perm);
Tensor expand_view(const Tensor& x, const Shape& shape);
Tensor alias_view(const Tensor& x, bool detach);

// The value ops behind the views, with no view bookkeeping: for a view's chain to run again, and for values
// that nothing else can see.
Tensor reshaped(const Tensor& x, const Shape& shape);
Tensor sliced(const Tensor& x, int64_t dim, int64_t start, int64_t stop, int64_t step);

// For Tensor's in-place ops on a view: the base takes value in the view's place, and the view holds value.
void write_through_view(const Tensor& view, const Tensor& value);

}  // namespace xlite::ops
