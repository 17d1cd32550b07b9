#pragma once
#include <memory>

#include "compiler/target.h"

namespace xlite::backends::cpu {

// The default target: fusion into loops compiled with LLVM ORC, f32 matmul and convolution through
// oneDNN, loops split across cores with OpenMP (the threading runtime oneDNN uses too).
std::unique_ptr<compiler::Target> make_target();

}  // namespace xlite::backends::cpu
