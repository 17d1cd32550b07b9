#pragma once
// Mixed precision, as torch.autocast(device_type="cpu", dtype=torch.bfloat16): inside the scope, matrix
// products and convolutions (matmul, linear, bmm, addmm, baddbmm, conv1d, conv2d, conv_transpose2d) take
// their f32 operands in the lower dtype (the GEMM accumulates in f32), and the ops that need range or
// precision (softmax, log_softmax, logsumexp, norm and the losses) compute and return f32. Everything else
// runs in its inputs' dtype. Parameters stay f32: gradients flow back through the casts, and backward()
// runs as recorded, whatever the scope at that time. Per thread, like grad mode.
#include "xlite/dtype.h"
#include "xlite/tensor.h"

namespace xlite {

class autocast {
 public:
  explicit autocast(DType dtype = DType::bf16, bool enabled = true);  // dtype: bf16 or f16
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  bool previous_enabled_;
  DType previous_dtype_;
};

bool is_autocast_enabled();
DType get_autocast_dtype();  // the lower dtype of the innermost scope (bf16 outside any)

// What the two lists do to an operand, for ops and modules of one's own: inside a scope, an f32 tensor in the
// autocast dtype for a product, and a 16-bit float tensor in f32 for a precision-sensitive op; outside, or
// for other dtypes, the tensor itself.
Tensor autocast_for_product(const Tensor& x);
Tensor autocast_for_precision(const Tensor& x);

}  // namespace xlite
