#pragma once
// XLITE_PROFILE=trace.json: a Chrome/Perfetto trace (the JSON trace-event format) of where time goes: syncs,
// the tracing before them, compilations and their phases, executions and every kernel in them as spans, and
// each device's memory in use as a counter track. Written when the process exits; load it in
// ui.perfetto.dev or chrome://tracing, or draw it with tools/trace_png.py. Off: one branch on a cached flag.
#include <cstdint>
#include <string_view>

#include "core/clock.h"

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

// A span from construction to destruction, when tracing.
class Scope {
 public:
  Scope(const char* category, std::string_view name) : category_(category), name_(name) {
    if (enabled()) begin_ = now_ns();
  }
  ~Scope() {
    if (enabled()) span(category_, name_, begin_, now_ns());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* category_;
  std::string_view name_;
  int64_t begin_ = 0;
};

}  // namespace xlite::trace
