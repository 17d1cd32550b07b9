#pragma once
// What the built-in kernels' shape rules and checks share: the error that names the kernel, and types as
// error messages write them ("f32[2, 3]").
#include <string>

#include "xlite/error.h"
#include "xlite/kernels.h"

namespace xlite::kernels {

[[noreturn]] inline void refuse(const std::string& kernel, const std::string& why) {
  throw Error("[" + kernel + "] " + why);
}

inline std::string type_text(const TensorType& t) { return std::string(dtype_name(t.dtype)) + shape_str(t.shape); }

}  // namespace xlite::kernels
