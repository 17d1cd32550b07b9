// Tile products of bf16 operands into f32, for kernels that work in blocks, one block per thread at a time
// (flash attention's bf16 path). oneDNN 2.6's C API has dnnl_sgemm but no bf16 GEMM call, so each tile
// shape gets a matmul primitive (AVX-512 BF16's brgemm where the CPU has it), made once per thread and rerun
// with new data pointers. Each thread owns its primitives and their scratchpads, so tiles run side by side;
// they live in the runtime state "bf16 tiles", which xlite::clear_caches() empties.
#pragma once

#include <cstdint>

namespace xlite::kernels {

// C [m, n] = op(A) op(B), or C += op(A) op(B) when accumulate. A is [m, k] row-major with leading dimension
// lda, or [k, m] when a_transposed; B is [k, n] (ldb), or [n, k] when b_transposed; C is f32 (ldc). Runs on
// the calling thread. A failure raises xlite::Error naming `op`.
void gemm_bf16(const char* op, bool a_transposed, bool b_transposed, int64_t m, int64_t n, int64_t k, const uint16_t* a,
               int64_t lda, const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

}  // namespace xlite::kernels
