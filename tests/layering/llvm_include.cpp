// Compiled by ctest with one layer's include paths (cmake/layers.cmake): LLVM's headers are private to the
// codegen and cpu layers, so this builds for the cpu layer and fails for the compiler layer.
#include <llvm/IR/Module.h>
