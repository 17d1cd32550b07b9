#include "xlite/dtype.h"

#include <array>
#include <atomic>

#include "core/runtime_context.h"
#include "xlite/error.h"

namespace xlite {
namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int64_t size;
};
constexpr std::array<DTypeInfo, 8> kDTypes = {{
    {DType::f32, "f32", 4},
    {DType::f64, "f64", 8},
    {DType::f16, "f16", 2},
    {DType::bf16, "bf16", 2},
    {DType::i32, "i32", 4},
    {DType::i64, "i64", 8},
    {DType::u8, "u8", 1},
    {DType::bool_, "bool", 1},
}};
}  // namespace

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].name; }
int64_t dtype_size(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].size; }

DType dtype_from_name(std::string_view name) {
  for (const auto& info : kDTypes)
    if (info.name == name) return info.dtype;
  throw Error("[dtype] unknown dtype '" + std::string(name) + "'");
}

namespace {
struct DefaultDType final : RuntimeState {
  std::atomic<DType> dtype{DType::f32};
  std::string describe() const override { return std::string(dtype_name(dtype.load())); }
};
DefaultDType& default_dtype() { return runtime_context::state<DefaultDType>("default dtype"); }
}  // namespace

void set_default_dtype(DType dtype) {
  if (dtype != DType::f32 && dtype != DType::f64)
    throw Error("[set_default_dtype] the default dtype must be f32 or f64, got " + std::string(dtype_name(dtype)));
  default_dtype().dtype.store(dtype);
}

DType get_default_dtype() { return default_dtype().dtype.load(); }

bool is_floating(DType d) { return d == DType::f32 || d == DType::f64 || d == DType::f16 || d == DType::bf16; }
bool is_16_bit_float(DType d) { return d == DType::f16 || d == DType::bf16; }
bool is_integral(DType d) { return d == DType::i32 || d == DType::i64 || d == DType::u8; }

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

}  // namespace xlite
