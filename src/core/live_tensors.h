#pragma once
// The registry of live tensors whose values are pending: sync() computes exactly these. Thread-safe.
#include <cstddef>
#include <vector>

namespace xlite {

class TensorImpl;

namespace live_tensors {
void add(TensorImpl* impl);
void remove(TensorImpl* impl);
// Pending tensors in creation order.
std::vector<TensorImpl*> pending_in_order();
size_t pending_count();
}  // namespace live_tensors

}  // namespace xlite
