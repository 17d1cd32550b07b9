#pragma once
// Process-wide counters and timed metrics, thread-safe. Times are in nanoseconds.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xlite::metrics {

struct MetricData {
  int64_t samples = 0;
  double total = 0;               // sum of all samples
  std::vector<double> recent;     // the last samples, oldest first (at most 1024)
};

// Counters: UncachedCompile, CachedCompile, Execute, Sync, CreateTensor, DestroyTensor, TransferToDevice,
// TransferFromDevice, EagerOp, ...
int64_t counter_value(std::string_view name);  // 0 if never touched
std::vector<std::string> counter_names();
// Timed metrics: CompileTime, ExecuteTime, TracingTime, EagerOpCompileTime, EagerOpExecuteTime, ...
MetricData metric_data(std::string_view name);  // empty if never recorded
std::vector<std::string> metric_names();
std::string metrics_report();
void clear_all();

// Recording (used by the runtime; users may add their own).
void increment_counter(std::string_view name, int64_t delta = 1);
void add_sample(std::string_view name, double value);

}  // namespace xlite::metrics
