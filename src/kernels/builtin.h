#pragma once
// Each family of built-in kernels registers itself (ir::add_builtin_kernel) from here.
namespace xlite::kernels::builtin {

void register_grouped_matmul();   // gmm, tgmm (grouped_matmul.cpp)
void register_flash_attention();  // flash_attention, flash_attention_backward (flash_attention.cpp)
void register_paged_attention();  // paged_attention, paged_kv_write and their checks (paged_attention.cpp)

}  // namespace xlite::kernels::builtin
