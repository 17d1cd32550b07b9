#pragma once
// XLITE_PROFILE=trace.json: a Chrome/Perfetto trace (the JSON trace-event format) of where time goes: syncs,
// the tracing before them, compilations and their phases, executions and every kernel in them as spans, and
// each device's memory in use as a counter track. Written when the process exits; load it in
// ui.perfetto.dev or chrome://tracing, or draw it with tools/trace_png.py. Off: one branch on a cached flag.
#include <cstdint>
#include <string_view>

namespace xlite::trace {

bool read_enabled();
inline bool enabled() {
  static const bool on = read_enabled();
  return on;
}

// A span on the calling thread's track. Spans nest by time: a span recorded inside another's interval on
// the same thread is drawn under it.
void span(std::string_view category, std::string_view name, int64_t begin_ns, int64_t end_ns);
void counter(std::string_view name, int64_t value, int64_t at_ns);

}  // namespace xlite::trace
