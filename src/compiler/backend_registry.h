#pragma once
// Backends by name. A code-generating backend is a compiler::Target behind the shared pipeline
// (backend_for_target); an interpreter (the reference) is a runtime::Backend of its own. The compiler
// includes no backend: the built-in ones are registered by backends/builtin.cpp, and others (a test's,
// later CUDA's) with register_backend.
#include <functional>
#include <memory>
#include <string>

#include "compiler/target.h"
#include "runtime/executable.h"

namespace xlite::compiler {

using BackendFactory = std::function<std::unique_ptr<runtime::Backend>()>;

// Throws xlite::Error if the name is taken.
void register_backend(const std::string& name, BackendFactory factory);
// A backend that compiles through the pipeline (compiler/pipeline.h) for this target.
std::unique_ptr<runtime::Backend> backend_for_target(std::unique_ptr<Target> target);

// Defined by the backends layer (backends/builtin.cpp): registers cpu and reference. Called once, before
// the first lookup.
void register_builtin_backends();

}  // namespace xlite::compiler
