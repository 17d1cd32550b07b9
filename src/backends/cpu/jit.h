#pragma once
// The process-wide LLVM ORC JIT: host CPU features, the O3 pipeline, and symbols for the helper
// functions generated code may call.
#include <memory>
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace xlite::backends::cpu {

class Jit {
 public:
  static Jit& instance();
  // Optimises the module for the host and adds it; returns the address of `entry` and the object size.
  void* add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
            const std::string& entry, int64_t* code_bytes);
  const llvm::DataLayout& data_layout() const;
  const std::string& triple() const;

 private:
  Jit();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace xlite::backends::cpu
