#include "backends/cpu/streaming_stores.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

#include "xlite/dtype.h"
#include "ir/op.h"

namespace xlite::backends::cpu {

bool streams_output(const ir::Instr& root) {
#if defined(__x86_64__)
  const ir::OpClass cls = ir::op_info(root.op).cls;
  if (cls == ir::OpClass::Reduce || cls == ir::OpClass::ArgReduce) return false;
  return numel(root.shape) * dtype_size(root.dtype) >= kStreamingStoreBytes;
#else
  (void)root;
  return false;
#endif
}

void mark_streaming_stores(llvm::Module& module) {
  const llvm::DataLayout& layout = module.getDataLayout();
  for (llvm::Function& function : module) {
    if (function.isDeclaration() || !function.hasFnAttribute(kStreamingStoresAttribute)) continue;
    llvm::MDNode* hint = llvm::MDNode::get(module.getContext(), llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                                                    llvm::Type::getInt32Ty(module.getContext()), 1)));
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block) {
        auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction);
        if (!store || !store->getValueOperand()->getType()->isVectorTy()) continue;
        const uint64_t bytes = layout.getTypeStoreSize(store->getValueOperand()->getType());
        if (bytes < 32 || store->getAlign().value() < bytes) continue;
        if (llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(store->getPointerOperand()))) continue;
        store->setMetadata(llvm::LLVMContext::MD_nontemporal, hint);
      }
  }
}

}  // namespace xlite::backends::cpu
