#include "xlite/metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

#include "core/clock.h"
#include "core/runtime_context.h"

namespace xlite::metrics {
// The last kRecent samples in a ring, so that recording one costs the same however many were kept.
// Each series has its own lock: recording through a Metric handle never takes the registry's.
struct Series {
  std::mutex mutex;
  int64_t samples = 0;
  double total = 0;
  std::vector<double> ring;
  size_t next = 0;       // where the next sample goes once the ring is full
  int64_t first_ns = 0;  // when the first sample since start or clear_all came, for the rate

  void add(double value) {
    std::lock_guard lock(mutex);
    if (samples == 0) first_ns = now_ns();
    ++samples;
    total += value;
    if (ring.size() < kRecent) {
      ring.push_back(value);
    } else {
      ring[next] = value;
      next = (next + 1) % kRecent;
    }
  }
  void clear() {
    std::lock_guard lock(mutex);
    first_ns = 0;
    samples = 0;
    total = 0;
    ring.clear();
    next = 0;
  }
  static constexpr size_t kRecent = 1024;
};

namespace {
// Entries are never erased (clear_all zeroes them): handles point into the maps, whose nodes never move.
struct Registry final : RuntimeState {
  mutable std::mutex mutex;
  // Transparent comparison: recording by name looks up without building a std::string.
  std::map<std::string, std::atomic<int64_t>, std::less<>> counters;
  std::map<std::string, Series, std::less<>> metrics;
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return std::to_string(counters.size()) + " counters, " + std::to_string(metrics.size()) + " metrics";
  }
};

Registry& registry() { return runtime_context::state<Registry>("metrics"); }

std::atomic<int64_t>& counter_entry(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.counters.find(name);
  if (it == r.counters.end()) it = r.counters.try_emplace(std::string(name), 0).first;
  return it->second;
}

Series& metric_entry(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.metrics.find(name);
  if (it == r.metrics.end()) it = r.metrics.try_emplace(std::string(name)).first;
  return it->second;
}

std::string format_ns(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0fns", ns);
  return buf;
}
}  // namespace

void increment_counter(std::string_view name, int64_t delta) {
  counter_entry(name).fetch_add(delta, std::memory_order_relaxed);
}

void add_sample(std::string_view name, double value) { metric_entry(name).add(value); }

Counter::Counter(std::string_view name) : value_(&counter_entry(name)) {}

Metric::Metric(std::string_view name) : series_(&metric_entry(name)) {}
void Metric::add_sample(double value) const { series_->add(value); }

int64_t counter_value(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second.load(std::memory_order_relaxed);
}

std::vector<std::string> counter_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, value] : r.counters)
    if (value.load(std::memory_order_relaxed) != 0) names.push_back(name);
  return names;
}

MetricData metric_data(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return MetricData{};
  Series& m = it->second;
  std::lock_guard series_lock(m.mutex);
  MetricData data{m.samples, m.total, {}};
  data.recent.reserve(m.ring.size());
  for (size_t k = 0; k < m.ring.size(); ++k) data.recent.push_back(m.ring[(m.next + k) % m.ring.size()]);
  return data;
}

std::vector<std::string> metric_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (auto& [name, m] : r.metrics) {
    std::lock_guard series_lock(m.mutex);
    if (m.samples > 0) names.push_back(name);
  }
  return names;
}

namespace {
// PyTorch/XLA's report format: a block per metric with totals, rate and percentiles of the recent samples,
// then a block per counter. `wanted` picks the names (all when empty); entries never recorded are left out.
std::string report(const std::vector<std::string_view>& wanted) {
  auto listed = [&](std::string_view name) {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::ostringstream out;
  for (auto& [name, m] : r.metrics) {
    if (!listed(name)) continue;
    std::lock_guard series_lock(m.mutex);
    if (m.samples == 0) continue;
    const double seconds = static_cast<double>(now_ns() - m.first_ns) * 1e-9;
    std::vector<double> recent = m.ring;
    std::sort(recent.begin(), recent.end());
    auto percentile = [&](double p) { return recent[static_cast<size_t>(p * static_cast<double>(recent.size() - 1))]; };
    char rate[48];
    std::snprintf(rate, sizeof rate, "%.3g", seconds > 0 ? static_cast<double>(m.samples) / seconds : 0.0);
    out << "Metric: " << name << "\n  TotalSamples: " << m.samples << "\n  Accumulator: " << format_ns(m.total)
        << "\n  Mean: " << format_ns(m.total / static_cast<double>(m.samples)) << "\n  Rate: " << rate
        << " / second\n  Percentiles: 50%=" << format_ns(percentile(0.5)) << "; 90%=" << format_ns(percentile(0.9))
        << "; 99%=" << format_ns(percentile(0.99)) << " (of the last " << recent.size() << ")\n";
  }
  for (const auto& [name, value] : r.counters)
    if (int64_t v = value.load(std::memory_order_relaxed); v != 0 && listed(name))
      out << "Counter: " << name << "\n  Value: " << v << "\n";
  return out.str();
}
}  // namespace

std::string metrics_report() { return report({}); }

std::string short_metrics_report() {
  return report({"CompileTime", "ExecuteTime", "TracingTime", "EagerOpCompileTime", "EagerOpExecuteTime",
                 "UncachedCompile", "CachedCompile", "Sync", "Execute", "TransferToDevice", "TransferFromDevice"});
}

void clear_all() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& [name, value] : r.counters) value.store(0, std::memory_order_relaxed);
  for (auto& [name, m] : r.metrics) m.clear();
}

}  // namespace xlite::metrics
