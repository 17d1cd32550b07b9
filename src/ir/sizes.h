#pragma once
// Sizes computed with overflow checks, the one place that says which shapes exist.
//
// A shape is addressable when every dim is >= 0 and the product of its non-zero dims times the element
// size fits in int64. Every node and every verified instruction has an addressable shape (the shape rules
// and the verifier check it), so element counts, byte sizes, strides and partial products of a shape never
// wrap downstream: not in the memory plan, the allocator's requests or a kernel's index arithmetic. Zero
// dims count as one in that product because an empty tensor's strides are products of its other dims too.
// Sizes that user arguments make before a node exists (a pad added to a dim, a range's length) go through
// checked_add / checked_mul.
#include <cstdint>
#include <optional>
#include <string_view>

#include "xlite/dtype.h"

namespace xlite::ir {

// a + b, a - b and a * b, or nullopt when the result does not fit in int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The element count of a shape of non-negative dims, or nullopt when the shape is not addressable in
// one-byte elements.
std::optional<int64_t> checked_numel(const Shape& shape);

// Every shape rule checks its result with this, so it is inline and stops at the first bad dim.
inline bool addressable(const Shape& shape, DType dtype) {
  int64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d > 1 && __builtin_mul_overflow(bytes, d, &bytes)) return false;
  }
  return true;
}

// Throws xlite::Error("[op] shape [..] of f32 ...") saying why the shape is not addressable.
[[noreturn]] void fail_unaddressable(std::string_view op, const Shape& shape, DType dtype);

inline void require_addressable(std::string_view op, const Shape& shape, DType dtype) {
  if (!addressable(shape, dtype)) fail_unaddressable(op, shape, dtype);
}

}  // namespace xlite::ir
