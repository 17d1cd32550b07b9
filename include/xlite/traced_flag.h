#pragma once
// A host-side switch that a compiled step may read, such as a module's training mode. compile(fn) cannot
// see host variables, so such state must announce itself: each read inside a trace becomes a guard, and
// a call after the value changed traces again instead of replaying the branch of the old value.
#include <atomic>
#include <memory>
#include <string>

namespace xlite {

namespace detail {
struct FlagCell {
  std::atomic<bool> value;
  std::string what;  // for the reason a step traced again: "a module's training mode"
};
}  // namespace detail

class TracedFlag {
 public:
  TracedFlag(bool value, std::string what);
  // A copy is a flag of its own with the same value: a copied module switches modes on its own.
  TracedFlag(const TracedFlag& other);
  TracedFlag& operator=(const TracedFlag& other);
  ~TracedFlag();

  bool get() const;  // inside a trace: recorded as a guard
  void set(bool value);

 private:
  std::shared_ptr<detail::FlagCell> cell_;
};

}  // namespace xlite
