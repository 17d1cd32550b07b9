#pragma once
// Library calls for the ops that are not loops: matmul (sgemm) and 2-D convolution, through oneDNN.
#include <memory>

#include "core/buffer.h"
#include "ir/graph.h"

namespace xlite::backends::cpu {

// out[b] = a[b] x w[b] for row-major f32 batches.
void matmul_f32(const Shape& a, const Shape& b, const float* pa, const float* pb, float* out);

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
