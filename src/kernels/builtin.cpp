// The kernels that ship with xlite, registered on the kernel registry's first use (ir/kernel_registry.h).
#include "ir/kernel_registry.h"
#include "kernels/builtin.h"

namespace xlite::ir {

void register_builtin_kernels() {
  kernels::builtin::register_grouped_matmul();
  kernels::builtin::register_flash_attention();
  kernels::builtin::register_paged_attention();
}

}  // namespace xlite::ir
