#include "ir/sizes.h"

#include <string>

#include "xlite/error.h"

namespace xlite::ir {

std::optional<int64_t> checked_numel(const Shape& shape) {
  if (!addressable(shape, DType::u8)) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void fail_unaddressable(std::string_view op, const Shape& shape, DType dtype) {
  std::string prefix = "[";
  prefix.append(op).append("] shape ").append(shape_str(shape));
  for (int64_t d : shape)
    if (d < 0) throw Error(prefix + " has a negative dim " + std::to_string(d));
  throw Error(prefix + " of " + std::string(dtype_name(dtype)) +
              " is too large for 64-bit sizes: its non-zero dims times " + std::to_string(dtype_size(dtype)) +
              " bytes per element overflow");
}

}  // namespace xlite::ir
