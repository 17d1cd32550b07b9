#pragma once
// What the built-in kernels' shape rules and checks share: the error that names the kernel, and types as
// error messages write them ("f32[2, 3]").
#include <cstdint>
#include <limits>
#include <string>

#include "xlite/error.h"
#include "xlite/kernels.h"

namespace xlite::kernels {

[[noreturn]] inline void refuse(const std::string& kernel, const std::string& why) {
  throw Error("[" + kernel + "] " + why);
}

inline std::string type_text(const TensorType& t) { return std::string(dtype_name(t.dtype)) + shape_str(t.shape); }

// A scratch rule's byte count, computed wide by the caller: legal shapes can multiply past int64.
inline int64_t scratch_bytes(const std::string& kernel, __int128 bytes) {
  if (bytes > std::numeric_limits<int64_t>::max()) refuse(kernel, "needs more scratch than 64-bit sizes can count");
  return static_cast<int64_t>(bytes);
}

}  // namespace xlite::kernels
