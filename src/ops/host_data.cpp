// Tensor memory shared with other libraries (NumPy, DLPack): a host view of a value, and tensors over
// memory that someone else owns.
#include "xlite/host_data.h"

#include <cstring>
#include <span>
#include <vector>

#include "core/step_recording.h"
#include "ir/sizes.h"
#include "lazy/sync.h"
#include "ops/op_support.h"
#include "runtime/transfer.h"
#include "tensor/tensor_impl.h"
#include "xlite/error.h"
#include "xlite/metrics.h"

namespace xlite {
namespace {

size_t checked_bytes(const Shape& shape, DType dtype) {
  ir::require_addressable(ops::current_op(), shape, dtype);
  return static_cast<size_t>(numel(shape)) * static_cast<size_t>(dtype_size(dtype));
}

Tensor holding(BufferPtr buffer, const Shape& shape, DType dtype, Device device) {
  metrics::increment_counter("TransferToDevice");
  return Tensor(std::make_shared<TensorImpl>(std::move(buffer), shape, dtype, device));
}

}  // namespace

HostData host_data(const Tensor& tensor) {
  if (!tensor.defined()) throw Error("[host_data] the tensor is undefined");
  TensorImpl* impl = tensor.impl().get();
  impl->refresh_view();
  // A trace that hands its values to another library cannot be replayed without running that code.
  note_mid_trace_run("host_data", "read a value on the host");
  if (impl->is_pending()) lazy::sync_tensors({&impl, 1}, lazy::SyncCause::value_read);
  metrics::increment_counter("TransferFromDevice");
  BufferPtr buffer = impl->data();
  const size_t bytes = static_cast<size_t>(tensor.numel()) * static_cast<size_t>(dtype_size(tensor.dtype()));
  if (const std::byte* address = runtime::host_address(*buffer)) return {buffer, address, true};
  auto copy = std::make_shared<std::vector<std::byte>>(bytes);
  runtime::to_host(*buffer, *copy);
  return {copy, copy->data(), false};
}

Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void()> release, Device device) {
  ops::OpScope scope("from_blob");
  BufferPtr borrowed;
  try {
    const size_t bytes = checked_bytes(shape, dtype);
    device = ops::existing_device(device);
    if (data == nullptr && bytes > 0) ops::fail("the data pointer is null for " + shape_str(shape));
    if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dtype_size(dtype)) != 0)
      ops::fail("the data of " + std::string(dtype_name(dtype)) + " elements is not aligned to " +
                std::to_string(dtype_size(dtype)) + " bytes");
    borrowed = runtime::borrow_host_memory(data, bytes, device, release);
    if (!borrowed) {
      Tensor copy = from_bytes(data, shape, dtype, device);
      if (release) release();
      return copy;
    }
  } catch (...) {
    if (release) release();  // the memory was refused: the owner gets it back now
    throw;
  }
  // From here the buffer owns the release: it runs when the buffer goes, also if this throws.
  return holding(std::move(borrowed), shape, dtype, device);
}

Tensor from_bytes(const void* data, const Shape& shape, DType dtype, Device device) {
  ops::OpScope scope("from_bytes");
  const size_t bytes = checked_bytes(shape, dtype);
  device = ops::existing_device(device);
  if (data == nullptr && bytes > 0) ops::fail("the data pointer is null for " + shape_str(shape));
  return holding(runtime::from_host(std::span(static_cast<const std::byte*>(data), bytes), device), shape, dtype,
                 device);
}

}  // namespace xlite
