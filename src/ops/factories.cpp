// Creating tensors: uploads of host data, and lazy constants, ranges and random draws.
#include <atomic>
#include <cmath>
#include <limits>
#include <cstring>
#include <mutex>

#include "core/philox.h"
#include "core/random_state.h"
#include "core/step_recording.h"
#include "tensor/tensor_impl.h"
#include "ir/op_attrs.h"
#include "ir/sizes.h"
#include "ops/op_support.h"
#include "runtime/transfer.h"
#include "xlite/factories.h"
#include "xlite/metrics.h"
#include "xlite/ops.h"

namespace xlite {
namespace {
using ir::AttrKey;
using ir::OpId;
using ops::OpScope;

void check_shape(const Shape& shape, DType dtype) { ir::require_addressable(ops::current_op(), shape, dtype); }

// Whether full() can fill a dtype with the value, as PyTorch decides: any number makes a float or a bool;
// an integer dtype takes an integral value in its range (converting another is undefined behaviour), and
// negative integers wrap into u8.
bool fills(Scalar value, DType dtype) {
  if (is_floating(dtype) || dtype == DType::bool_) return true;
  if (value.is_floating()) return ir::holds_value(dtype, value.to_double());
  const int64_t v = value.to_int();
  if (dtype == DType::i32) return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  if (dtype == DType::u8) return v >= -255 && v <= 255;
  return true;
}

Tensor upload(const void* data, size_t bytes, const Shape& shape, DType dtype, Device device) {
  BufferPtr buffer =
      runtime::from_host(std::span(static_cast<const std::byte*>(data), bytes), ops::existing_device(device));
  metrics::increment_counter("TransferToDevice");
  return Tensor(std::make_shared<TensorImpl>(std::move(buffer), shape, dtype, device));
}

template <class T>
Tensor tensor_from(const std::vector<T>& data, const Shape& shape, Device device) {
  OpScope scope("tensor");
  check_shape(shape, dtype_of<T>::value);
  if (static_cast<int64_t>(data.size()) != numel(shape))
    ops::fail(std::to_string(data.size()) + " values do not fill shape " + shape_str(shape));
  return upload(data.data(), data.size() * sizeof(T), shape, dtype_of<T>::value, device);
}

Tensor random(const char* name, OpId op, const Shape& shape, DType dtype, Device device) {
  OpScope scope(name);
  if (!is_floating(dtype)) ops::fail("random values need a floating dtype, got " + std::string(dtype_name(dtype)));
  DType draw = dtype == DType::f64 ? DType::f64 : DType::f32;
  check_shape(shape, draw);
  const uint64_t blocks =
      op == OpId::rng_normal ? philox::normal_blocks(numel(shape)) : philox::uniform_blocks(numel(shape));
  random_state::Position position = random_state::take(blocks);
  auto scalar_i64 = [&](uint64_t v) {
    int64_t value = static_cast<int64_t>(v);
    return upload(&value, sizeof value, {}, DType::i64, device);
  };
  Tensor seed = scalar_i64(position.seed), offset = scalar_i64(position.offset);
  if (StepRecording* recording = StepRecording::active())
    recording->draws.push_back(
        {seed.impl()->data().get(), offset.impl()->data().get(), position.offset - recording->entry_rng_offset});
  Tensor r = ops::make(op, {seed, offset}, ir::RandomAttrs{.shape = shape, .dtype = draw}.to_attrs());
  return scope.finish(ops::convert_to(r, dtype));
}
}  // namespace

namespace detail {
Tensor literal_tensor(double value, Device device) {
  OpScope scope("tensor");
  if (get_default_dtype() == DType::f64) return upload(&value, sizeof value, {}, DType::f64, device);
  const float narrow = static_cast<float>(value);
  return upload(&narrow, sizeof narrow, {}, DType::f32, device);
}

Tensor literal_tensor(int64_t value, Device device) {
  OpScope scope("tensor");
  return upload(&value, sizeof value, {}, DType::i64, device);
}

Tensor literal_tensor(bool value, Device device) {
  OpScope scope("tensor");
  uint8_t byte = value;
  return upload(&byte, 1, {}, DType::bool_, device);
}

template <class T>
Tensor data_tensor(const std::vector<T>& data, const Shape& shape, Device device) {
  return tensor_from(data, shape, device);
}
template <>
Tensor data_tensor<bool>(const std::vector<bool>& data, const Shape& shape, Device device) {
  std::vector<uint8_t> bytes(data.begin(), data.end());
  Tensor t = tensor_from(bytes, shape, device);
  return Tensor(std::make_shared<TensorImpl>(t.impl()->data(), shape, DType::bool_, device));
}
template Tensor data_tensor<float>(const std::vector<float>&, const Shape&, Device);
template Tensor data_tensor<double>(const std::vector<double>&, const Shape&, Device);
template Tensor data_tensor<int32_t>(const std::vector<int32_t>&, const Shape&, Device);
template Tensor data_tensor<int64_t>(const std::vector<int64_t>&, const Shape&, Device);
template Tensor data_tensor<uint8_t>(const std::vector<uint8_t>&, const Shape&, Device);
}  // namespace detail

Tensor full(const Shape& shape, Scalar value, DType dtype, Device device) {
  OpScope scope("full");
  check_shape(shape, dtype);
  if (!fills(value, dtype))
    ops::fail("value " + (value.is_floating() ? ir::number_text(value.to_double()) : std::to_string(value.to_int())) +
              " cannot be represented in " + std::string(dtype_name(dtype)));
  return scope.finish(ops::broadcast_to_shape(ops::scalar_tensor(value, dtype, device), shape));
}
Tensor zeros(const Shape& shape, DType dtype, Device device) {
  OpScope scope("zeros");
  return scope.finish(full(shape, 0, dtype, device));
}
Tensor ones(const Shape& shape, DType dtype, Device device) {
  OpScope scope("ones");
  return scope.finish(full(shape, 1, dtype, device));
}
Tensor zeros_like(const Tensor& x) { return zeros(ops::impl_of(x).shape(), x.dtype(), x.device()); }
Tensor ones_like(const Tensor& x) { return ones(ops::impl_of(x).shape(), x.dtype(), x.device()); }
Tensor full_like(const Tensor& x, Scalar value) { return full(ops::impl_of(x).shape(), value, x.dtype(), x.device()); }

Tensor arange(Scalar stop, Device device) { return arange(0, stop, 1, device); }

Tensor arange(Scalar start, Scalar stop, Scalar step, Device device) {
  OpScope scope("arange");
  double s = start.to_double(), e = stop.to_double(), d = step.to_double();
  auto text = [](Scalar v) { return v.is_floating() ? ir::number_text(v.to_double()) : std::to_string(v.to_int()); };
  if (d == 0 || !std::isfinite(s) || !std::isfinite(e) || !std::isfinite(d))
    ops::fail("step must be non-zero and bounds finite, got start " + text(start) + ", end " + text(stop) + ", step " +
              text(step));
  bool integral = !start.is_floating() && !stop.is_floating() && !step.is_floating();
  // Counted exactly, in 128 bits for integers: arange(INT64_MIN, INT64_MAX, INT64_MAX) has 3 elements.
  __int128 count = 0;
  if (integral) {
    const __int128 span = static_cast<__int128>(stop.to_int()) - start.to_int(), di = step.to_int();
    if ((di > 0 && span < 0) || (di < 0 && span > 0))
      count = -1;
    else
      count = di > 0 ? (span + di - 1) / di : (-span - di - 1) / -di;
  } else if ((d > 0 && e >= s) || (d < 0 && e <= s)) {
    const double elements = std::ceil((e - s) / d);  // may be inf
    count = elements < 0x1p63 ? static_cast<__int128>(elements) : static_cast<__int128>(1) << 63;
  } else {
    count = -1;
  }
  if (count < 0)
    ops::fail("upper bound " + text(stop) + " and lower bound " + text(start) + " are inconsistent with the step sign");
  if (count > std::numeric_limits<int64_t>::max())
    ops::fail("the range from " + text(start) + " to " + text(stop) + " by " + text(step) +
              " has more elements than 64-bit sizes count");
  const auto n = static_cast<int64_t>(count);
  DType dtype = integral ? DType::i64 : ops::default_float();
  const Shape shape{n};
  Tensor r = ops::iota_along(shape, 0, integral ? DType::i64 : DType::f64, device);
  if (integral) {
    if (step.to_int() != 1) r = r * step;
    if (start.to_int() != 0) r = r + start;
  } else {
    // Computed in f64 then rounded once, so long f32 ranges do not drift.
    r = ops::convert_to(r * step + start, dtype);
  }
  return scope.finish(r);
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  OpScope scope("eye");
  if (n < 0) ops::fail("n must be >= 0, got " + std::to_string(n));
  if (m == -1) m = n;
  if (m < 0) ops::fail("m must be >= 0 (or -1 for m = n), got " + std::to_string(m));
  const Shape shape{n, m};
  Tensor diagonal = eq(ops::iota_along(shape, 0, DType::i64, device), ops::iota_along(shape, 1, DType::i64, device));
  return scope.finish(ops::convert_to(diagonal, dtype));
}

void manual_seed(uint64_t seed) { random_state::reseed(seed); }

Tensor rand(const Shape& shape, DType dtype, Device device) {
  return random("rand", OpId::rng_uniform, shape, dtype, device);
}
Tensor randn(const Shape& shape, DType dtype, Device device) {
  return random("randn", OpId::rng_normal, shape, dtype, device);
}
Tensor rand_like(const Tensor& x) { return rand(ops::impl_of(x).shape(), x.dtype(), x.device()); }
Tensor randn_like(const Tensor& x) { return randn(ops::impl_of(x).shape(), x.dtype(), x.device()); }

}  // namespace xlite
