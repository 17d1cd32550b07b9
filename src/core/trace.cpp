#include "core/trace.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/environment.h"
#include "core/runtime_context.h"

namespace xlite::trace {
namespace {

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// Small thread numbers, in the order threads first record: the trace's tracks.
int thread_number() {
  static std::atomic<int> next{1};
  thread_local const int mine = next.fetch_add(1);
  return mine;
}

// Timestamps count from the library's load, so that spans begun before the first event are not negative.
const int64_t g_origin_ns = now_ns();

struct Trace final : RuntimeState {
  std::mutex mutex;
  std::vector<std::string> events;  // each one JSON object
  std::string describe() const override {
    return std::to_string(events.size()) + " events for " + env::settings().profile_trace;
  }
  double micros(int64_t ns) const { return static_cast<double>(ns - g_origin_ns) * 1e-3; }
  void add(std::string event) {
    std::lock_guard lock(mutex);
    events.push_back(std::move(event));
  }
  // At exit: a file written whole, then renamed, so a reader never sees half a trace.
  void write() {
    std::lock_guard lock(mutex);
    const std::string& path = env::settings().profile_trace;
    const std::string temp = path + ".part";
    std::FILE* file = std::fopen(temp.c_str(), "w");
    if (!file) {
      std::fprintf(stderr, "[xlite] XLITE_PROFILE: cannot write %s\n", path.c_str());
      return;
    }
    std::fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", file);
    std::fputs("{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"xlite\"}}", file);
    for (const std::string& event : events) {
      std::fputs(",\n", file);
      std::fputs(event.c_str(), file);
    }
    std::fputs("\n]}\n", file);
    const bool ok = std::fclose(file) == 0;
    if (!ok || std::rename(temp.c_str(), path.c_str()) != 0)
      std::fprintf(stderr, "[xlite] XLITE_PROFILE: cannot write %s\n", path.c_str());
  }
};

Trace& the_trace() {
  static Trace& t = []() -> Trace& {
    Trace& made = runtime_context::state<Trace>("profile trace");
    std::atexit([] { the_trace().write(); });
    return made;
  }();
  return t;
}

}  // namespace

bool read_enabled() { return !env::settings().profile_trace.empty(); }

void span(std::string_view category, std::string_view name, int64_t begin_ns, int64_t end_ns) {
  Trace& t = the_trace();
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "\"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, \"tid\": %d", t.micros(begin_ns),
                static_cast<double>(end_ns - begin_ns) * 1e-3, thread_number());
  t.add("{\"ph\": \"X\", \"cat\": \"" + escaped(category) + "\", \"name\": \"" + escaped(name) + "\", " + numbers +
        "}");
}

void counter(std::string_view name, int64_t value, int64_t at_ns) {
  Trace& t = the_trace();
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "\"ts\": %.3f, \"pid\": 1, \"args\": {\"bytes\": %lld}", t.micros(at_ns),
                static_cast<long long>(value));
  t.add("{\"ph\": \"C\", \"name\": \"" + escaped(name) + "\", " + numbers + "}");
}

}  // namespace xlite::trace
