#pragma once
// Each family of built-in kernels registers itself (ir::add_builtin_kernel) from here.
namespace xlite::kernels::builtin {

void register_grouped_matmul();  // gmm, tgmm (grouped_matmul.cpp)

}  // namespace xlite::kernels::builtin
