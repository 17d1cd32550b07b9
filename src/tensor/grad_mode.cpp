#include "tensor/grad_mode.h"

#include "xlite/autograd.h"

namespace xlite::autograd {
namespace {
thread_local bool grad_enabled = true;
}
bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }
}  // namespace xlite::autograd

namespace xlite {
NoGradGuard::NoGradGuard() : previous_(autograd::is_grad_enabled()) { autograd::set_grad_enabled(false); }
NoGradGuard::~NoGradGuard() { autograd::set_grad_enabled(previous_); }
bool is_grad_enabled() { return autograd::is_grad_enabled(); }
void set_grad_enabled(bool enabled) { autograd::set_grad_enabled(enabled); }
}  // namespace xlite
