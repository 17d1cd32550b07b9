#pragma once
// Streaming (non-temporal) stores for outputs larger than the last-level cache. A store to a line not in
// cache first reads the line (a read for ownership); a loop writing a buffer far larger than the caches
// gains nothing from that read and loses memory bandwidth to it: an RMSNorm over 64M f32 on two Zen 4
// cores took 21 ms with plain vector stores and 11.5 ms with streaming ones (a C loop, the same work).
// The emitter runs each such output loop in two versions, one for a 64-byte aligned start (whose vector
// stores become streaming after optimization) and one plain, and ends the kernel with a store fence:
// streaming stores are weakly ordered, and the next kernel may run on another thread.
#include <cstdint>

#include <llvm/IR/Module.h>

#include "ir/graph.h"

namespace xlite::backends::cpu {

// Outputs of at least this many bytes are written with streaming stores: twice the 32 MiB last-level
// cache of the machines measured, so that an output the next kernel could still read from cache is not
// pushed out to memory. A constant, so that a kernel's code depends only on its body.
inline constexpr int64_t kStreamingStoreBytes = int64_t{64} << 20;

// Streamed stores start on a line of this many bytes (also an AVX-512 vector); thread chunks of a
// streamed output start on such lines.
inline constexpr int64_t kStreamLineBytes = 64;

// The function attribute that asks mark_streaming_stores to make a kernel's output stores streaming.
inline constexpr const char* kStreamingStoresAttribute = "xlite-streaming-stores";

// Whether the loop that writes `root` (an elementwise root, not a reduction) streams its stores on this
// host (x86-64: other hosts keep plain stores).
bool streams_output(const ir::Instr& root);

// After optimization: in functions with kStreamingStoresAttribute, every vector store of 32 bytes or more
// whose alignment covers its size and that writes no stack slot becomes non-temporal. Run after the
// vectorizer, which declines to vectorize a loop whose scalar stores carry the hint.
void mark_streaming_stores(llvm::Module& module);

}  // namespace xlite::backends::cpu
