#pragma once
// What makes a tensor a view: the tensor whose storage it shares (its base) and how its value follows from
// the base's. The graph stays pure (functionalisation, as PyTorch/XLA does it): a view holds a value of its
// own, made again from the base's when the base has changed since, and an in-place op on a view computes the
// base's new value and rebinds the base.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "xlite/dtype.h"
#include "xlite/tensor.h"

namespace xlite {

class TensorImpl;

// How a view's elements sit in its base's storage, as PyTorch would lay them out: the base is contiguous,
// and each view op changes the sizes and strides. It decides what PyTorch decides with
// it: whether view() can reinterpret the shape, whether reshape() copies, whether contiguous() copies, and
// that a view with overlapping elements (expand) cannot be written.
struct ViewLayout {
  Shape sizes;
  std::vector<int64_t> strides;
};

// One view op: its value from its source's, and its source's value with the view's elements replaced.
struct ViewStep {
  std::function<Tensor(const Tensor& source)> apply;
  std::function<Tensor(const Tensor& source, const Tensor& value)> write_back;
};

// The view ops from the base to the view, in order. Shared by a view and the views made from it.
struct ViewChain {
  std::vector<ViewStep> steps;
  ViewLayout layout;
  bool detached = false;  // a detach() on the way: no gradient flows from the view to the base
};

struct ViewLink {
  std::shared_ptr<TensorImpl> base;  // never itself a view
  std::shared_ptr<const ViewChain> chain;
  uint64_t base_version = 0;  // the base's version that the view's value reflects
  bool grad_flows = false;    // made with grad mode on from a base that requires grad
};

}  // namespace xlite
