#pragma once
// Looking inside: the pending graph as text and why the last sync happened.
#include <cstdint>
#include <string>
#include <vector>

#include "xlite/tensor.h"

namespace xlite::debug {

// The pending graph that computes these tensors, in xlite's text IR (parseable back to the same graph).
std::string graph_text(const std::vector<Tensor>& tensors);
// The structural hash of that graph: equal for the same ops, shapes and dtypes whatever the data.
uint64_t graph_hash(const std::vector<Tensor>& tensors);

struct SyncInfo {
  std::string cause;  // "user sync", "value read (item/to_vector/print)", "eager op", ...
  uint64_t graph_hash = 0;
  int64_t num_inputs = 0;
  int64_t num_outputs = 0;
  bool cache_hit = false;
};
// The last sync that ran a graph.
SyncInfo last_sync();

}  // namespace xlite::debug
