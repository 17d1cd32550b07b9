// Compiled by ctest with the ops layer's view of src/ (cmake/layers.cmake): lazy, tensor and ir are below
// ops, so these includes build (the control for upward_include.cpp).
#include "ir/graph.h"
#include "lazy/sync.h"
#include "tensor/tensor_impl.h"
