#include "backends/cpu/jit.h"

#include <cstdlib>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <mutex>
#include <set>

#include <llvm/Config/llvm-config.h>

#include "codegen_source_hash.h"

#include "backends/cpu/kernel.h"
#include "backends/cpu/streaming_stores.h"
#include "core/check.h"
#include "core/environment.h"
#include "xlite/error.h"
#include "xlite/version.h"

namespace xlite::backends::cpu {

struct Jit::State {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> target;
  llvm::DataLayout layout{""};
  std::string triple;
  std::mutex mutex;
  std::atomic<int64_t> last_object_bytes{0};
  std::string* object_out = nullptr;  // under mutex: where add() wants the object file it is making
  std::atomic<int64_t> modules_alive{0};
  mutable std::mutex names_mutex;
  std::set<std::string> live_entries;  // entry symbols of the modules in the JIT
  std::string fingerprint;
};

namespace {
// Owns one module's resources in the JIT. Nothing can still run the code: every program that calls it
// holds this object.
struct ModuleResources {
  ModuleResources(llvm::orc::ResourceTrackerSP t, Jit::State* s, std::string e)
      : tracker(std::move(t)), state(s), entry(std::move(e)) {
    state->modules_alive.fetch_add(1);
    std::lock_guard lock(state->names_mutex);
    state->live_entries.insert(entry);
  }
  ModuleResources(const ModuleResources&) = delete;
  ModuleResources& operator=(const ModuleResources&) = delete;
  llvm::orc::ResourceTrackerSP tracker;
  Jit::State* state;
  std::string entry;
  ~ModuleResources() {
    if (llvm::Error error = tracker->remove()) llvm::consumeError(std::move(error));  // nothing to do but leak it
    state->modules_alive.fetch_sub(1);
    std::lock_guard lock(state->names_mutex);
    state->live_entries.erase(entry);
  }
};
}  // namespace

namespace {
[[noreturn]] void fail(const std::string& what, llvm::Error error) {
  std::string message;
  llvm::raw_string_ostream os(message);
  os << error;
  XLITE_FAIL("[jit] " + what + ": " + os.str());
}

template <class T>
T take(llvm::Expected<T> value, const char* what) {
  if (!value) fail(what, value.takeError());
  return std::move(*value);
}
}  // namespace

Jit& Jit::instance() { return runtime_context::state<Jit>("jit"); }

std::string Jit::describe() const {
  return std::to_string(modules_alive()) + " modules of machine code for " + triple();
}

Jit::Jit() : state_(std::make_unique<State>()) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  state_->target = take(builder.createTargetMachine(), "creating the target machine");
  state_->layout = state_->target->createDataLayout();
  state_->triple = state_->target->getTargetTriple().str();
  state_->jit = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(builder).create(), "creating the JIT");
  // libm and the process's own helpers resolve from the running process.
  auto& main = state_->jit->getMainJITDylib();
  main.addGenerator(
      take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(state_->layout.getGlobalPrefix()),
           "opening the process symbols"));
  // Helpers of our own are not exported by the executable, so they are given by address.
  llvm::orc::SymbolMap helpers;
  helpers[state_->jit->mangleAndIntern("xlite_cpu_ipow")] = {llvm::orc::ExecutorAddr::fromPtr(&xlite_cpu_ipow),
                                                             llvm::JITSymbolFlags::Exported};
  if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(helpers))))
    fail("defining helper symbols", std::move(error));
  State* state = state_.get();
  state_->jit->getObjTransformLayer().setTransform(
      [state](std::unique_ptr<llvm::MemoryBuffer> object) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        state->last_object_bytes = static_cast<int64_t>(object->getBufferSize());
        if (state->object_out) state->object_out->assign(object->getBufferStart(), object->getBufferSize());
        return object;
      });
  state_->fingerprint = std::string("xlite ") + XLITE_VERSION_STRING + " codegen " + XLITE_CODEGEN_SOURCE_HASH +
                        "; LLVM " + LLVM_VERSION_STRING + "; " + state_->triple + "; " +
                        state_->target->getTargetCPU().str() + "; " + state_->target->getTargetFeatureString().str();
}

const std::string& Jit::fingerprint() const { return state_->fingerprint; }

bool Jit::is_live(const std::string& entry) const {
  std::lock_guard lock(state_->names_mutex);
  return state_->live_entries.count(entry) > 0;
}

std::optional<JitCode> Jit::add_object(std::string_view object, const std::string& entry) {
  std::lock_guard lock(state_->mutex);
  if (is_live(entry)) return std::nullopt;
  llvm::orc::JITDylib& dylib = state_->jit->getMainJITDylib();
  auto resources = std::make_shared<ModuleResources>(dylib.createResourceTracker(), state_.get(), entry);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), entry);
  if (llvm::Error error = state_->jit->addObjectFile(resources->tracker, std::move(buffer))) {
    llvm::consumeError(std::move(error));
    return std::nullopt;
  }
  auto address = state_->jit->lookup(dylib, entry);
  if (!address) {
    llvm::consumeError(address.takeError());
    return std::nullopt;
  }
  return JitCode{address->toPtr<void*>(), static_cast<int64_t>(object.size()), std::move(resources)};
}

const llvm::DataLayout& Jit::data_layout() const { return state_->layout; }
const std::string& Jit::triple() const { return state_->triple; }

int64_t Jit::modules_alive() const { return state_->modules_alive.load(); }

void Jit::optimize(llvm::Module& module) const {
  std::lock_guard lock(state_->mutex);
  optimize_locked(module);
}

void Jit::optimize_locked(llvm::Module& module) const {
  module.setDataLayout(state_->layout);
  module.setTargetTriple(state_->triple);
  std::string broken;
  llvm::raw_string_ostream errors(broken);
  if (llvm::verifyModule(module, &errors)) XLITE_FAIL("[jit] generated invalid IR: " + errors.str());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder passes(state_->target.get(), tuning);
  passes.registerModuleAnalyses(mam);
  passes.registerCGSCCAnalyses(cgam);
  passes.registerFunctionAnalyses(fam);
  passes.registerLoopAnalyses(lam);
  passes.crossRegisterProxies(lam, fam, cgam, mam);
  passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

JitCode Jit::add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                 const std::string& entry, std::string* object) {
  std::lock_guard lock(state_->mutex);
  state_->object_out = object;
  struct Reset {
    State* state;
    ~Reset() { state->object_out = nullptr; }
  } reset{state_.get()};
  optimize_locked(*module);
  mark_streaming_stores(*module);
  // XLITE_DUMP_IR=1 prints every kernel as optimised LLVM IR, to see what the vectoriser made of it.
  static const bool dump = env::settings().dump_ir;
  if (dump) module->print(llvm::errs(), nullptr);

  // Every module goes into the main dylib under a tracker of its own, so that its code can be removed.
  llvm::orc::JITDylib& dylib = state_->jit->getMainJITDylib();
  auto resources = std::make_shared<ModuleResources>(dylib.createResourceTracker(), state_.get(), entry);
  if (auto error = state_->jit->addIRModule(resources->tracker,
                                            llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    fail("adding a module", std::move(error));
  auto address = take(state_->jit->lookup(dylib, entry), "looking up the kernel");
  return JitCode{address.toPtr<void*>(), state_->last_object_bytes, std::move(resources)};
}

}  // namespace xlite::backends::cpu
