#include "core/live_tensors.h"

#include <map>
#include <mutex>

#include "core/tensor_impl.h"

namespace xlite::live_tensors {
namespace {
struct Registry {
  std::mutex mutex;
  std::map<uint64_t, TensorImpl*> pending;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: static tensors may die during exit
  return *r;
}
}  // namespace

void add(TensorImpl* impl) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.pending[impl->id()] = impl;
}

void remove(TensorImpl* impl) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.pending.erase(impl->id());
}

size_t pending_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.pending.size();
}

std::vector<TensorImpl*> pending_in_order() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<TensorImpl*> out;
  out.reserve(r.pending.size());
  for (const auto& [id, impl] : r.pending) out.push_back(impl);
  return out;
}

}  // namespace xlite::live_tensors
