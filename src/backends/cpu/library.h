#pragma once
// Library calls for the ops that are not loops: matmul and 2-D convolution, through oneDNN primitives
// built once per compiled program.
#include <memory>
#include <optional>
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"
#include "xlite/dtype.h"

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
  // Buffers of the element types the primitive was made for.
  void run(const void* source, const void* weights, void* destination) const;
  struct State;
  std::unique_ptr<State> state_;
};

// out = a x b for f32 or bf16 batches of matrices (bf16 accumulates in f32 inside oneDNN, which uses the
// CPU's AVX-512 BF16 instructions): a is [..., M, K] and b [..., K, N], each read from its buffer
// at the given strides (in elements, one per dim; a transposed or sliced operand needs no copy), out is
// dense [..., M, N]. Every dim must be non-zero. Two ways run it: oneDNN's sgemm, where each matrix is
// row-major or transposed and the batch one stride apart, and the matmul primitive (brgemm), which takes
// every layout. Neither wins everywhere: sgemm is slow with b transposed or a short K, yet faster at
// 512x768x3072; the primitive ran a [1024,256]x[256,784] weight gradient 1.5x faster inside a training
// step. Where both apply to a large product, its first runs time both (Choice) and the faster one
// runs from then on, for every program with a product of that signature. sgemm mallocs its packing
// buffers in each call; its trials give their pages back, so a losing sgemm leaves no memory behind.
class Matmul : public Primitive {
 public:
  Matmul(const Shape& a, const std::vector<int64_t>& a_strides, const Shape& b, const std::vector<int64_t>& b_strides,
         DType dtype = DType::f32);
  void run(const void* a, const void* b, void* out) const;
  enum class Path { undecided, sgemm, primitive };
  Path path() const;  // undecided until both were timed

  struct Choice;

 private:
  struct Sgemm {
    bool transpose_a;
    int64_t m, n, k, lda, ldb, batch, batch_stride_a, batch_stride_b;
  };
  void run_sgemm(const void* a, const void* b, void* out) const;
  std::optional<Sgemm> sgemm_;
  std::shared_ptr<Choice> choice_;  // when both paths apply
};

// conv2d (NCHW input, OIHW weight, any stride, padding, dilation and groups).
class Conv2d : public Primitive {
 public:
  Conv2d(const ir::Instr& conv, const Shape& input, const Shape& weight);
  using Primitive::run;
};

}  // namespace xlite::backends::cpu
