#pragma once
// The ops whose results never carry gradients (ir::is_differentiable is false: leaves, random draws,
// piecewise-constant and integer-valued ops, and custom calls, whose gradients come from their kernel's
// backward as custom rules on their results (kernels::call)), as case labels for the exhaustive switches over ir::OpId
// in vjp.cpp and saved_values.cpp. tests/autograd_test.cpp checks the list against is_differentiable.
#include "ir/op.h"

// clang-format off
#define XLITE_CASES_WITHOUT_GRADIENT                                                                        \
  case ::xlite::ir::OpId::parameter: case ::xlite::ir::OpId::constant: case ::xlite::ir::OpId::iota:       \
  case ::xlite::ir::OpId::rng_uniform: case ::xlite::ir::OpId::rng_normal:                                 \
  case ::xlite::ir::OpId::floor: case ::xlite::ir::OpId::ceil: case ::xlite::ir::OpId::round:              \
  case ::xlite::ir::OpId::sign: case ::xlite::ir::OpId::logical_not: case ::xlite::ir::OpId::isnan:        \
  case ::xlite::ir::OpId::isinf: case ::xlite::ir::OpId::eq: case ::xlite::ir::OpId::ne:                   \
  case ::xlite::ir::OpId::lt: case ::xlite::ir::OpId::le: case ::xlite::ir::OpId::gt:                      \
  case ::xlite::ir::OpId::ge: case ::xlite::ir::OpId::logical_and: case ::xlite::ir::OpId::logical_or:     \
  case ::xlite::ir::OpId::logical_xor: case ::xlite::ir::OpId::argmax: case ::xlite::ir::OpId::argmin:   \
  case ::xlite::ir::OpId::argsort:                                                                         \
  case ::xlite::ir::OpId::custom_call: case ::xlite::ir::OpId::custom_output
// clang-format on
