#include "compiler/schedule.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/pipeline.h"
#include "core/check.h"
#include "passes/memory_plan.h"

namespace xlite::compiler {
namespace {

// Steps that can raise, and the steps they read, before all others: a training step's loss, which gathers
// its labels, is traced last, and left there it kept every weight update out of its weight's buffer; a
// decode step's check of its page indices reads lengths computed after the cache's update.
std::vector<bool> raising_or_read_by_raising(const ir::Graph& graph, const std::vector<Region>& regions) {
  std::unordered_map<int32_t, size_t> region_of_root;
  for (size_t i = 0; i < regions.size(); ++i) region_of_root[regions[i].root] = i;
  std::vector<bool> early(regions.size(), false);
  for (size_t i = regions.size(); i-- > 0;) {
    if (!early[i] && !may_raise(graph, regions[i])) continue;
    early[i] = true;
    for (int32_t v : regions[i].inputs)
      if (auto it = region_of_root.find(v); it != region_of_root.end()) early[it->second] = true;
  }
  return early;
}

// The most bytes a run holds at once in this order (arguments, outputs written so far, live intermediates).
int64_t planned_peak(const ir::Graph& graph, const std::vector<Region>& regions, const std::vector<size_t>& order) {
  std::vector<int32_t> writes;
  std::vector<std::vector<int32_t>> reads;
  for (size_t i : order) {
    writes.push_back(regions[i].root);
    reads.push_back(regions[i].inputs);
  }
  std::vector<int64_t> live;
  passes::plan_memory(graph, writes, reads, {}, &live);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

// The late regions (those not `early`) by list scheduling: among the ready ones, the one that frees the most
// bytes net of its result's, the earliest traced on a tie; a region that may write into a donated argument
// (a loop or custom call whose value is a graph output) only when nothing else is ready.
std::vector<size_t> by_memory(const ir::Graph& graph, const std::vector<Region>& regions,
                              const std::vector<bool>& early) {
  const size_t n = regions.size();
  std::vector<bool> is_output(graph.instrs.size(), false);
  for (int32_t o : graph.outputs) is_output[o] = true;
  std::unordered_map<int32_t, size_t> region_of_root;
  for (size_t i = 0; i < n; ++i) region_of_root[regions[i].root] = i;
  std::vector<int32_t> readers_left(graph.instrs.size(), 0);
  std::vector<int32_t> waiting_on(n, 0);
  std::vector<std::vector<size_t>> readers(n);
  for (size_t i = 0; i < n; ++i) {
    if (early[i]) continue;
    for (int32_t v : regions[i].inputs) {
      ++readers_left[v];
      auto it = region_of_root.find(v);
      if (it == region_of_root.end() || early[it->second]) continue;
      ++waiting_on[i];
      readers[it->second].push_back(i);
    }
  }
  auto sink = [&](size_t i) {
    return is_output[regions[i].root] &&
           (regions[i].kind == RegionKind::Loop || regions[i].kind == RegionKind::CustomCall);
  };
  auto net_freed = [&](size_t i) {
    int64_t freed = 0;
    for (int32_t v : regions[i].inputs)
      if (readers_left[v] == 1 && !is_output[v] && graph.instrs[v].op != ir::OpId::parameter)
        freed += ir::value_bytes(graph.instrs[v]);
    return freed - ir::value_bytes(graph.instrs[regions[i].root]);
  };
  std::vector<size_t> ready, order;
  for (size_t i = 0; i < n; ++i)
    if (!early[i] && waiting_on[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    // Each ready region's rank is computed once per round: not a sink first, then the most freed, then the
    // earliest traced.
    size_t best = 0;
    bool best_sink = sink(ready[0]);
    int64_t best_freed = net_freed(ready[0]);
    for (size_t k = 1; k < ready.size(); ++k) {
      const bool k_sink = sink(ready[k]);
      if (k_sink && !best_sink) continue;
      const int64_t freed = net_freed(ready[k]);
      if (k_sink == best_sink && (freed < best_freed || (freed == best_freed && ready[k] > ready[best]))) continue;
      best = k;
      best_sink = k_sink;
      best_freed = freed;
    }
    const size_t chosen = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(chosen);
    for (int32_t v : regions[chosen].inputs) --readers_left[v];
    for (size_t r : readers[chosen])
      if (--waiting_on[r] == 0) ready.push_back(r);
  }
  return order;
}

}  // namespace

std::vector<Region> schedule(const ir::Graph& graph, std::vector<Region> regions) {
  const std::vector<bool> early = raising_or_read_by_raising(graph, regions);
  std::vector<size_t> traced, listed;
  for (bool first : {true, false})
    for (size_t i = 0; i < regions.size(); ++i)
      if (early[i] == first) traced.push_back(i);
  for (size_t i = 0; i < regions.size(); ++i)
    if (early[i]) listed.push_back(i);
  for (size_t i : by_memory(graph, regions, early)) listed.push_back(i);
  XLITE_CHECK(listed.size() == regions.size(), "[schedule] " + std::to_string(regions.size() - listed.size()) +
                                                   " regions wait on inputs no region writes");
  const std::vector<size_t>& order =
      planned_peak(graph, regions, listed) < planned_peak(graph, regions, traced) ? listed : traced;
  std::vector<Region> scheduled;
  scheduled.reserve(regions.size());
  for (size_t i : order) scheduled.push_back(std::move(regions[i]));
  return scheduled;
}

}  // namespace xlite::compiler
