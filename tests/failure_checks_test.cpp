// Values an op cannot take, found by a compiled loop while it runs (backends/codegen/element_failure.h): the
// check must not cost the loop its vectors, and the error still names the op and a bad value.
#include <gtest/gtest.h>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "backends/cpu/emitter.h"
#include "backends/cpu/jit.h"
#include "ir/graph.h"

namespace xl = xlite;
namespace cpu = xlite::backends::cpu;

namespace {

// A cross-entropy's gradient loop, softmax minus the one-hot target, with its row reductions computed row by
// row inside it. The one-hot select reads each row's target through a checked gather of the positions, as
// autograd builds a gather's gradient.
const char* kCrossEntropyGradient =
    "%x = parameter(index=0) : f32[64,1024]\n"
    "%m = reduce_max(%x, dims=[1], keepdim=true) : f32[64,1]\n"
    "%mb = broadcast(%m, shape=[64,1024], dims=[0,1]) : f32[64,1024]\n"
    "%shifted = sub(%x, %mb) : f32[64,1024]\n"
    "%e = exp(%shifted) : f32[64,1024]\n"
    "%s = reduce_sum(%e, dims=[1], keepdim=true) : f32[64,1]\n"
    "%sb = broadcast(%s, shape=[64,1024], dims=[0,1]) : f32[64,1024]\n"
    "%prob = div(%e, %sb) : f32[64,1024]\n"
    "%p = iota(dtype=i64, shape=[64,1024], dim=1) : i64[64,1024]\n"
    "%t = parameter(index=1) : i64[64,1]\n"
    "%c = gather(%p, %t, dim=1) : i64[64,1]\n"
    "%cb = broadcast(%c, shape=[64,1024], dims=[0,1]) : i64[64,1024]\n"
    "%hit = eq(%p, %cb) : bool[64,1024]\n"
    "%one = constant(value=1.0, dtype=f32) : f32[]\n"
    "%ones = broadcast(%one, shape=[64,1024], dims=[]) : f32[64,1024]\n"
    "%zero = constant(value=0.0, dtype=f32) : f32[]\n"
    "%zeros = broadcast(%zero, shape=[64,1024], dims=[]) : f32[64,1024]\n"
    "%onehot = select(%hit, %ones, %zeros) : f32[64,1024]\n"
    "%y = sub(%prob, %onehot) : f32[64,1024]\n"
    "return %y\n";

// The one-hot of a checked gather, read by a row sum and by the output: the loops evaluate the check twice.
const char* kCheckedTwice =
    "%p = iota(dtype=i64, shape=[4,8], dim=1) : i64[4,8]\n"
    "%t = parameter(index=0) : i64[4,1]\n"
    "%c = gather(%p, %t, dim=1) : i64[4,1]\n"
    "%cb = broadcast(%c, shape=[4,8], dims=[0,1]) : i64[4,8]\n"
    "%hit = eq(%p, %cb) : bool[4,8]\n"
    "%one = constant(value=1.0, dtype=f32) : f32[]\n"
    "%ones = broadcast(%one, shape=[4,8], dims=[]) : f32[4,8]\n"
    "%zero = constant(value=0.0, dtype=f32) : f32[]\n"
    "%zeros = broadcast(%zero, shape=[4,8], dims=[]) : f32[4,8]\n"
    "%onehot = select(%hit, %ones, %zeros) : f32[4,8]\n"
    "%s = reduce_sum(%onehot, dims=[1], keepdim=true) : f32[4,1]\n"
    "%sb = broadcast(%s, shape=[4,8], dims=[0,1]) : f32[4,8]\n"
    "%y = add(%onehot, %sb) : f32[4,8]\n"
    "return %y\n";

// Stores to the status word (the kernel's last argument) inside a loop of `kernel`, and vector stores to
// the buffers.
struct StoresSeen {
  int status_stores_in_loops = 0;
  int vector_stores_to_buffers = 0;
};
StoresSeen stores_in(llvm::Function& kernel) {
  llvm::DominatorTree dominators(kernel);
  llvm::LoopInfo loops(dominators);
  const llvm::Value* status = kernel.getArg(kernel.arg_size() - 1);
  StoresSeen seen;
  for (llvm::BasicBlock& block : kernel)
    for (llvm::Instruction& i : block)
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) {
        const llvm::Value* target = llvm::getUnderlyingObject(store->getPointerOperand());
        if (target == status && loops.getLoopFor(&block)) ++seen.status_stores_in_loops;
        if (store->getValueOperand()->getType()->isVectorTy() && !llvm::isa<llvm::AllocaInst>(target))
          ++seen.vector_stores_to_buffers;
      }
  return seen;
}

}  // namespace

// A branch to the status word inside the loop kept the loop scalar (each element tested and branched):
// the gradient ran at half the speed of the same loop unchecked. The status is written after the loops.
TEST(FailureChecks, ACheckedIndexLeavesTheLoopsWithoutBranchesToTheStatus) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::Module module("test", *context);
  cpu::emit_kernel(xl::ir::parse_graph(kCrossEntropyGradient), *context, module, "kernel");
  cpu::Jit::instance().optimize(module);
  const StoresSeen seen = stores_in(*module.getFunction("kernel"));
  EXPECT_EQ(seen.status_stores_in_loops, 0);
  EXPECT_GT(seen.vector_stores_to_buffers, 0);
}

// One report per instruction however many loops evaluate it, so that its value is the largest of all of them
// (with one per evaluation, the first that failed was reported and the others were skipped).
TEST(FailureChecks, AnInstructionCheckedInSeveralLoopsIsReportedOnce) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::Module module("test", *context);
  cpu::emit_kernel(xl::ir::parse_graph(kCheckedTwice), *context, module, "kernel");
  int reports = 0;
  for (const llvm::Function& f : module)
    for (const llvm::BasicBlock& block : f) reports += block.getName().starts_with("first_bad_value");
  EXPECT_EQ(reports, 1);
}

TEST(FailureChecks, TheErrorNamesTheOpAndABadValue) {
  auto x = xl::ones({4, 1024});
  x.requires_grad_();
  xl::sum(xl::gather(x, 1, xl::tensor(std::vector<int64_t>{1, 1030, 2, 3}, {4, 1}))).backward();
  try {
    x.grad().to_vector<float>();
    FAIL() << "an index out of range was not reported";
  } catch (const xl::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("gather"), std::string::npos) << message;
    EXPECT_NE(message.find("1030"), std::string::npos) << message;
    EXPECT_NE(message.find("1024"), std::string::npos) << message;
  }
  // The runtime stays usable, and a good index gives the one-hot rows.
  auto y = xl::ones({2, 1024});
  y.requires_grad_();
  xl::sum(xl::gather(y, 1, xl::tensor(std::vector<int64_t>{1023, 0}, {2, 1}))).backward();
  const std::vector<float> grad = y.grad().to_vector<float>();
  for (size_t i = 0; i < grad.size(); ++i) EXPECT_EQ(grad[i], i == 1023 || i == 1024 ? 1.0f : 0.0f) << i;
}

// Several bad values in one loop: one of them is reported, whichever the threads met.
TEST(FailureChecks, OneOfSeveralBadValuesIsReported) {
  auto x = xl::ones({3, 8});
  x.requires_grad_();
  xl::sum(xl::gather(x, 1, xl::tensor(std::vector<int64_t>{-9, 4, 12}, {3, 1}))).backward();
  try {
    x.grad().to_vector<float>();
    FAIL() << "indices out of range were not reported";
  } catch (const xl::Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("-9") != std::string::npos || message.find("12") != std::string::npos) << message;
  }
}
