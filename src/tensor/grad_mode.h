#pragma once

namespace xlite::autograd {

// Whether ops record gradient information (thread-local, on by default; NoGradGuard turns it off).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace xlite::autograd
