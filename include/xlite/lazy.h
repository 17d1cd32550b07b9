#pragma once
// When work runs. By default ops are traced lazily and run at sync(); eager mode runs each op at once.
//
// Threads. Each thread has its own pending work, its own eager mode and its own grad mode (a new thread
// starts lazy, with grad enabled, like a new PyTorch thread). sync() computes the pending tensors of the
// calling thread only: another thread's graph in the making is never swept in. Distinct tensors may be
// used from any threads at once, and a tensor that holds data (after a sync or a value read) may be read
// by many threads at once, such as weights shared by serving threads. A tensor that is pending, a
// tensor being updated in place, and backward() (which writes the leaves' grad()) need one thread at a
// time, as a std::vector would; hand such a tensor over with the usual synchronisation (a queue, a join).
// Reading a pending tensor that another thread made computes it. Programs run one at a time in a
// process (each uses every core); random draws from several threads share one generator.
#include <vector>

#include "xlite/tensor.h"

namespace xlite {

// Compiles every live pending tensor of the calling thread into one graph (cached by structural hash),
// runs it, and binds the results. Returns when the work is done.
void sync();
// The same for just these tensors; other pending work stays pending.
void sync(const std::vector<Tensor>& tensors);

// For language bindings with an interpreter lock (Python's GIL). A sync that must wait for another thread's
// program calls hook(wait, context) instead of waiting itself; the hook runs wait(context), which returns once
// this thread may run, after giving up the interpreter lock, so that a program that calls back into the
// interpreter (a kernel written in Python) can finish. Without a hook (nullptr, the default) it just waits.
using BlockingWaitHook = void (*)(void (*wait)(void* context), void* context);
void set_blocking_wait_hook(BlockingWaitHook hook);

// The calling thread's mode. In eager mode each op runs at once as a one-op program from the same cache.
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
