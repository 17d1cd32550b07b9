// Compiled by ctest with the ops layer's view of src/ (cmake/layers.cmake): autograd is a layer above ops,
// so this include must fail to build.
#include "autograd/vjp.h"
