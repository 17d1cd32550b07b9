#pragma once
// What every public op needs: the op scope (error names, tracing time, eager execution), turning
// tensors and scalars into IR operands of one dtype and shape, and argument checks.
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tensor/tensor_impl.h"
#include "ir/node.h"
#include "xlite/error.h"
#include "xlite/ops.h"
#include "xlite/tensor.h"

namespace xlite::ops {

// Wraps the body of a public op. The outermost scope names the op in error messages, reports the time
// spent building IR, and in eager mode runs the result at once.
class OpScope {
 public:
  explicit OpScope(const char* name);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
  Tensor finish(Tensor result);
  std::vector<Tensor> finish(std::vector<Tensor> results);
  ValuesIndices finish(ValuesIndices results);  // both run together in eager mode

 private:
  bool outermost_;
  long long start_ns_;
};

// While an in-place op builds the value it writes, the tensor it updates. A node that saves that tensor
// for its gradient reads the value from before the update (which the IR keeps), so it records the
// version the tensor will have after it.
class InPlaceScope {
 public:
  explicit InPlaceScope(const TensorImpl* target);
  ~InPlaceScope();
  InPlaceScope(const InPlaceScope&) = delete;
  InPlaceScope& operator=(const InPlaceScope&) = delete;

 private:
  const TensorImpl* previous_;
};

// The name of the public op being built on this thread ("" outside any op).
const char* current_op();
// True inside the op the user called, and not inside the ops it calls: only there do view ops make views,
// so an op's result never keeps a temporary of its own alive as a base.
bool in_user_call();
// Throws xlite::Error("[op] message").
[[noreturn]] void fail(const std::string& message);

const TensorImpl& impl_of(const Tensor& t);  // fails on an undefined tensor
ir::NodePtr node_of(const Tensor& t);
Tensor wrap(ir::NodePtr node);
// The same value under a new handle, so that an in-place op on the result cannot touch the input.
Tensor fresh_handle(const Tensor& t);
// The result is on the operands' device; an op without operands (a leaf) and a transfer take `device`.
Tensor make(ir::OpId op, std::span<const Tensor> operands, ir::Attrs attrs = {}, std::optional<Device> device = {});
// The same for a list written at the call: no vector is built (every eager op calls this).
inline Tensor make(ir::OpId op, std::initializer_list<Tensor> operands, ir::Attrs attrs = {},
                   std::optional<Device> device = {}) {
  return make(op, std::span<const Tensor>(operands.begin(), operands.size()), std::move(attrs), device);
}

// The device, or an error naming the current op when there is no such device.
Device existing_device(Device device);

// The tensor's value on `device`: the tensor itself when it is there already, else a transfer.
Tensor transfer_to(const Tensor& t, Device device);

// iota: along `dim` of `shape`, each element its index on that dim.
Tensor iota_along(const Shape& shape, int64_t dim, DType dtype, Device device);

// A scalar as a 0-dim node of the dtype on the device: 0 and 1 are baked in as constants, any other value is
// uploaded as a parameter so that a new value does not recompile.
ir::NodePtr scalar_node(Scalar value, DType dtype, Device device);
Tensor scalar_tensor(Scalar value, DType dtype, Device device);

// dims checks (negative dims count from the end).
int64_t normalize_dim(int64_t dim, int64_t rank);
std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t rank);  // sorted, unique

// Broadcasting and type conversion.
Shape broadcast_shapes(const Shape& a, const Shape& b);
Tensor convert_to(const Tensor& t, DType dtype);
Tensor broadcast_to_shape(const Tensor& t, const Shape& shape);

// PyTorch's type promotion: dimensioned tensors outrank 0-dim tensors, which outrank host scalars; a
// lower rank only matters when it is of a higher category (bool < integer < floating).
DType promote_types(DType a, DType b);
DType result_type(std::span<const Tensor* const> tensors, std::span<const Scalar> scalars);
DType default_float();
bool can_cast(DType from, DType to);  // what an in-place op may write back

}  // namespace xlite::ops
