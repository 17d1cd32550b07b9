#pragma once
// Invariants of xlite itself, as opposed to checks of user input (those raise xlite::Error naming the op).
// A broken invariant is a bug in xlite: it raises xlite::InternalError with the file and line, so that a
// fuzzer or a user report points at the code, and compare_runs never counts it as agreement.
//
//   XLITE_CHECK(step.inputs.size() == n, "a kernel of " + std::to_string(n) + " inputs");
//   XLITE_FAIL("no code for unary " + name);   // a branch that must not be reached
//
// The message is built only when the check fails.
#include <string>

#define XLITE_CHECK(condition, message)                                                         \
  do {                                                                                          \
    if (!(condition)) ::xlite::detail::check_failed(__FILE__, __LINE__, #condition, (message)); \
  } while (0)
#define XLITE_FAIL(message) ::xlite::detail::check_failed(__FILE__, __LINE__, nullptr, (message))

namespace xlite::detail {

// Throws InternalError("[internal] src/dir/file.cpp:LINE: message (check 'condition' failed)").
[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);

}  // namespace xlite::detail
