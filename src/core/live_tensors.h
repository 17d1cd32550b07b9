#pragma once
// The registry of live tensors whose values are pending: sync() computes exactly these. Thread-safe.
#include <cstddef>
#include <vector>

namespace xlite {

class TensorImpl;

namespace live_tensors {
// A tensor's place in the registry, kept inside the tensor: every lazy op registers its result, so
// registering must not allocate. Touched only under the registry's lock.
struct Link {
  TensorImpl* prev = nullptr;
  TensorImpl* next = nullptr;
  bool listed = false;
};

void add(TensorImpl* impl);
void remove(TensorImpl* impl);
// Pending tensors in creation order.
std::vector<TensorImpl*> pending_in_order();
size_t pending_count();
}  // namespace live_tensors

}  // namespace xlite
