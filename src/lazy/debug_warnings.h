#pragma once
// XLITE_DEBUG's automatic warnings, each printed at most once per process, once ten syncs have run:
//   "CompileTime too frequent": half or more of the syncs compiled, five or more of them at a call site that
//     compiled before; names the inputs whose shapes keep changing there and suggests padding or bucketing;
//   "TransferFromDevice too frequent": half or more of the syncs were value reads, which split the graph;
//     names the user line that reads most often;
//   "CompileTime dominates": after the first ten syncs (warm-up), compiling took more than half of the time
//     (checked from the thirtieth sync on);
//   "TracingTime dominates": over the same window, building graphs on the host took more than half of the
//     time and more than twice as long as running them: the steps are bound by tracing, and compile(fn),
//     which replays a step without tracing it, would help.
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace xlite::lazy::debug_warnings {

// A new program compiled at a call site ("" when the site is unknown).
void note_compiled(const std::string& site, const ir::Graph& graph, int64_t compile_ns);
// A sync that ran a graph (eager ops are not counted), with the tracing time it ended and its run time; a
// value read names where it was read.
void note_sync(bool value_read, int64_t tracing_ns, int64_t execute_ns);

// The syncs after the warm-up ones, which the time warnings are decided on.
struct Window {
  int64_t syncs = 0, compiles = 0;
  int64_t elapsed_ns = 0, tracing_ns = 0, compile_ns = 0, execute_ns = 0;
};
// The warning's text when the window calls for it, else "".
std::string compile_time_warning(const Window& window);
std::string tracing_time_warning(const Window& window);

}  // namespace xlite::lazy::debug_warnings
