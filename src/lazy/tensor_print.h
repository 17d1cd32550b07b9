#pragma once
// The text of a tensor's values as PyTorch prints them (xlite/print.h), from values already on the host.
#include <cstdint>
#include <string>
#include <vector>

#include "xlite/device.h"
#include "xlite/dtype.h"

namespace xlite {

// Every element, row-major: floats for floating dtypes, integers for the others (bool as 0 or 1).
struct HostValues {
  std::vector<double> floats;
  std::vector<int64_t> integers;
};

std::string format_tensor(const HostValues& values, const Shape& shape, DType dtype, Device device);

}  // namespace xlite
