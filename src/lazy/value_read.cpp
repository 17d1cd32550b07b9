// Reading values back to the host: item(), to_vector() and printing. Each syncs what the tensor needs.
#include <cmath>
#include <span>
#include <vector>

#include "core/elements.h"
#include "core/step_recording.h"
#include "lazy/sync.h"
#include "lazy/tensor_print.h"
#include "runtime/transfer.h"
#include "xlite/error.h"
#include "xlite/metrics.h"
#include "xlite/print.h"
#include "xlite/tensor.h"

namespace xlite {
namespace {
const Buffer& materialized(const Tensor& t, const char* op) {
  if (!t.defined()) throw Error(std::string("[") + op + "] the tensor is undefined");
  TensorImpl* impl = t.impl().get();
  impl->refresh_view();
  // Also for data that is already there: a trace that branches on it would replay the wrong branch.
  note_mid_trace_run(op, "read a value on the host");
  if (impl->is_pending()) lazy::sync_tensors({&impl, 1}, lazy::SyncCause::value_read);
  metrics::increment_counter("TransferFromDevice");
  return *impl->data();
}

// The value's bytes, copied to the host.
struct HostCopy {
  explicit HostCopy(const Buffer& b, size_t bytes) : bytes_(bytes) { runtime::to_host(b, bytes_); }
  const void* data() const { return bytes_.data(); }

 private:
  std::vector<std::byte> bytes_;
};

double element_f(const HostCopy& b, DType dtype, int64_t i) { return read_element_f64(b.data(), dtype, i); }

int64_t element_i(const HostCopy& b, DType dtype, int64_t i) {
  if (!is_floating(dtype)) return read_integer_element(b.data(), dtype, i);
  double v = element_f(b, dtype, i);
  return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : 0;
}

template <class T>
T element_as(const HostCopy& b, DType dtype, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return is_floating(dtype) ? element_f(b, dtype, i) != 0 : element_i(b, dtype, i) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(element_f(b, dtype, i));
  } else {
    return static_cast<T>(element_i(b, dtype, i));
  }
}

}  // namespace

template <class T>
T Tensor::item() const {
  const Buffer& b = materialized(*this, "item");
  if (numel() != 1) throw Error("[item] needs a tensor of one element, got shape " + shape_str(shape()));
  return element_as<T>(HostCopy(b, dtype_size(dtype())), dtype(), 0);
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  const Buffer& b = materialized(*this, "to_vector");
  std::vector<T> out(numel());
  if constexpr (!std::is_same_v<T, bool>) {
    if (dtype_of<T>::value == dtype()) {
      runtime::to_host(b, std::as_writable_bytes(std::span(out)));
      return out;
    }
  }
  const HostCopy host(b, static_cast<size_t>(numel() * dtype_size(dtype())));
  for (int64_t i = 0; i < numel(); ++i) out[i] = element_as<T>(host, dtype(), i);
  return out;
}

#define XLITE_INSTANTIATE_READS(T)    \
  template T Tensor::item<T>() const; \
  template std::vector<T> Tensor::to_vector<T>() const;
XLITE_INSTANTIATE_READS(float)
XLITE_INSTANTIATE_READS(double)
XLITE_INSTANTIATE_READS(int32_t)
XLITE_INSTANTIATE_READS(int64_t)
XLITE_INSTANTIATE_READS(uint8_t)
XLITE_INSTANTIATE_READS(bool)
#undef XLITE_INSTANTIATE_READS

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  const HostCopy b(materialized(t, "print"), static_cast<size_t>(t.numel() * dtype_size(t.dtype())));
  HostValues values;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_floating(t.dtype()))
      values.floats.push_back(element_f(b, t.dtype(), i));
    else
      values.integers.push_back(element_i(b, t.dtype(), i));
  }
  return format_tensor(values, t.shape(), t.dtype(), t.device());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace xlite
