#pragma once
// Compiled region kernels. The LLVM types stay inside this folder's .cpp files.
#include <cstdint>
#include <memory>

#include "backends/codegen/element_failure.h"
#include "ir/graph.h"

// Integer power for generated code. The kernel flags a negative exponent of a base other than +-1 itself,
// before calling, and passes exponent 0 then.
extern "C" int64_t xlite_cpu_ipow(int64_t base, int64_t exponent);

namespace xlite::backends::cpu {

// Computes elements [begin, end) of the region's output. buffers holds the region's inputs then its
// output. A value an op cannot take (a bad index, an integer division by zero) is reported through
// status (see KernelStatus) instead of being used; the loop goes on with a harmless stand-in.
using KernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end, int64_t* status);

// What KernelStatus::failed holds: the element generators' failures (backends/codegen/element_failure.h).
using KernelFailure = codegen::ElementFailure;

// The failure a kernel keeps is that of the first failing instruction in program order, as the reference
// backend raises it; of that instruction's bad values, the largest the first failing chunk met (the
// reference names the first in memory order: the two differ only where several elements fail). The loops
// gather failures without a branch so that they stay vectorised; the status is written when a chunk ends.
// A region's instructions are in the graph's order, so `instr` compares across a region.
struct KernelStatus {
  int64_t failed = 0;  // a KernelFailure
  int64_t value = 0;
  int64_t size = 0;
  int64_t instr = 0;  // the region instruction that failed
  KernelFailure failure() const { return static_cast<KernelFailure>(failed); }
};

// clang's -fsanitize=function (part of -fsanitize=undefined) reads a type signature just before the
// entry of every function called through a pointer; LLVM-generated code has none, and a kernel that
// starts a page read the unmapped page below it (the fuzz build crashed there).
#if defined(__clang__)
#define XLITE_CALLS_GENERATED_CODE __attribute__((no_sanitize("function")))
#else
#define XLITE_CALLS_GENERATED_CODE
#endif

struct CompiledKernel {
  KernelFn fn = nullptr;
  int64_t code_bytes = 0;            // object code of the module that holds it
  std::shared_ptr<const void> code;  // the machine code stays in the JIT while this is held

  XLITE_CALLS_GENERATED_CODE void run(void* const* buffers, int64_t begin, int64_t end, int64_t* status) const {
    fn(buffers, begin, end, status);
  }
};

// Compiles (or finds in the kernel cache, keyed by the region's text) the loop for a region body whose
// output is a Loop or Reduce root. The cache keeps the most recently used kernels
// (XLITE_KERNEL_CACHE_SIZE, default 4096); a kernel it drops stays alive for the programs that run it
// and leaves the JIT with the last of them.
CompiledKernel compile_kernel(const ir::Graph& body);

// Kernels compiled and cache hits in this process, kernels in the cache now, and modules of machine code
// the JIT holds now.
int64_t kernels_compiled();
int64_t kernel_cache_hits();
int64_t kernels_cached();
int64_t jit_modules_alive();
// Sets the kernel cache's bound (tests); drops the least recently used kernels past it.
void set_kernel_cache_size(int64_t kernels);

}  // namespace xlite::backends::cpu
