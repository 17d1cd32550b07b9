#pragma once
// When work runs. By default ops are traced lazily and run at sync(); eager mode runs each op at once.
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

// Compiles every live pending tensor into one graph (cached by structural hash), runs it, and binds the
// results. Returns when the work is done.
void sync();
// The same for just these tensors; other pending work stays pending.
void sync(const std::vector<Tensor>& tensors);

// One process-wide flag. In eager mode each op runs at once as a one-op program from the same cache.
void eager_mode(bool enabled);
bool is_eager_mode();

// Sets the mode for a scope and restores the previous one on exit, also when an exception leaves.
class EagerModeGuard {
 public:
  explicit EagerModeGuard(bool enabled);
  ~EagerModeGuard();
  EagerModeGuard(const EagerModeGuard&) = delete;
  EagerModeGuard& operator=(const EagerModeGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace xlite
