#pragma once
#include <stdexcept>
#include <string>

namespace xlite {

// Every failure the library reports: bad shapes, dtypes, arguments, indices, files, memory.
// The message starts with the op in brackets: "[matmul] shapes [2,3] and [4,5] cannot be multiplied".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace xlite
