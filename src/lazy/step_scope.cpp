#include "core/tensor_impl.h"
#include "xlite/compile.h"
#include "xlite/lazy.h"

namespace xlite::detail {

StepScope::StepScope() : previous_eager_(is_eager_mode()) {
  sync();  // earlier pending work is not part of this step
  eager_mode(false);
  in_place_log::begin();
}

void StepScope::commit() {
  in_place_log::end();  // drop the saved buffers first: they would block donation
  committed_ = true;
  sync();
  eager_mode(previous_eager_);
}

StepScope::~StepScope() {
  if (committed_) return;
  in_place_log::rollback();
  eager_mode(previous_eager_);
}

}  // namespace xlite::detail
