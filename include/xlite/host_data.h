#pragma once
// Handing tensor memory to other libraries and taking theirs, without copies where the memory allows:
// what NumPy's array protocol and DLPack are built on.
#include <cstdint>
#include <functional>
#include <memory>

#include "xlite/tensor.h"

namespace xlite {

// A tensor's value in host memory, laid out densely in row-major order.
struct HostData {
  std::shared_ptr<const void> owner;  // keeps `data` alive
  const void* data = nullptr;
  bool shared = false;  // true: the tensor's own buffer, which other tensors may share; false: a copy
};
// Computes the tensor first if it is pending (a value read, like item()). On a CPU device the memory is the
// tensor's own buffer: buffers are immutable, so a reader must not write it.
HostData host_data(const Tensor& tensor);

// A tensor over `bytes` of memory that another library owns, laid out densely in row-major order; release
// runs once no tensor or program reads it any more. xlite never writes the memory: an in-place op rebinds
// the tensor to a new buffer, as JAX does. The owner must not change it while xlite may read it. On a device
// the host cannot address, the memory is copied (and released at once). release runs exactly once, also when
// from_blob raises (a bad shape or pointer).
Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void()> release,
                 Device device = xlite::device());

// A copy of dense row-major element bytes of any dtype (f16 and bf16 included).
Tensor from_bytes(const void* data, const Shape& shape, DType dtype, Device device = xlite::device());

}  // namespace xlite
