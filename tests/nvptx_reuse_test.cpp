// The element generators are target-neutral: a GPU kernel built from them by a minimal NVPTX emitter (one
// thread per element, libdevice for math) compiles to PTX with LLVM's NVPTX target, and ptxas (the CUDA
// toolkit's, when installed) accepts it for sm_90. Nothing in backends/codegen changes for it.
#include <gtest/gtest.h>

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/codegen/element_generator.h"
#include "ir/graph.h"

namespace xl = xlite;
namespace codegen = xlite::backends::codegen;

namespace {

// libdevice's functions by name, as CUDA code calls them.
class LibdeviceMath final : public codegen::TargetMath {
 public:
  llvm::Value* call(llvm::IRBuilder<>& b, llvm::Module& module, codegen::MathFn fn, xl::DType dtype,
                    llvm::Value* x) override {
    const bool f32 = dtype != xl::DType::f64;
    std::string name = "__nv_";
    switch (fn) {
      case codegen::MathFn::exp: name += "exp"; break;
      case codegen::MathFn::expm1: name += "expm1"; break;
      case codegen::MathFn::log: name += "log"; break;
      case codegen::MathFn::log1p: name += "log1p"; break;
      case codegen::MathFn::sin: name += "sin"; break;
      case codegen::MathFn::cos: name += "cos"; break;
      case codegen::MathFn::tan: name += "tan"; break;
      case codegen::MathFn::atan: name += "atan"; break;
      case codegen::MathFn::tanh: name += "tanh"; break;
      case codegen::MathFn::erf: name += "erf"; break;
    }
    if (f32) name += "f";
    llvm::Type* t = f32 ? b.getFloatTy() : b.getDoubleTy();
    return b.CreateCall(module.getOrInsertFunction(name, llvm::FunctionType::get(t, {t}, false)), {x});
  }
  llvm::Value* integer_pow(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* exponent) override {
    llvm::Module& module = *b.GetInsertBlock()->getModule();
    auto* i64 = b.getInt64Ty();
    return b.CreateCall(module.getOrInsertFunction("xlite_gpu_ipow", llvm::FunctionType::get(i64, {i64, i64}, false)),
                        {base, exponent});
  }
};

// kernel(in0, ..., out, n, status): thread i < n writes element i of the body's output.
class PtxEmitter final : public codegen::ElementGenerator {
 public:
  PtxEmitter(const xl::ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, codegen::TargetMath& math)
      : ElementGenerator(body, context, module, math) {}

  void emit(const std::string& name) {
    auto* ptr = b_.getPtrTy();
    auto* i64 = b_.getInt64Ty();
    std::vector<llvm::Type*> params(g_.num_parameters + 1, ptr);
    params.insert(params.end(), {i64, ptr});
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                      llvm::Function::ExternalLinkage, name, module_);
    fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
    for (int64_t i = 0; i <= g_.num_parameters; ++i) buffers_.push_back(fn->getArg(i));
    status_ = fn->getArg(g_.num_parameters + 2);
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
    auto* body = llvm::BasicBlock::Create(ctx_, "body", fn);
    auto* done = llvm::BasicBlock::Create(ctx_, "done", fn);
    b_.SetInsertPoint(entry);
    auto sreg = [&](llvm::Intrinsic::ID id) { return b_.CreateZExt(b_.CreateIntrinsic(id, {}, {}), i64); };
    llvm::Value* i = b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                               sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                  sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    b_.CreateCondBr(b_.CreateICmpULT(i, fn->getArg(g_.num_parameters + 1)), body, done);
    b_.SetInsertPoint(body);
    const xl::ir::Instr& root = g_.instrs[g_.outputs[0]];
    codegen::Index* index = make_index(root.shape);
    index->linear = i;
    llvm::Value* value = to_storage(gen(g_.outputs[0], index), root.dtype);
    b_.CreateStore(value, b_.CreateGEP(storage_type(root.dtype), buffers_.back(), i));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    b_.CreateRetVoid();
  }

