#include "tensor/live_tensors.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/runtime_context.h"
#include "tensor/tensor_impl.h"

namespace xlite::live_tensors {

// A doubly linked list through the tensors' links, in no particular order (an in-place op registers an
// old tensor again); pending_in_order sorts by creation id, once per sync rather than once per op.
struct Registry {
  std::mutex mutex;
  TensorImpl* head = nullptr;
  size_t count = 0;
  bool in_use = false;  // a live thread owns it
};

namespace {
// Every registry ever made, never destroyed: tensors may outlive the thread that made them (and die
// during exit). A thread that ends gives its registry back; a new thread takes an empty one.
struct Registries final : RuntimeState {
  mutable std::mutex mutex;
  std::vector<Registry*> all;
  std::atomic<size_t> pending{0};
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return std::to_string(pending.load()) + " pending tensors, " + std::to_string(all.size()) + " thread registries";
  }
};
Registries& registries() { return runtime_context::state<Registries>("live tensors"); }

Registry* take_registry() {
  Registries& rs = registries();
  std::lock_guard lock(rs.mutex);
  for (Registry* r : rs.all) {
    std::lock_guard r_lock(r->mutex);
    if (!r->in_use && r->count == 0) {
      r->in_use = true;
      return r;
    }
  }
  rs.all.push_back(new Registry());
  rs.all.back()->in_use = true;
  return rs.all.back();
}

struct ThreadRegistry {
  Registry* registry = nullptr;
  ~ThreadRegistry() {
    if (!registry) return;
    std::lock_guard lock(registries().mutex);
    std::lock_guard r_lock(registry->mutex);
    registry->in_use = false;  // its tensors stay listed until they die or another thread updates them
  }
};
thread_local ThreadRegistry this_thread;

Registry& mine() {
  if (!this_thread.registry) this_thread.registry = take_registry();
  return *this_thread.registry;
}

void unlink_locked(Registry& r, TensorImpl* impl) {
  Link& link = impl->registry_link();
  if (link.prev)
    link.prev->registry_link().next = link.next;
  else
    r.head = link.next;
  if (link.next) link.next->registry_link().prev = link.prev;
  link = Link{};
  --r.count;
}
}  // namespace

void add(TensorImpl* impl) {
  Registry& r = mine();
  Link& link = impl->registry_link();
  if (link.owner == &r) return;  // only this thread adds to its registry: no lock needed to see that
  if (link.owner) remove(impl);
  std::lock_guard lock(r.mutex);
  link = Link{nullptr, r.head, &r};
  if (r.head) r.head->registry_link().prev = impl;
  r.head = impl;
  ++r.count;
  registries().pending.fetch_add(1, std::memory_order_relaxed);
}

void remove(TensorImpl* impl) {
  Registry* r = impl->registry_link().owner;
  if (!r) return;
  std::lock_guard lock(r->mutex);
  unlink_locked(*r, impl);
  registries().pending.fetch_sub(1, std::memory_order_relaxed);
}

size_t pending_count() { return registries().pending.load(std::memory_order_relaxed); }

std::vector<std::shared_ptr<TensorImpl>> pending_in_order() {
  Registry& r = mine();
  std::vector<std::shared_ptr<TensorImpl>> out;
  {
    std::lock_guard lock(r.mutex);
    out.reserve(r.count);
    for (TensorImpl* impl = r.head; impl; impl = impl->registry_link().next)
      if (std::shared_ptr<TensorImpl> held = impl->weak_from_this().lock()) out.push_back(std::move(held));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->id() < b->id(); });
  return out;
}

}  // namespace xlite::live_tensors
