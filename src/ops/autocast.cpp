// The autocast scope's per-thread state and the casts of its two op lists.
#include "xlite/autocast.h"

#include "ops/op_support.h"
#include "xlite/error.h"

namespace xlite {
namespace {
thread_local bool autocast_on = false;
thread_local DType autocast_dtype = DType::bf16;
}  // namespace

autocast::autocast(DType dtype, bool enabled) : previous_enabled_(autocast_on), previous_dtype_(autocast_dtype) {
  if (enabled && dtype != DType::bf16 && dtype != DType::f16)
    throw Error("[autocast] the lower dtype must be bf16 or f16, got " + std::string(dtype_name(dtype)));
  autocast_on = enabled;
  if (enabled) autocast_dtype = dtype;
}

autocast::~autocast() {
  autocast_on = previous_enabled_;
  autocast_dtype = previous_dtype_;
}

bool is_autocast_enabled() { return autocast_on; }
DType get_autocast_dtype() { return autocast_dtype; }

Tensor autocast_for_product(const Tensor& x) {
  if (!autocast_on || !x.defined() || x.dtype() != DType::f32) return x;
  return ops::convert_to(x, autocast_dtype);
}

Tensor autocast_for_precision(const Tensor& x) {
  if (!autocast_on || !x.defined() || (x.dtype() != DType::bf16 && x.dtype() != DType::f16)) return x;
  return ops::convert_to(x, DType::f32);
}

}  // namespace xlite
