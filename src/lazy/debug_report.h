#pragma once
// XLITE_DEBUG's reports, PyTorch/XLA's PT_XLA_DEBUG analysis blocks with a recompilation explainer added:
//   level 1: for each new compilation, a Compilation Analysis block (cause, graph size, kernels and library
//            calls, compile time by phase, the user's call site, and what differs from the closest graph the
//            same call site compiled before) and a Post Compilation Analysis block (memory).
//   level 2: (XLITE_DEBUG=1) also an Execution Analysis block for each executed graph, eager ops excepted.
//   level 3: also eager ops, one line per executed kernel (runtime/step_profile.h), the fusion decisions
//            and the text-IR diff against that closest earlier graph.
// Written through core/debug_output.h (stderr, or XLITE_DEBUG_FILE).
#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "runtime/executable.h"

namespace xlite::lazy::debug_report {

// Called right after the compilation, on the thread whose call caused it (its stack names the call site).
// Returns that call site ("file:line (function)"), or "" when no user frame has line information.
std::string compilation(const char* cause, uint64_t hash, const ir::Graph& graph, const runtime::Executable& exe,
                        int64_t compile_ns);

struct Execution {
  const char* cause;
  uint64_t hash;
  int64_t inputs, input_bytes, outputs, output_bytes;
  int64_t run_ns;
};
void execution(const Execution& run);

// What differs between a graph and an earlier one, in one line: "input 0 shape f32[8,127] vs f32[8,128]",
// "graph differs at %3: mul vs add". Empty when they are equal.
std::string difference(const ir::Graph& now, const ir::Graph& before);

// A graph hash as every report, trace and saved graph prints it: 16 hex digits.
std::string hash_text(uint64_t hash);

// "1.5 MiB", "512 B".
std::string human_bytes(int64_t bytes);

}  // namespace xlite::lazy::debug_report
