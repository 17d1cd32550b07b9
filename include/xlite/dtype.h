#pragma once
// Element types and shapes.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace xlite {

// f16 and bf16 are stored in 16 bits and computed in f32.
enum class DType : uint8_t { f32, f64, f16, bf16, i32, i64, u8, bool_ };

using Shape = std::vector<int64_t>;

std::string_view dtype_name(DType dtype);
// Parses "f32", "bool", ...; throws xlite::Error on an unknown name.
DType dtype_from_name(std::string_view name);
int64_t dtype_size(DType dtype);
bool is_floating(DType dtype);
bool is_16_bit_float(DType dtype);  // f16 or bf16: stored in 16 bits, computed in f32
bool is_integral(DType dtype);      // integers, not bool

// PyTorch's default floating dtype, f32 unless set_default_dtype chose f64 (process-wide, like
// torch.set_default_dtype): the dtype of floating literals (tensor(3.0), a float multiplied into an integer
// tensor), of float factories without a dtype, and of float results of integer ops.
void set_default_dtype(DType dtype);  // f32 or f64
DType get_default_dtype();

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2,3]"

std::ostream& operator<<(std::ostream& os, DType dtype);

// The dtype a C++ element type maps to (float -> f32, int64_t -> i64, bool -> bool_, ...).
template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::bool_;
};

}  // namespace xlite