 private:
  // The first failure's code wins in a real target; storing any one is enough to show the hook works.
  void flag_failure(llvm::Value* bad, codegen::ElementFailure failure, llvm::Value*, llvm::Value*, int32_t) override {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* store = llvm::BasicBlock::Create(ctx_, "bad_value", fn);
    auto* cont = llvm::BasicBlock::Create(ctx_, "ok", fn);
    b_.CreateCondBr(bad, store, cont);
    b_.SetInsertPoint(store);
    b_.CreateStore(b_.getInt64(static_cast<int64_t>(failure)), status_);
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }
  llvm::Value* fused_reduction_value(int32_t) override { return nullptr; }

  llvm::Value* status_ = nullptr;
};

std::string Ptx(llvm::Module& module) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return "no NVPTX target: " + error;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, "sm_90", "+ptx80", llvm::TargetOptions(), std::nullopt));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream out(text);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::AssemblyFile)) return "cannot emit PTX";
  passes.run(module);
  return std::string(text.str());
}

}  // namespace

TEST(NvptxReuse, TheElementGeneratorsCompileToPtxThatPtxasAccepts) {
  // Index algebra (transpose, pad, slice, broadcast, gather), scalar semantics (integer division that can
  // fail, compare, select, convert to bf16), math through the target (tanh, exp) and a Philox draw.
  const xl::ir::Graph body = xl::ir::parse_graph(
      "%x = parameter(index=0) : f32[4,6]\n"
      "%k = parameter(index=1) : i64[6,4]\n"
      "%t = transpose(%x, perm=[1,0]) : f32[6,4]\n"
      "%p = pad(%t, lo=[1,0], hi=[0,1], value=0.5) : f32[7,5]\n"
      "%s = slice(%p, start=[1,0], limit=[7,5], stride=[1,1]) : f32[6,5]\n"
      "%q = slice(%s, start=[0,0], limit=[6,4], stride=[1,1]) : f32[6,4]\n"
      "%h = tanh(%q) : f32[6,4]\n"
      "%two = constant(value=2, dtype=i64) : i64[]\n"
      "%twos = broadcast(%two, shape=[6,4], dims=[]) : i64[6,4]\n"
      "%d = div(%k, %twos) : i64[6,4]\n"
      "%g = gather(%h, %d, dim=1) : f32[6,4]\n"
      "%seed = constant(value=7, dtype=i64) : i64[]\n"
      "%offset = constant(value=0, dtype=i64) : i64[]\n"
      "%u = rng_uniform(%seed, %offset, shape=[6,4], dtype=f32) : f32[6,4]\n"
      "%e = exp(%u) : f32[6,4]\n"
      "%c = gt(%g, %e) : bool[6,4]\n"
      "%y = select(%c, %g, %e) : f32[6,4]\n"
      "%z = convert(%y, dtype=bf16) : bf16[6,4]\n"
      "return %z\n");
  llvm::LLVMContext context;
  llvm::Module module("nvptx_reuse", context);
  LibdeviceMath math;
  PtxEmitter(body, context, module, math).emit("xlite_region");
  const std::string ptx = Ptx(module);
  ASSERT_NE(ptx.find(".entry xlite_region"), std::string::npos) << ptx.substr(0, 2000);
  EXPECT_NE(ptx.find("__nv_tanhf"), std::string::npos);  // math came from the target

  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) GTEST_SKIP() << "no CUDA toolkit here to validate the PTX with ptxas";
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / "xlite_nvptx_reuse.ptx").string(), out = (dir / "xlite_nvptx_reuse.cubin").string();
  std::ofstream(in) << ptx;
  // Relocatable: the libdevice functions are linked when a real target links libdevice.
  const std::string command = std::string(ptxas) + " -arch=sm_90 -c " + in + " -o " + out + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}
