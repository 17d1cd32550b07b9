#pragma once
// Reading one element of any dtype from raw storage: the one place that knows how each dtype is stored.
#include <cstdint>

#include "core/half.h"
#include "xlite/dtype.h"

namespace xlite {

// Element i as a double; integers and bool convert exactly up to 2^53.
inline double read_element_f64(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f64: return static_cast<const double*>(data)[i];
    case DType::f16: return f16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bf16: return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::i32: return static_cast<const int32_t*>(data)[i];
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::u8: return static_cast<const uint8_t*>(data)[i];
    case DType::bool_: return static_cast<const uint8_t*>(data)[i] != 0;
  }
  return 0;
}

// Element i of an integer or bool dtype, exactly. Floating dtypes have no exact integer reading: callers
// choose their own conversion of read_element_f64.
inline int64_t read_integer_element(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::i32: return static_cast<const int32_t*>(data)[i];
    case DType::i64: return static_cast<const int64_t*>(data)[i];
    case DType::u8: return static_cast<const uint8_t*>(data)[i];
    case DType::bool_: return static_cast<const uint8_t*>(data)[i] != 0;
    default: return 0;
  }
}

}  // namespace xlite
