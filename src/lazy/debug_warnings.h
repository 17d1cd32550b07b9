#pragma once
// XLITE_DEBUG's automatic warnings, each printed at most once per process, once ten syncs have run:
//   "CompileTime too frequent": half or more of the syncs compiled, five or more of them at a call site that
//     compiled before; names the inputs whose shapes keep changing there and suggests padding or bucketing;
//   "TransferFromDevice too frequent": half or more of the syncs were value reads, which split the graph;
//     names the user line that reads most often;
//   "CompileTime dominates": after the first ten syncs (warm-up), compiling took more than half of the time
//     (checked from the thirtieth sync on).
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace xlite::lazy::debug_warnings {

// A new program compiled at a call site ("" when the site is unknown).
void note_compiled(const std::string& site, const ir::Graph& graph, int64_t compile_ns);
// A sync that ran a graph (eager ops are not counted); a value read names where it was read.
void note_sync(bool value_read);

}  // namespace xlite::lazy::debug_warnings
