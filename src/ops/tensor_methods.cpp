// Tensor methods: in-place ops and method forms of ops.
#include "tensor/grad_mode.h"
#include "ops/op_support.h"
#include "ops/views.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
// The value an in-place op writes: of this tensor's shape and dtype, or an error.
Tensor in_place_value(const Tensor& self, const Tensor& result) {
  const TensorImpl& impl = ops::impl_of(self);
  if (result.shape() != impl.shape())
    ops::fail("the result shape " + shape_str(result.shape()) + " does not match the tensor's shape " +
              shape_str(impl.shape()));
  if (!ops::can_cast(result.dtype(), impl.dtype()))
    ops::fail("result type " + std::string(dtype_name(result.dtype())) + " cannot be written to a " +
              std::string(dtype_name(impl.dtype())) + " tensor");
  return ops::convert_to(result, impl.dtype());
}
}  // namespace

Tensor& Tensor::assign_(const Tensor& value) {
  if (impl_->is_grad_leaf() && autograd::is_grad_enabled())
    ops::fail(
        "a leaf tensor that requires grad cannot be updated in place while grad mode is on (its gradient "
        "would be lost); update it inside a NoGradGuard, as optimizers do");
  if (impl_->view()) {
    ops::write_through_view(*this, value);
    return *this;
  }
  // A value that already ran (eager mode) is bound as data: nothing is left pending.
  if (value.impl()->is_pending())
    impl_->set_pending(value.impl()->pending());
  else
    impl_->assign_data(value.impl()->data(), value.impl()->requires_grad() ? value.impl()->autograd_node() : nullptr);
  return *this;
}

#define XLITE_IN_PLACE(method, fn)                                        \
  Tensor& Tensor::method(const Tensor& other) {                           \
    ops::OpScope scope(#method);                                          \
    ops::InPlaceScope target(&ops::impl_of(*this));                       \
    Tensor value = scope.finish(in_place_value(*this, fn(*this, other))); \
    return assign_(value);                                                \
  }                                                                       \
  Tensor& Tensor::method(Scalar other) {                                  \
    ops::OpScope scope(#method);                                          \
    ops::InPlaceScope target(&ops::impl_of(*this));                       \
    Tensor value = scope.finish(in_place_value(*this, fn(*this, other))); \
    return assign_(value);                                                \
  }
XLITE_IN_PLACE(add_, add)
XLITE_IN_PLACE(sub_, sub)
XLITE_IN_PLACE(mul_, mul)
XLITE_IN_PLACE(div_, div)
#undef XLITE_IN_PLACE

Tensor& Tensor::copy_(const Tensor& src) {
  ops::OpScope scope("copy_");
  const TensorImpl& impl = ops::impl_of(*this);
  // Like PyTorch's copy_, from any device: the value moves to this tensor's.
  Tensor value =
      ops::convert_to(ops::broadcast_to_shape(ops::transfer_to(src, impl.device()), impl.shape()), impl.dtype());
  return assign_(scope.finish(ops::fresh_handle(value)));
}

Tensor& Tensor::zero_() { return fill_(0); }

Tensor& Tensor::fill_(Scalar value) {
  ops::OpScope scope("fill_");
  const TensorImpl& impl = ops::impl_of(*this);
  return assign_(scope.finish(full(impl.shape(), value, impl.dtype(), impl.device())));
}

void Tensor::set_data(const Tensor& value) {
  ops::OpScope scope("set_data");
  if (ops::impl_of(*this).view()) ops::fail("cannot replace the value of a view (replace its base's)");
  impl_->replace_value(scope.finish(value.detach()));
}

bool Tensor::is_contiguous() const {
  ops::OpScope scope("is_contiguous");
  return ops::is_contiguous(ops::layout_of(*this));
}

Tensor Tensor::contiguous() const {
  ops::OpScope scope("contiguous");
  if (ops::is_contiguous(ops::layout_of(*this))) return *this;
  return scope.finish(ops::fresh_handle(*this));
}

Tensor Tensor::to(DType dtype) const {
  ops::OpScope scope("to");
  return scope.finish(ops::fresh_handle(ops::convert_to(*this, dtype)));
}

Tensor Tensor::to(Device device) const {
  ops::OpScope scope("to");
  return scope.finish(ops::fresh_handle(ops::transfer_to(*this, ops::existing_device(device))));
}

Tensor Tensor::sum() const { return xlite::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return xlite::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return xlite::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const { return xlite::mean(*this, dims, keepdim); }
Tensor Tensor::prod() const { return xlite::prod(*this); }
Tensor Tensor::max() const { return xlite::max(*this); }
Tensor Tensor::max(const std::vector<int64_t>& dims, bool keepdim) const { return xlite::max(*this, dims, keepdim); }
Tensor Tensor::min() const { return xlite::min(*this); }
Tensor Tensor::min(const std::vector<int64_t>& dims, bool keepdim) const { return xlite::min(*this, dims, keepdim); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return xlite::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const { return xlite::argmin(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim) const { return xlite::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return xlite::log_softmax(*this, dim); }
Tensor Tensor::exp() const { return xlite::exp(*this); }
Tensor Tensor::log() const { return xlite::log(*this); }
Tensor Tensor::sqrt() const { return xlite::sqrt(*this); }
Tensor Tensor::abs() const { return xlite::abs(*this); }
Tensor Tensor::neg() const { return xlite::neg(*this); }
Tensor Tensor::sin() const { return xlite::sin(*this); }
Tensor Tensor::cos() const { return xlite::cos(*this); }
Tensor Tensor::tanh() const { return xlite::tanh(*this); }
Tensor Tensor::sigmoid() const { return xlite::sigmoid(*this); }
Tensor Tensor::relu() const { return xlite::relu(*this); }
Tensor Tensor::square() const { return xlite::square(*this); }
Tensor Tensor::pow(Scalar exponent) const { return xlite::pow(*this, exponent); }
Tensor Tensor::reshape(const Shape& shape) const { return xlite::reshape(*this, shape); }
Tensor Tensor::view(const Shape& shape) const { return xlite::view(*this, shape); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return xlite::flatten(*this, start_dim, end_dim); }
Tensor Tensor::squeeze() const { return xlite::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return xlite::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return xlite::unsqueeze(*this, dim); }
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return xlite::transpose(*this, dim0, dim1); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return xlite::permute(*this, dims); }
Tensor Tensor::expand(const Shape& shape) const { return xlite::expand(*this, shape); }
Tensor Tensor::slice(int64_t dim, int64_t start, int64_t stop, int64_t step) const {
  return xlite::slice(*this, dim, start, stop, step);
}
Tensor Tensor::matmul(const Tensor& other) const { return xlite::matmul(*this, other); }

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return xlite::narrow(*this, dim, start, length);
}
Tensor Tensor::t() const {
  ops::OpScope scope("t");
  if (dim() > 2) ops::fail("expects a tensor of rank <= 2, got " + shape_str(shape()));
  ops::ViewsInside views;
  return scope.finish(dim() < 2 ? ops::alias_view(*this, false) : xlite::transpose(*this, 0, 1));
}

}  // namespace xlite
