#pragma once
// Process-wide counters and timed metrics, thread-safe. Times are in nanoseconds.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xlite::metrics {

struct MetricData {
  int64_t samples = 0;
  double total = 0;            // sum of all samples
  std::vector<double> recent;  // the last samples, oldest first (at most 1024)
};

// Counters and metrics that never recorded anything since the last clear_all() are not listed.
// Counters: UncachedCompile, CachedCompile, Execute, Sync, CreateTensor, DestroyTensor, TransferToDevice,
// TransferFromDevice, EagerOp, ...
int64_t counter_value(std::string_view name);  // 0 if never touched
std::vector<std::string> counter_names();
// Timed metrics: CompileTime, ExecuteTime, TracingTime, EagerOpCompileTime, EagerOpExecuteTime, ...
MetricData metric_data(std::string_view name);  // empty if never recorded
std::vector<std::string> metric_names();
// Every metric (total, mean, rate, 50/90/99th percentiles of the recent samples) and counter, in
// PyTorch/XLA's format.
std::string metrics_report();
// The same for the few that say whether a program compiles too often or reads values back too often:
// CompileTime, ExecuteTime, TracingTime, the eager-op times, compiles, syncs, executions and transfers.
std::string short_metrics_report();
void clear_all();

// Recording (used by the runtime; users may add their own).
void increment_counter(std::string_view name, int64_t delta = 1);
void add_sample(std::string_view name, double value);

// The same, looked up by name once: for hot paths (every tensor, every eager op), where a lookup by name
// under the registry's lock would cost more than the work it counts. Handles stay valid for the whole
// process, across clear_all().
class Counter {
 public:
  explicit Counter(std::string_view name);
  void increment(int64_t delta = 1) const { value_->fetch_add(delta, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t>* value_;
};

struct Series;
class Metric {
 public:
  explicit Metric(std::string_view name);
  void add_sample(double value) const;

 private:
  Series* series_;
};

}  // namespace xlite::metrics
