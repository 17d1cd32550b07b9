#include "backends/codegen/target_math.h"

namespace xlite::backends::codegen {

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that tiny results keep their precision.
llvm::Value* TargetMath::sigmoid(llvm::IRBuilder<>& b, llvm::Module& module, DType dtype, llvm::Value* x) {
  llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
  llvm::Value* e = call(b, module, MathFn::exp, dtype, b.CreateFNeg(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)));
  llvm::Value* r = b.CreateFDiv(one, b.CreateFAdd(one, e));
  return b.CreateSelect(b.CreateFCmpOLT(x, llvm::ConstantFP::get(x->getType(), 0.0)), b.CreateFMul(e, r), r);
}

}  // namespace xlite::backends::codegen
