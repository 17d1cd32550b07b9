// Timing and output helpers shared by every bench program (xlite's and the libtorch peers; this
// header uses only the standard library, so the libtorch peer does not link xlite).
// Every value is the median of g_runs timed runs taken after warm-up runs; output lines are `name value unit`.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <initializer_list>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace bench_timing {

inline int g_runs = 9;  // timed runs per measurement (>= 5)

// `PROGRAM [what] [runs]`: sets g_runs (at least 5) and returns what to run ("all" by default).
inline std::string parse_args(int argc, char** argv) {
  if (argc > 2) g_runs = std::max(5, std::atoi(argv[2]));
  return argc > 1 ? argv[1] : "all";
}

// " NAME=value" for each environment variable ("(unset)" when absent), for each program's '# settings:' line.
inline std::string env_settings(std::initializer_list<const char*> names) {
  std::string text;
  for (const char* name : names) {
    const char* v = std::getenv(name);
    text += std::string(" ") + name + "=" + (v ? v : "(unset)");
  }
  return text;
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline void emit(const std::string& name, double value, const char* unit) {
  std::printf("%s %.6g %s\n", name.c_str(), value, unit);
}

// A value that is not a timing: a loss or gradient summary that bench/table.awk compares across programs.
inline void emit_check(const std::string& name, double value) { std::printf("%s %.9g check\n", name.c_str(), value); }

// Notes: '#' lines that bench/table.awk skips and bench/run.sh prints below the table.
inline void note(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) std::printf("# %s\n", line.c_str());
}

// The instructions in a graph's text IR (lines starting with '%').
inline int count_nodes(const std::string& graph_text) {
  int nodes = 0;
  std::istringstream in(graph_text);
  for (std::string line; std::getline(in, line);) {
    size_t s = line.find_first_not_of(' ');
    if (s != std::string::npos && line[s] == '%') ++nodes;
  }
  return nodes;
}

// The median of g_runs calls of fn back to back, in seconds, after `warmup` calls: each call runs on the
// caches the one before it left.
inline double time_one(const std::function<void()>& fn, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int r = 0; r < g_runs; ++r) {
    double t0 = now_s();
    fn();
    t.push_back(now_s() - t0);
  }
  return median(t);
}

// Times a and b alternately (warm-up runs first), so both see the same state of the machine.
// Returns the medians in seconds.
inline std::pair<double, double> time_pair(const std::function<void()>& a, const std::function<void()>& b,
                                           int warmup = 3) {
  for (int i = 0; i < warmup; ++i) {
    a();
    b();
  }
  std::vector<double> ta, tb;
  for (int r = 0; r < g_runs; ++r) {
    // Alternate which side goes first, so neither always runs on the caches the other left.
    const std::function<void()>& first = r % 2 ? b : a;
    const std::function<void()>& second = r % 2 ? a : b;
    double t0 = now_s();
    first();
    double t1 = now_s();
    second();
    double t2 = now_s();
    (r % 2 ? tb : ta).push_back(t1 - t0);
    (r % 2 ? ta : tb).push_back(t2 - t1);
  }
  return {median(ta), median(tb)};
}

// A plain memcpy of `bytes` bytes between two buffers touched beforehand (no page faults in the timing).
struct Memcpy {
  std::vector<char> src, dst;
  explicit Memcpy(size_t bytes) : src(bytes, 1), dst(bytes, 2) {}
  void operator()() {
    std::memcpy(dst.data(), src.data(), src.size());
    asm volatile("" ::"r"(dst.data()) : "memory");
  }
};

}  // namespace bench_timing
