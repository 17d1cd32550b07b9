// The Tensor handle's own accessors; ops and value reads live with their layers.
#include "tensor/tensor_impl.h"
#include "xlite/error.h"
#include "xlite/tensor.h"

namespace xlite {
namespace {
const TensorImpl& checked(const std::shared_ptr<TensorImpl>& impl) {
  if (!impl) throw Error("[tensor] the tensor is undefined");
  return *impl;
}
}  // namespace

Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

const Shape& Tensor::shape() const { return checked(impl_).shape(); }
DType Tensor::dtype() const { return checked(impl_).dtype(); }
Device Tensor::device() const { return checked(impl_).device(); }
int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::numel() const { return xlite::numel(shape()); }
bool Tensor::is_pending() const { return checked(impl_).is_pending(); }

int64_t Tensor::size(int64_t d) const {
  int64_t rank = dim();
  if (d < -rank || d >= rank)
    throw Error("[size] dim " + std::to_string(d) + " is out of range for a tensor of rank " + std::to_string(rank));
  return shape()[d < 0 ? d + rank : d];
}

}  // namespace xlite
