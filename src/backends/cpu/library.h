#pragma once
// Library calls for the ops that are not loops: matmul and 2-D convolution, through oneDNN primitives
// built once per compiled program.
#include <memory>
#include <optional>
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"

namespace xlite::backends::cpu {

// One oneDNN primitive with a source, a weight and a destination; runs on the process's one stream.
// Each library op says how it runs (a Matmul may not need its primitive).
class Primitive {
 public:
  ~Primitive();
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

 protected:
  explicit Primitive(const char* op);  // the op named in errors
  void run(const float* source, const float* weights, float* destination) const;
  struct State;
  std::unique_ptr<State> state_;
};

// out = a x b for f32 batches of matrices: a is [..., M, K] and b [..., K, N], each read from its buffer
// at the given strides (in elements, one per dim; a transposed or sliced operand needs no copy), out is
// dense [..., M, N]. Every dim must be non-zero. oneDNN's sgemm is the fastest where it applies (each
// matrix row-major or transposed, the batch one stride apart) but slow with b transposed or a short K;
// the matmul primitive (brgemm) takes those and every other layout.
class Matmul : public Primitive {
 public:
  Matmul(const Shape& a, const std::vector<int64_t>& a_strides, const Shape& b, const std::vector<int64_t>& b_strides);
  void run(const float* a, const float* b, float* out) const;

 private:
  struct Sgemm {
    bool transpose_a;
    int64_t m, n, k, lda, ldb, batch, batch_stride_a, batch_stride_b;
  };
  std::optional<Sgemm> sgemm_;
};

// conv2d (NCHW input, OIHW weight, any stride, padding, dilation and groups).
class Conv2d : public Primitive {
 public:
  Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight);
  using Primitive::run;
};

}  // namespace xlite::backends::cpu
