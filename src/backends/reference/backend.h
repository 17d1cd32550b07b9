#pragma once
#include <memory>

#include "runtime/executable.h"

namespace xlite::backends::reference {

// The oracle: evaluates a graph one instruction at a time with plain loops. Never the fast path.
std::unique_ptr<runtime::Backend> make_backend();

}  // namespace xlite::backends::reference
