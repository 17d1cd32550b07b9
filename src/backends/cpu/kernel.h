#pragma once
// Compiled region kernels. The LLVM types stay inside this folder's .cpp files.
#include <cstdint>
#include <memory>

#include "ir/graph.h"

// Integer power for generated code; a negative exponent is reported through status.
extern "C" int64_t xlite_cpu_ipow(int64_t base, int64_t exponent, int64_t* status);

namespace xlite::backends::cpu {

// Computes elements [begin, end) of the region's output. buffers holds the region's inputs then its
// output. A bad index value is reported through status (see KernelStatus) instead of being read.
using KernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end, int64_t* status);

struct KernelStatus {
  int64_t failed = 0;  // nonzero when an index was out of range
  int64_t value = 0;   // the bad index
  int64_t size = 0;    // the size of the dim it indexed
  int64_t instr = 0;   // the region instruction that read it
};

struct CompiledKernel {
  KernelFn fn = nullptr;
  int64_t code_bytes = 0;            // object code of the module that holds it
  std::shared_ptr<const void> code;  // the machine code stays in the JIT while this is held
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
