// Resident memory of this process, as the kernel counts it (/proc/self/status), so every framework's training
// step is measured the same way, whatever allocator it uses. bench/train_peers.py reads the same fields.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace bench_memory {

// A `Vm...:  N kB` field of /proc/self/status in MiB ("VmRSS": resident now, "VmHWM": the peak since the
// process started or since reset_peak_rss()); -1 where the field cannot be read.
inline double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream words(line.substr(field.size() + 1));
    double kib = -1;
    words >> kib;
    return kib < 0 ? -1 : kib / 1024.0;
  }
  return -1;
}

// Sets VmHWM to the current resident size (Linux: "5" to /proc/PID/clear_refs), so the next peak read
// belongs to what runs after this call.
inline void reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

}  // namespace bench_memory
