#include "runtime/step_profile.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/environment.h"
#include "core/debug_output.h"
#include "core/runtime_context.h"

namespace xlite::runtime {

// A step's first call pays what happens once (oneDNN generating its kernels, first touches of new pages),
// often more than all its later calls: the table shows it apart from the fastest call, so a one-time cost
// does not read as a per-call one.
struct StepProfile::Entry {
  std::atomic<int64_t> calls{0}, nanoseconds{0};
  std::atomic<int64_t> first_ns{-1}, best_ns{std::numeric_limits<int64_t>::max()};
};

namespace {
class Table;
Table& table();

class Table final : public RuntimeState {
 public:
  // Printed once at exit.
  Table() {
    std::atexit([] { table().print(); });
  }
  std::string describe() const override {
    std::lock_guard lock(mutex_);
    return std::to_string(entries_.size()) + " step labels";
  }
  StepProfile::Entry* entry(const std::string& label) {
    std::lock_guard lock(mutex_);
    std::unique_ptr<StepProfile::Entry>& e = entries_[label];
    if (!e) e = std::make_unique<StepProfile::Entry>();
    return e.get();
  }
  void print() {
    std::vector<std::pair<int64_t, const std::string*>> rows;
    int64_t total = 0;
    for (const auto& [label, e] : entries_) {
      rows.emplace_back(e->nanoseconds.load(), &label);
      total += e->nanoseconds.load();
    }
    if (rows.empty()) return;
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr,
                 "xlite profile: %.3f ms in compiled steps (first: a step's first call, best: its fastest)\n"
                 "%10s %7s %9s %10s %10s  %s\n",
                 total * 1e-6, "ms", "%", "calls", "first ms", "best ms", "step");
    for (const auto& [ns, label] : rows) {
      const StepProfile::Entry& e = *entries_[*label];
      const int64_t calls = e.calls.load();
      std::fprintf(stderr, "%10.3f %6.1f%% %9lld ", ns * 1e-6, total ? 100.0 * ns / total : 0.0,
                   static_cast<long long>(calls));
      // A program compiled and never run (debug::memory_stats compiles without running) has no calls.
      if (calls > 0)
        std::fprintf(stderr, "%10.3f %10.3f  %s\n", e.first_ns.load() * 1e-6, e.best_ns.load() * 1e-6, label->c_str());
      else
        std::fprintf(stderr, "%10s %10s  %s\n", "-", "-", label->c_str());
    }
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<StepProfile::Entry>> entries_;
};
Table& table() { return runtime_context::state<Table>("step profile"); }
}  // namespace

bool profiling() {
  static const bool on = env::settings().profile;
  return on;
}

bool debug_kernels() { return debug_output::level() >= 3; }

void report_kernel(const std::string& label, int64_t nanoseconds, double flops, double bytes_moved) {
  const double ns = static_cast<double>(std::max<int64_t>(nanoseconds, 1));
  char line[512];
  std::snprintf(line, sizeof line, "[xlite] kernel %-48s %9.1f us %8.2f GFLOP/s %8.2f GB/s\n", label.c_str(), ns * 1e-3,
                flops / ns, bytes_moved / ns);
  debug_output::write(line);
}

StepProfile::StepProfile(const std::string& label) : entry_(table().entry(label)) {}

void StepProfile::add(int64_t nanoseconds) {
  entry_->calls.fetch_add(1, std::memory_order_relaxed);
  entry_->nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
  int64_t unset = -1;
  entry_->first_ns.compare_exchange_strong(unset, nanoseconds, std::memory_order_relaxed);
  int64_t best = entry_->best_ns.load(std::memory_order_relaxed);
  while (nanoseconds < best && !entry_->best_ns.compare_exchange_weak(best, nanoseconds, std::memory_order_relaxed)) {
  }
}

}  // namespace xlite::runtime
