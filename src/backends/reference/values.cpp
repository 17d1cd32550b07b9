#include <cmath>
#include <cstring>
#include <limits>

#include "backends/reference/kernels.h"
#include "core/elements.h"
#include "runtime/allocator.h"

namespace xlite::backends::reference {

Value allocate_value(const Shape& shape, DType dtype, Device device) {
  int64_t n = numel(shape);
  BufferPtr buffer = runtime::allocator(device).allocate(static_cast<size_t>(n * dtype_size(dtype)));
  return Value{std::move(buffer), shape, dtype, n};
}

double load_f(const Value& v, int64_t i) { return read_element_f64(v.buffer->data(), v.dtype, i); }

int64_t load_i(const Value& v, int64_t i) {
  if (!is_floating(v.dtype)) return read_integer_element(v.buffer->data(), v.dtype, i);
  // Float to integer truncates toward zero; NaN gives 0 and out-of-range values saturate.
  double x = load_f(v, i);
  if (std::isnan(x)) return 0;
  if (x >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (x <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

void store_f(const Value& v, int64_t i, double x) {
  void* p = v.buffer->data();
  switch (v.dtype) {
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(x); return;
    case DType::f64: static_cast<double*>(p)[i] = x; return;
    case DType::f16: static_cast<uint16_t*>(p)[i] = float_to_f16(static_cast<float>(x)); return;
    case DType::bf16: static_cast<uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(x)); return;
    case DType::bool_: static_cast<uint8_t*>(p)[i] = x != 0; return;
    default: {
      int64_t as_int = 0;
      if (std::isnan(x))
        as_int = 0;
      else if (x >= 9.2233720368547758e18)
        as_int = std::numeric_limits<int64_t>::max();
      else if (x <= -9.2233720368547758e18)
        as_int = std::numeric_limits<int64_t>::min();
      else
        as_int = static_cast<int64_t>(x);
      store_i(v, i, as_int);
    }
  }
}

void store_i(const Value& v, int64_t i, int64_t x) {
  void* p = v.buffer->data();
  switch (v.dtype) {
    // Narrowing integer stores wrap, as in C and PyTorch.
    case DType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(static_cast<uint32_t>(x)); return;
    case DType::i64: static_cast<int64_t*>(p)[i] = x; return;
    case DType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(x); return;
    case DType::bool_: static_cast<uint8_t*>(p)[i] = x != 0; return;
    default: store_f(v, i, static_cast<double>(x));
  }
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

void unravel(int64_t linear, const Shape& shape, std::vector<int64_t>& index) {
  index.resize(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
}

int64_t ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d) linear += index[d] * strides[d];
  return linear;
}

}  // namespace xlite::backends::reference
