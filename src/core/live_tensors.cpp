#include "core/live_tensors.h"

#include <algorithm>
#include <mutex>

#include "core/tensor_impl.h"

namespace xlite::live_tensors {
namespace {
// A doubly linked list through the tensors' links, in no particular order (an in-place op registers an
// old tensor again); pending_in_order sorts by creation id, once per sync rather than once per op.
struct Registry {
  std::mutex mutex;
  TensorImpl* head = nullptr;
  size_t count = 0;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: static tensors may die during exit
  return *r;
}
}  // namespace

void add(TensorImpl* impl) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Link& link = impl->registry_link();
  if (link.listed) return;
  link = Link{nullptr, r.head, true};
  if (r.head) r.head->registry_link().prev = impl;
  r.head = impl;
  ++r.count;
}

void remove(TensorImpl* impl) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Link& link = impl->registry_link();
  if (!link.listed) return;
  if (link.prev) link.prev->registry_link().next = link.next;
  else r.head = link.next;
  if (link.next) link.next->registry_link().prev = link.prev;
  link = Link{};
  --r.count;
}

size_t pending_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.count;
}

std::vector<TensorImpl*> pending_in_order() {
  Registry& r = registry();
  std::vector<TensorImpl*> out;
  {
    std::lock_guard lock(r.mutex);
    out.reserve(r.count);
    for (TensorImpl* impl = r.head; impl; impl = impl->registry_link().next) out.push_back(impl);
  }
  std::sort(out.begin(), out.end(), [](const TensorImpl* a, const TensorImpl* b) { return a->id() < b->id(); });
  return out;
}

}  // namespace xlite::live_tensors
