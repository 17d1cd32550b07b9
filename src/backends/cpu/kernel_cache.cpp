// The kernel cache: compiled region loops by the region body's text, so graphs that share a region
// compile it once. Bounded (least recently used out), since every kernel is machine code in the JIT; a
// kernel that leaves the cache lives on in the programs that hold it.
#include <unistd.h>

#include <algorithm>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backends/cpu/emitter.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/kernel.h"
#include "core/environment.h"
#include "core/runtime_context.h"
#include "ir/graph.h"
#include "runtime/persistent_cache.h"
#include "xlite/math_mode.h"

namespace xlite::backends::cpu {
namespace {

struct KernelCache final : RuntimeState {
  mutable std::mutex mutex;
  std::list<std::pair<std::string, CompiledKernel>> lru;  // most recent first
  std::unordered_map<std::string, std::list<std::pair<std::string, CompiledKernel>>::iterator> index;
  int64_t capacity = env::settings().kernel_cache_size;
  int64_t compiled = 0;
  int64_t hits = 0;
  int64_t names = 0;  // entry symbols are unique within the JIT

  void evict_locked() {
    while (static_cast<int64_t>(lru.size()) > capacity) {
      index.erase(lru.back().first);
      lru.pop_back();
    }
  }
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return std::to_string(lru.size()) + " of " + std::to_string(capacity) + " kernels; " + std::to_string(compiled) +
           " compiled, " + std::to_string(hits) + " reused";
  }
  void clear_cache() override {
    decltype(lru) dropped;  // destroyed after the lock is released: freeing machine code takes a while
    std::lock_guard lock(mutex);
    dropped.swap(lru);
    index.clear();
  }
};

KernelCache& kernel_cache() { return runtime_context::state<KernelCache>("kernel cache"); }

// The region's text, after lines that name the math modes. Every CPU device keeps its data in host
// memory, so one loop serves a region on any of them.
std::string kernel_key(const ir::Graph& body, KernelMode mode) {
  std::string key =
      std::string(mode.fast_math ? "# fast math\n" : "") + (mode.excess_precision ? "# excess precision\n" : "");
  if (std::all_of(body.instrs.begin(), body.instrs.end(), [](const ir::Instr& i) { return i.device == Device{}; }))
    return key + ir::to_text(body);
  ir::Graph on_any_device = body;
  for (ir::Instr& instr : on_any_device.instrs) instr.device = Device{};
  return key + ir::to_text(on_any_device);
}

// Whether excess precision can change the body's code: only 16-bit float values are kept in f32 under it, so
// the other kernels are the same in both modes and keep one key.
bool has_16_bit_floats(const ir::Graph& body) {
  return std::any_of(body.instrs.begin(), body.instrs.end(),
                     [](const ir::Instr& i) { return is_16_bit_float(i.dtype); });
}

// What the persistent cache keeps of a kernel: its entry symbol, a NUL, then its object file.
std::string kernel_blob(const std::string& entry, const std::string& object) { return entry + '\0' + object; }

// The kernel a persistent cache entry holds, linked into the JIT; nothing when the entry cannot serve (a
// live module defines its symbol, or the object does not link).
std::optional<JitCode> load_kernel(const std::string& persistent_key) {
  std::optional<std::string> blob = runtime::persistent_cache::load(persistent_key);
  if (!blob) return std::nullopt;
  const size_t end = blob->find('\0');
  if (end == std::string::npos) return std::nullopt;
  return Jit::instance().add_object(std::string_view(*blob).substr(end + 1), blob->substr(0, end));
}

// An entry symbol no live module defines. The process id keeps apart the names of kernels that other
// processes compiled into the persistent cache.
std::string fresh_entry_name(KernelCache& cache) {
  static const std::string prefix = "xlite_kernel_" + std::to_string(getpid()) + "_";
  std::string name;
  do {
    std::lock_guard lock(cache.mutex);
    name = prefix + std::to_string(cache.names++);
  } while (Jit::instance().is_live(name));
  return name;
}

}  // namespace

CompiledKernel compile_kernel(const ir::Graph& body) {
  const KernelMode mode{is_fast_math(), is_excess_precision() && has_16_bit_floats(body)};
  std::string key = kernel_key(body, mode);
  KernelCache& cache = kernel_cache();
  {
    std::lock_guard lock(cache.mutex);
    if (auto it = cache.index.find(key); it != cache.index.end()) {
      ++cache.hits;
      cache.lru.splice(cache.lru.begin(), cache.lru, it->second);
      return it->second->second;
    }
  }
  // The region's text is the kernel's source; the fingerprint is everything else its machine code depends on.
  const std::string persistent_key =
      runtime::persistent_cache::enabled() ? Jit::instance().fingerprint() + "\n" + key : std::string();
  std::optional<JitCode> code = persistent_key.empty() ? std::nullopt : load_kernel(persistent_key);
  if (!code) {
    const std::string name = fresh_entry_name(cache);
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("xlite_kernel", *context);
    emit_kernel(body, *context, *module, name, mode);
    std::string object;
    code = Jit::instance().add(std::move(module), std::move(context), name, persistent_key.empty() ? nullptr : &object);
    if (!object.empty()) runtime::persistent_cache::store(persistent_key, kernel_blob(name, object));
  }
  CompiledKernel kernel{reinterpret_cast<KernelFn>(code->entry), code->code_bytes, std::move(code->owner)};
  std::lock_guard lock(cache.mutex);
  ++cache.compiled;
  if (auto it = cache.index.find(key); it != cache.index.end()) return it->second->second;  // another thread won
  cache.lru.emplace_front(key, kernel);
  cache.index.emplace(std::move(key), cache.lru.begin());
  cache.evict_locked();
  return kernel;
}

int64_t kernels_compiled() {
  std::lock_guard lock(kernel_cache().mutex);
  return kernel_cache().compiled;
}
int64_t kernel_cache_hits() {
  std::lock_guard lock(kernel_cache().mutex);
  return kernel_cache().hits;
}
int64_t kernels_cached() {
  std::lock_guard lock(kernel_cache().mutex);
  return static_cast<int64_t>(kernel_cache().lru.size());
}
int64_t jit_modules_alive() { return Jit::instance().modules_alive(); }

void set_kernel_cache_size(int64_t kernels) {
  KernelCache& cache = kernel_cache();
  std::lock_guard lock(cache.mutex);
  cache.capacity = kernels < 1 ? 1 : kernels;
  cache.evict_locked();
}

}  // namespace xlite::backends::cpu
