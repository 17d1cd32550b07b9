#include "xlite/metrics.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace xlite::metrics {
namespace {
constexpr size_t kRecent = 1024;

// The last kRecent samples in a ring, so that recording one costs the same however many were kept.
struct Series {
  int64_t samples = 0;
  double total = 0;
  std::vector<double> ring;
  size_t next = 0;  // where the next sample goes once the ring is full
};

struct Registry {
  std::mutex mutex;
  // Transparent comparison: recording by name looks up without building a std::string.
  std::map<std::string, int64_t, std::less<>> counters;
  std::map<std::string, Series, std::less<>> metrics;
};

template <class Map>
typename Map::mapped_type& entry(Map& map, std::string_view name) {
  auto it = map.find(name);
  if (it == map.end()) it = map.emplace(std::string(name), typename Map::mapped_type{}).first;
  return it->second;
}

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

void increment_counter(std::string_view name, int64_t delta) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  entry(r.counters, name) += delta;
}

void add_sample(std::string_view name, double value) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Series& m = entry(r.metrics, name);
  ++m.samples;
  m.total += value;
  if (m.ring.size() < kRecent) {
    m.ring.push_back(value);
  } else {
    m.ring[m.next] = value;
    m.next = (m.next + 1) % kRecent;
  }
}

int64_t counter_value(std::string_view name) {
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

MetricData metric_data(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return MetricData{};
  const Series& m = it->second;
  MetricData data{m.samples, m.total, {}};
  data.recent.reserve(m.ring.size());
  for (size_t k = 0; k < m.ring.size(); ++k) data.recent.push_back(m.ring[(m.next + k) % m.ring.size()]);
  return data;
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
