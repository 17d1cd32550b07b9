#pragma once
#include <memory>

#include "runtime/executable.h"

namespace xlite::backends::cpu {

// The default backend: graph passes, fusion into loops compiled with LLVM ORC, f32 matmul through
// oneDNN, loops split across cores with OpenMP (the threading runtime oneDNN uses too).
std::unique_ptr<runtime::Backend> make_backend();

}  // namespace xlite::backends::cpu
