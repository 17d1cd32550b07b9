#include "core/debug_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/environment.h"
#include "core/runtime_context.h"

namespace xlite::debug_output {
namespace {
struct Sink final : RuntimeState {
  std::mutex mutex;
  std::FILE* file = nullptr;  // XLITE_DEBUG_FILE, opened on the first report; never closed (reports at exit)
  bool failed = false;        // the file could not be opened: reports go to stderr, after one warning
  std::string describe() const override {
    const std::string& path = env::settings().debug_file;
    return "debug level " + std::to_string(env::settings().debug) + ", to " + (path.empty() ? "stderr" : path);
  }
};
Sink& sink() { return runtime_context::state<Sink>("debug output"); }
}  // namespace

int read_level() { return env::settings().debug; }

void write(std::string_view report) {
  Sink& s = sink();
  std::lock_guard lock(s.mutex);
  const std::string& path = env::settings().debug_file;
  if (!path.empty() && !s.file && !s.failed) {
    s.file = std::fopen(path.c_str(), "a");
    if (!s.file) {
      s.failed = true;
      std::fprintf(stderr, "[xlite] warning: XLITE_DEBUG_FILE=%s cannot be opened (%s): debug output goes to stderr\n",
                   path.c_str(), std::strerror(errno));
    }
  }
  std::FILE* out = s.file ? s.file : stderr;
  std::fwrite(report.data(), 1, report.size(), out);
  std::fflush(out);
}

}  // namespace xlite::debug_output
