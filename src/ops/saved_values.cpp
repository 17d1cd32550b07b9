#include "ops/saved_values.h"

#include "ir/no_gradient.h"

namespace xlite::autograd {

SavedValues saved_values(ir::OpId op, std::span<const bool> needs_grad) {
  using ir::OpId;
  auto needs = [&](size_t k) { return k < needs_grad.size() && needs_grad[k]; };
  const bool any = needs(0) || needs(1) || needs(2);
  constexpr uint32_t first = 1, second = 2;
  // Each formula's operand for the other's gradient: d(a*b)/da reads b.
  const uint32_t crossed = (needs(1) ? first : 0) | (needs(0) ? second : 0);
  switch (op) {
  // Their results never carry gradients.
  XLITE_CASES_WITHOUT_GRADIENT:
  case OpId::convert:
  case OpId::neg:
  case OpId::add:
  case OpId::sub:
  case OpId::reduce_sum:
  case OpId::reshape:
  case OpId::transpose:
  case OpId::broadcast:
  case OpId::slice:
  case OpId::concat:
  case OpId::pad:
  case OpId::flip: return {};
    case OpId::exp:
    case OpId::expm1:
    case OpId::sqrt:
    case OpId::rsqrt:
    case OpId::tan:
    case OpId::tanh:
    case OpId::sigmoid:
    case OpId::reciprocal: return {0, true};
    case OpId::abs:
    case OpId::log:
    case OpId::log1p:
    case OpId::sin:
    case OpId::atan:
    case OpId::cos:
    case OpId::relu:
    case OpId::gelu:
    case OpId::gelu_tanh:
    case OpId::silu:
    case OpId::erf: return {first, false};
    case OpId::mul:
    case OpId::dot:
    case OpId::conv2d: return {crossed, false};
    case OpId::div: return {(any ? second : 0) | (needs(1) ? first : 0), needs(1)};
    case OpId::pow: return {any ? first | second : 0, needs(1)};
    case OpId::maximum:
    case OpId::minimum: return {any ? first | second : 0, false};
    case OpId::remainder: return {needs(1) ? first | second : 0, false};
    case OpId::select: return {needs(1) || needs(2) ? first : 0, false};
    case OpId::reduce_prod:
    case OpId::reduce_max:
    case OpId::reduce_min: return {first, true};
    case OpId::gather:
    case OpId::index_select: return {needs(0) ? second : 0, false};
    case OpId::scatter_add: return {needs(2) ? second : 0, false};
    case OpId::cumsum: return {0, false};
    case OpId::cummax:
    case OpId::cummin: return {first, false};
    case OpId::cumprod: return {first, true};
    case OpId::transfer:
    case OpId::opt_barrier: return {0, false};
    case OpId::count_: break;
  }
  return {};
}

}  // namespace xlite::autograd
