#pragma once
// The process-wide LLVM ORC JIT: host CPU features, the O3 pipeline, and symbols for the helper
// functions generated code may call.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
  // With `object`, also hands back the module's machine code as a relocatable object file.
  JitCode add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
              const std::string& entry, std::string* object = nullptr);
  // The O3 pipeline for the host, as add() runs it before streaming stores are marked (tests read what
  // the vectoriser made of a kernel).
  void optimize(llvm::Module& module) const;
  // Links an object file that add() handed back (here or in another process) and finds `entry` in it.
  // Nothing when the object does not link, or when a live module already defines `entry`.
  std::optional<JitCode> add_object(std::string_view object, const std::string& entry);
  bool is_live(const std::string& entry) const;
  // What machine code depends on besides a kernel's IR: xlite's code generators, LLVM, the target and the
  // CPU's features. Part of every persistent cache key.
  const std::string& fingerprint() const;
  int64_t modules_alive() const;
  const llvm::DataLayout& data_layout() const;
  const std::string& triple() const;
  std::string describe() const override;

  struct State;  // public for the resources each module holds, defined in jit.cpp

 private:
  void optimize_locked(llvm::Module& module) const;
  std::unique_ptr<State> state_;
};

}  // namespace xlite::backends::cpu
