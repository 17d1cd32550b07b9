#pragma once
// Library calls for the ops that are not loops: matmul (sgemm) and 2-D convolution, through oneDNN.
#include <memory>

#include "core/buffer.h"
#include "ir/graph.h"

namespace xlite::backends::cpu {

// out[i] = op(a[i]) x op(b[i]) for row-major f32 batches; a and b are the stored shapes, and a
// transposed operand is stored with its last two dims swapped.
void matmul_f32(const Shape& a, bool transpose_a, const Shape& b, bool transpose_b, const float* pa, const float* pb,
                float* out);

// A oneDNN convolution primitive built once per compiled program for one conv2d instruction.
class Conv2d {
 public:
  Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight);
  ~Conv2d();
  Conv2d(const Conv2d&) = delete;
  Conv2d& operator=(const Conv2d&) = delete;
  void run(const float* input, const float* weight, float* output) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace xlite::backends::cpu
