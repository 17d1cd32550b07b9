// The public view of the runtime context (core/runtime_context.h).
#include "core/runtime_context.h"
#include "xlite/debug.h"

namespace xlite {

void clear_caches() { runtime_context::clear_caches(); }

namespace debug {
std::vector<std::pair<std::string, std::string>> runtime_state() { return runtime_context::describe_all(); }
}  // namespace debug

}  // namespace xlite
