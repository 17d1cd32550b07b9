#pragma once
// The runtime context: every piece of process-wide state xlite keeps, each made on first use and
// registered here, so that all of it is listed in one place (debug::runtime_state()) and its caches are
// emptied together (xlite::clear_caches(), like jax.clear_caches()). States are never destroyed: tensors
// and programs may still be released during exit, after static destruction has begun.
//
// The states, in the order a first op usually makes them (name, owner: what it holds). Caches are marked.
//   settings, core/environment.cpp: the XLITE_* variables, read and checked once
//   default dtype, core/dtype.cpp: the floating dtype of literals and float results (set_default_dtype)
//   live tensors, tensor/live_tensors.cpp: each thread's pending tensors, for sync()
//   random, core/random_state.cpp: the Philox seed and offset of the next draw
//   allocators, runtime/allocator.cpp: one caching allocator per device (cache: freed blocks)
//   metrics, debug/metrics.cpp: counters and timed metrics
//   sync, lazy/sync.cpp: the sync lock, its scratch and the last sync's facts
//   backends, compiler/compile.cpp: the backend registry and the backends made
//   executable cache, compiler/cache.cpp: programs by graph (cache: LRU of XLITE_COMPILATION_CACHE_SIZE)
//   kernel cache, backends/cpu/kernel_cache.cpp: loops by region (cache: LRU of XLITE_KERNEL_CACHE_SIZE)
//   jit, backends/cpu/jit.cpp: the LLVM ORC JIT that holds the kernels' machine code
//   onednn, backends/cpu/library.cpp: the oneDNN engine and stream
//   bf16 tiles, kernels/bf16_gemm.cpp: oneDNN matmul primitives of bf16 tile products, by thread and shape
//     (cache: all of them)
//   step profile, runtime/step_profile.cpp: XLITE_PROFILE's time per step label
// compile(fn) keeps its programs in the Compiled object the user holds, not here.
//
// The math modes (fast math and excess precision, compiler/math_mode.cpp) are process-wide and read when a
// program compiles. The other modes are thread-scoped: eager mode (lazy/sync.cpp), grad mode
// (tensor/grad_mode.cpp), the public op being built (ops/op_support.cpp), compile(fn)'s recording
// (core/step_recording.cpp) and the in-place log of a running step (tensor/tensor_impl.cpp) are
// thread_local, so tracing on one thread never switches another thread's mode.
#include <string>
#include <utility>
#include <vector>

namespace xlite {

// What a piece of process-wide state tells the context about itself.
class RuntimeState {
 public:
  virtual ~RuntimeState() = default;
  virtual std::string describe() const = 0;  // what it holds now, in a few words
  virtual void clear_cache() {}              // drops what can be made again; state that is no cache keeps all
  virtual void release_memory() {}           // after every clear_cache: gives freed memory back
};

namespace runtime_context {

void add(const char* name, RuntimeState* state);

template <class T>
[[gnu::noinline]] T* make_state(const char* name) {
  T* s = new T();
  add(name, s);
  return s;
}

// The process's one T, made and registered under `name` on first use (thread-safe). After the first use
// this is one guard check, inlined: eager ops reach several states per op.
template <class T>
T& state(const char* name) {
  static T* const made = make_state<T>(name);
  return *made;
}

// Every state made so far, in the order they were made: (name, describe()).
std::vector<std::pair<std::string, std::string>> describe_all();
// Empties every cache (compiled programs, compiled kernels), then gives the memory the allocators keep back.
void clear_caches();

}  // namespace runtime_context
}  // namespace xlite
