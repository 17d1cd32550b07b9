#pragma once
// Library calls for the ops that are not loops: matmul and 2-D convolution, through oneDNN primitives
// built once per compiled program.
#include <memory>

#include "core/buffer.h"
#include "ir/graph.h"

namespace xlite::backends::cpu {

// One oneDNN primitive with a source, a weight and a destination; runs on the process's one stream.
class Primitive {
 public:
  ~Primitive();
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;
  void run(const float* source, const float* weights, float* destination) const;

 protected:
  explicit Primitive(const char* op);  // the op named in errors
  struct State;
  std::unique_ptr<State> state_;
};

// out[i] = op(a[i]) x op(b[i]) for row-major f32 batches; a and b are the stored shapes, and a
// transposed operand is stored with its last two dims swapped (the primitive reads it through strides,
// which oneDNN's brgemm kernels handle at full speed, unlike sgemm's transposed-B path).
// Every dim must be non-zero.
class Matmul : public Primitive {
 public:
  Matmul(const Shape& a, bool transpose_a, const Shape& b, bool transpose_b);
};

// conv2d (NCHW input, OIHW weight, any stride, padding, dilation and groups).
class Conv2d : public Primitive {
 public:
  Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight);
};

}  // namespace xlite::backends::cpu
