// Timing helpers shared by bench/xlite_bench.cpp and bench/torch_peer.cpp (two separate programs; this
// header uses only the standard library, so the libtorch peer does not link xlite).
// Every value is the median of g_runs timed runs taken after warm-up runs; output lines are `name value unit`.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench_timing {

inline int g_runs = 9;  // timed runs per measurement (>= 5)

inline double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline void emit(const std::string& name, double value, const char* unit) { std::printf("%s %.6g %s\n", name.c_str(), value, unit); }

// Times a and b alternately (warm-up runs first), so both see the same state of the machine.
// Returns the medians in seconds.
inline std::pair<double, double> time_pair(const std::function<void()>& a, const std::function<void()>& b, int warmup = 3) {
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
