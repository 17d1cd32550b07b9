#pragma once
// Compiled region kernels. The LLVM types stay inside this folder's .cpp files.
#include <cstdint>

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
  int64_t code_bytes = 0;  // object code of the module that holds it
};

// Compiles (or finds in the kernel cache, keyed by the region's text) the loop for a region body whose
// output is a Loop or Reduce root.
CompiledKernel compile_kernel(const ir::Graph& body);

// Kernels compiled and cache hits in this process.
int64_t kernels_compiled();
int64_t kernel_cache_hits();

}  // namespace xlite::backends::cpu
