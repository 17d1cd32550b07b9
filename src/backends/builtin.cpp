// The backends that ship with xlite, registered with the compiler's registry on first use.
#include "backends/cpu/target.h"
#include "backends/reference/backend.h"
#include "compiler/backend_registry.h"

namespace xlite::compiler {

void register_builtin_backends() {
  register_backend("cpu", [] { return backend_for_target(backends::cpu::make_target()); });
  register_backend("reference", &backends::reference::make_backend);
}

}  // namespace xlite::compiler
