#include "xlite/metrics.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace xlite::metrics {
namespace {
constexpr size_t kRecent = 1024;

struct Registry {
  std::mutex mutex;
  std::map<std::string, int64_t> counters;
  std::map<std::string, MetricData> metrics;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: metrics may be recorded during exit
  return *r;
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

void increment_counter(const std::string& name, int64_t delta) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.counters[name] += delta;
}

void add_sample(const std::string& name, double value) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  MetricData& m = r.metrics[name];
  ++m.samples;
  m.total += value;
  if (m.recent.size() == kRecent) m.recent.erase(m.recent.begin());
  m.recent.push_back(value);
}

int64_t counter_value(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second;
}

std::vector<std::string> counter_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, value] : r.counters) names.push_back(name);
  return names;
}

MetricData metric_data(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? MetricData{} : it->second;
}

std::vector<std::string> metric_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, value] : r.metrics) names.push_back(name);
  return names;
}

std::string metrics_report() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::ostringstream out;
  for (const auto& [name, m] : r.metrics) {
    out << "Metric: " << name << "\n  TotalSamples: " << m.samples << "\n  Accumulator: " << format_ns(m.total);
    if (m.samples > 0) out << "\n  Mean: " << format_ns(m.total / static_cast<double>(m.samples));
    out << "\n";
  }
  for (const auto& [name, value] : r.counters) out << "Counter: " << name << "\n  Value: " << value << "\n";
  return out.str();
}

void clear_all() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.counters.clear();
  r.metrics.clear();
}

}  // namespace xlite::metrics
