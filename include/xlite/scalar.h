#pragma once
#include <cstdint>
#include <type_traits>

namespace xlite {

// A host number passed to an op. Like a Python number in PyTorch it does not widen a tensor's dtype
// within its category: f16_tensor * 2.5 stays f16, i32_tensor * 2.5 becomes f32.
class Scalar {
 public:
  enum class Kind : uint8_t { boolean, integer, floating };

  template <class T>
    requires std::is_arithmetic_v<T>
  Scalar(T value) {  // NOLINT: implicit on purpose, like a number literal
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::boolean;
      int_ = value ? 1 : 0;
      double_ = int_;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::integer;
      int_ = static_cast<int64_t>(value);
      double_ = static_cast<double>(value);
    } else {
      kind_ = Kind::floating;
      double_ = static_cast<double>(value);
      int_ = 0;
    }
  }

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::floating; }
  double to_double() const { return double_; }
  int64_t to_int() const { return kind_ == Kind::floating ? static_cast<int64_t>(double_) : int_; }

 private:
  Kind kind_;
  int64_t int_;
  double double_;
};

}  // namespace xlite
