// Streaming stores (backends/cpu/streaming_stores.h): which kernels ask for them, which stores become
// non-temporal, and that outputs written both ways (aligned rows streamed, the others plain) hold the
// right values.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "backends/cpu/emitter.h"
#include "backends/cpu/streaming_stores.h"
#include "ir/graph.h"

namespace xl = xlite;
namespace cpu = xlite::backends::cpu;

namespace {

// A flat elementwise region of `n` f32 elements, as text IR.
std::string scaled(int64_t n) {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  return "%x = parameter(index=0) : " + shape + "\n%c = constant(value=2.0, dtype=f32) : f32[]\n" +
         "%cb = broadcast(%c, shape=[" + std::to_string(n) + "], dims=[]) : " + shape + "\n" +
         "%y = mul(%x, %cb) : " + shape + "\nreturn %y\n";
}

bool has_streaming_entry(int64_t n) {
  llvm::LLVMContext context;
  llvm::Module module("test", context);
  cpu::emit_kernel(xl::ir::parse_graph(scaled(n)), context, module, "kernel");
  bool fenced = false;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& i : block)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i))
          fenced |= call->getCalledFunction() && call->getCalledFunction()->getName() == "llvm.x86.sse.sfence";
  const bool asked = module.getFunction("kernel")->hasFnAttribute(cpu::kStreamingStoresAttribute);
  EXPECT_EQ(asked, fenced) << "a kernel that streams must end with a store fence";
  return asked;
}

}  // namespace

TEST(StreamingStores, OnlyOutputsBeyondTheThresholdStream) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "streaming stores are emitted on x86-64 only";
#endif
  const int64_t at_threshold = cpu::kStreamingStoreBytes / 4;
  EXPECT_TRUE(has_streaming_entry(at_threshold));
  EXPECT_FALSE(has_streaming_entry(at_threshold - 1));
  EXPECT_FALSE(has_streaming_entry(1024));
  const xl::ir::Graph sum = xl::ir::parse_graph(
      "%x = parameter(index=0) : f32[16,2097152]\n%s = reduce_sum(%x, dims=[1], keepdim=false) : f32[16]\nreturn %s\n");
  EXPECT_FALSE(cpu::streams_output(sum.instrs[sum.outputs[0]])) << "a reduction's output is small";
}

// Vector stores that cover their alignment, to memory other than the stack, in functions that ask.
TEST(StreamingStores, MarksAlignedVectorStoresOutsideTheStack) {
  llvm::LLVMContext context;
  llvm::Module module("test", context);
  llvm::IRBuilder<> b(context);
  auto* vec = llvm::FixedVectorType::get(b.getFloatTy(), 16);
  auto make = [&](const char* name, bool asks) {
    auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false),
                                     llvm::Function::ExternalLinkage, name, module);
    if (asks) f->addFnAttr(cpu::kStreamingStoresAttribute);
    b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
    llvm::Value* zero = llvm::Constant::getNullValue(vec);
    llvm::Value* stack = b.CreateAlloca(vec);
    std::vector<llvm::StoreInst*> stores = {
        b.CreateAlignedStore(zero, f->getArg(0), llvm::Align(64)),  // marked
        b.CreateAlignedStore(zero, b.CreateConstGEP1_64(b.getFloatTy(), f->getArg(0), 16),
                             llvm::Align(4)),                                                             // unaligned
        b.CreateAlignedStore(zero, stack, llvm::Align(64)),                                               // the stack
        b.CreateAlignedStore(llvm::ConstantFP::get(b.getFloatTy(), 1.0), f->getArg(0), llvm::Align(64)),  // a scalar
    };
    b.CreateRetVoid();
    return stores;
  };
  const auto asking = make("asks", true);
  const auto silent = make("silent", false);
  cpu::mark_streaming_stores(module);
  auto streams = [](llvm::StoreInst* s) { return s->getMetadata(llvm::LLVMContext::MD_nontemporal) != nullptr; };
  EXPECT_TRUE(streams(asking[0]));
  EXPECT_FALSE(streams(asking[1]));
  EXPECT_FALSE(streams(asking[2]));
  EXPECT_FALSE(streams(asking[3]));
  for (llvm::StoreInst* s : silent) EXPECT_FALSE(streams(s));
}

// Outputs past the threshold, against values computed on the host. Rows of 1023 floats start on a cache
// line once in 16 rows, so each kernel runs both versions of its output loop; the flat loop's chunks start
// on cache lines. Each element is checked.
TEST(StreamingStores, OutputsWrittenBothWaysHoldTheirValues) {
  const int64_t rows = 16448, cols = 1023;  // 67.3 MB of f32
  ASSERT_GE(rows * cols * 4, cpu::kStreamingStoreBytes);
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int64_t>(i % 997) - 498);
  xl::Tensor x = xl::from_bytes(host.data(), {rows, cols}, xl::DType::f32);
  xl::sync({x});

  const std::vector<float> doubled = (x * 2.0f + 1.0f).to_vector<float>();
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(doubled[i], host[i] * 2.0f + 1.0f) << "element " << i;

  const std::vector<float> normed = (x * xl::rsqrt(xl::mean(x * x, {-1}, true) + 1e-6f)).to_vector<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(host[r * cols + c]) * host[r * cols + c];
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(cols) + 1e-6);
    for (int64_t c = 0; c < cols; ++c) {
      const double want = host[r * cols + c] * scale;
      ASSERT_NEAR(normed[r * cols + c], want, 1e-5 * std::fabs(want) + 1e-7) << "row " << r << " col " << c;
    }
  }
}
