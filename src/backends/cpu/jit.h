#pragma once
// The process-wide LLVM ORC JIT: host CPU features, the O3 pipeline, and symbols for the helper
// functions generated code may call.
#include <memory>
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "core/runtime_context.h"

namespace xlite::backends::cpu {

// A module's machine code in the JIT: removed from it (its memory freed) when the last holder lets go.
struct JitCode {
  void* entry = nullptr;
  int64_t code_bytes = 0;
  std::shared_ptr<const void> owner;
};

class Jit final : public RuntimeState {
 public:
  Jit();
  static Jit& instance();
  // Optimises the module for the host and adds it; `entry` must be a name no other live module defines.
  JitCode add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
              const std::string& entry);
  int64_t modules_alive() const;
  const llvm::DataLayout& data_layout() const;
  const std::string& triple() const;
  std::string describe() const override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace xlite::backends::cpu
