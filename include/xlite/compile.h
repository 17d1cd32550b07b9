#pragma once
// compile(fn): one compiled program per call of a step function, in lazy or eager mode.
#include <utility>

#include "xlite/tensor.h"

namespace xlite {

namespace detail {
// The life of one compiled call: flush pending work, trace fn lazily, then one sync whose outputs are
// the returned tensors and every tensor fn updated in place. If fn throws, the mode is restored and the
// in-place updates fn made are undone, so nothing is half-applied.
class StepScope {
 public:
  StepScope();
  ~StepScope();
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;
  void commit();

 private:
  bool previous_eager_;
  bool committed_ = false;
};
}  // namespace detail

template <class Fn>
class Compiled {
 public:
  explicit Compiled(Fn fn) : fn_(std::move(fn)) {}
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    detail::StepScope scope;
    decltype(auto) result = fn_(std::forward<Args>(args)...);
    scope.commit();
    return result;
  }

 private:
  Fn fn_;
};

// Each call traces fn again (so host-side effects in fn run every time) and runs the whole step as one
// graph; the structural cache makes every call after the first a cached compile.
template <class Fn>
Compiled<Fn> compile(Fn fn) {
  return Compiled<Fn>(std::move(fn));
}

}  // namespace xlite
