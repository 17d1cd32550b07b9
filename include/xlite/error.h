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

// A bug in xlite rather than in its input: an invariant of the runtime does not hold (a backend cannot
// lower an op the verifier accepted, a traced graph does not verify, generated code is invalid). Caught
// as an Error too; tests and fuzzers tell the two apart. The message starts with "[internal]".
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error("[internal] " + message) {}
};

}  // namespace xlite
