#pragma once
// The registries of live tensors whose values are pending: sync() computes exactly those of the calling
// thread. Each thread has its own registry, so one thread's sync never sweeps in (or walks) a graph
// another thread is still building. Thread-safe.
#include <cstddef>
#include <memory>
#include <vector>

namespace xlite {

class TensorImpl;

namespace live_tensors {
struct Registry;

// A tensor's place in a registry, kept inside the tensor: every lazy op registers its result, so
// registering must not allocate. Touched only under its registry's lock.
struct Link {
  TensorImpl* prev = nullptr;
  TensorImpl* next = nullptr;
  Registry* owner = nullptr;  // the registry that lists it, or null
};

// Lists the tensor in the calling thread's registry (moving it there from another thread's).
void add(TensorImpl* impl);
void remove(TensorImpl* impl);
// The calling thread's pending tensors in creation order, each held so that no other thread can destroy
// it while a sync uses it. A tensor that is being destroyed elsewhere is left out.
std::vector<std::shared_ptr<TensorImpl>> pending_in_order();
// Pending tensors of every thread: a sync that computes all of them knows no other IR can read a buffer.
size_t pending_count();
}  // namespace live_tensors

}  // namespace xlite
