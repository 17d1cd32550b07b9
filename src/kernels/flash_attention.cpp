// flash_attention: softmax(q k^T * scale + mask) v without the S x S matrix. The forward keeps, per query
// row, the running maximum and sum of its exponentials over blocks of keys (online softmax) and saves the
// row's log-sum-exp; the backward recomputes each block's probabilities from it. Tile products are
// oneDNN GEMMs on one thread each; blocks of queries (forward, dq) or keys (dk, dv) run side by side.
// Extra memory is the saved log-sum-exp and, per thread, one block of scores and of the output: O(B*H*S*D)
// in all, never S x S; the kernels declare their scratch, so debug::memory_stats counts it. The kernels take
// f32, f64 (for checking gradients) and bf16. bf16 is computed as PyTorch's CPU kernel does: tile products
// of bf16 operands (the inputs, and each block of probabilities rounded to bf16) accumulate in f32, the
// softmax and the log-sum-exp are f32, and the backward returns f32 gradients that flash_attention()'s
// backward rounds once. flash_attention() runs f16 inputs through the f32 kernel.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "ir/kernel_registry.h"
#include "kernels/bf16_gemm.h"
#include "kernels/builtin.h"
#include "kernels/kernel_checks.h"
#include "kernels/vector_math.h"
#include "xlite/error.h"
#include "xlite/kernels.h"
#include "xlite/ops.h"

namespace xlite::kernels {
namespace {

constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 256;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

[[noreturn]] void refuse(const std::string& why) { kernels::refuse("flash_attention", why); }

using Bf16 = uint16_t;  // a bf16 value's bits, as tensors store them

// The type a storage type computes in: bf16 in f32, f32 and f64 in themselves.
template <class T>
using Acc = std::conditional_t<std::is_same_v<T, Bf16>, float, T>;

DType acc_dtype(DType dtype) { return dtype == DType::bf16 ? DType::f32 : dtype; }

template <class T>
Acc<T> widen(T x) {
  if constexpr (std::is_same_v<T, Bf16>)
    return bf16_to_float(x);
  else
    return x;
}

template <class T>
T narrow(Acc<T> x) {
  if constexpr (std::is_same_v<T, Bf16>)
    return float_to_bf16(x);
  else
    return x;
}

// The problem's sizes, read from q [B, H, Sq, D] and k [B, Hkv, Skv, D].
struct Dims {
  int64_t batch, heads, kv_heads, sq, skv, d;
  int64_t group() const { return heads / kv_heads; }
  // Causal masks are aligned to the end: query i sees keys j <= i + offset.
  int64_t offset() const { return skv - sq; }
};

Dims dims_of(const TensorType& q, const TensorType& k) {
  return {q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3]};
}

// Checks q, k, v (and the segment ids when present) and returns the sizes.
Dims check_inputs(const std::vector<TensorType>& in, bool segments, size_t first_extra) {
  const TensorType &q = in[0], &k = in[1], &v = in[2];
  for (const TensorType* t : {&q, &k, &v})
    if ((q.dtype != DType::f32 && q.dtype != DType::f64 && q.dtype != DType::bf16) || t->dtype != q.dtype ||
        t->shape.size() != 4)
      refuse("q, k and v must be f32, bf16 (or f64) [B, H, S, D], got " + type_text(q) + ", " + type_text(k) + ", " +
             type_text(v));
  if (k.shape != v.shape || k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3])
    refuse("k and v must be [B, Hkv, Skv, D] with q's B and D, got " + type_text(q) + ", " + type_text(k) + ", " +
           type_text(v));
  if (k.shape[1] == 0 || q.shape[1] % k.shape[1] != 0)
    refuse("q's " + std::to_string(q.shape[1]) + " heads are not a multiple of k's " + std::to_string(k.shape[1]));
  if (segments) {
    const TensorType &qs = in[first_extra], &ks = in[first_extra + 1];
    if (qs != TensorType{{q.shape[0], q.shape[2]}, DType::i32} ||
        ks != TensorType{{k.shape[0], k.shape[2]}, DType::i32})
      refuse("segment ids must be i32 [B, Sq] and i32 [B, Skv], got " + type_text(qs) + " and " + type_text(ks));
  }
  return dims_of(q, k);
}

bool has_segments(const Attrs& attrs) {
  auto it = attrs.find("segments");
  return it != attrs.end() && std::get_if<int64_t>(&it->second) && std::get<int64_t>(it->second) != 0;
}

// C [m, n] = op(A) op(B), or C += op(A) op(B) when accumulate, row-major: A is [m, k] (lda), or [k, m] when
// a_transposed; B is [k, n] (ldb), or [n, k] when b_transposed. One thread. f32 is oneDNN's sgemm and bf16
// its matmul into f32; oneDNN has no f64 GEMM, and f64 is here for checking gradients, not for speed: its
// tiles are plain loops.
template <class T>
void product(bool a_transposed, bool b_transposed, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
             int64_t ldb, bool accumulate, Acc<T>* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, Bf16>) {
    gemm_bf16("flash_attention", a_transposed, b_transposed, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
  } else {
    if constexpr (std::is_same_v<T, float>) {
      if (k > 0) {
        if (dnnl_sgemm(a_transposed ? 'T' : 'N', b_transposed ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
                       accumulate ? 1.0f : 0.0f, c, ldc) != dnnl_success)
          throw Error("[flash_attention] oneDNN's sgemm failed");
        return;
      }
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += (a_transposed ? a[l * lda + i] : a[i * lda + l]) * (b_transposed ? b[j * ldb + l] : b[l * ldb + j]);
        c[i * ldc + j] = sum + (accumulate ? c[i * ldc + j] : T(0));
      }
  }
}

// A block of probabilities (or of their gradients) as the next product reads it: itself, or rounded to
// bf16 into `rounded`.
template <class T>
const T* operand(const Acc<T>* block, int64_t count, T* rounded) {
  if constexpr (std::is_same_v<T, Bf16>) {
    round_to_bf16(block, count, rounded);
    return rounded;
  } else {
    return block;
  }
}

// Which scores of a block of queries [q0, q0 + bq) and keys [k0, k0 + bk) the masks hide.
enum class BlockMask { hidden, partial, visible };

struct Masking {
  const Dims& dims;
  bool causal;
  const int32_t* q_segments;  // this batch's, or null
  const int32_t* kv_segments;
  bool visible(int64_t i, int64_t j) const {
    if (causal && j > i + dims.offset()) return false;
    return !q_segments || q_segments[i] == kv_segments[j];
  }
  // Most blocks are wholly hidden or wholly visible; only the others pay for a mask test per score.
  BlockMask classify(int64_t q0, int64_t bq, int64_t k0, int64_t bk) const {
    if (causal && k0 > q0 + bq - 1 + dims.offset()) return BlockMask::hidden;
    if (causal && k0 + bk - 1 > q0 + dims.offset()) return BlockMask::partial;
    if (!q_segments) return BlockMask::visible;
    const int32_t segment = q_segments[q0];
    const auto same = [segment](int32_t s) { return s == segment; };
    return std::all_of(q_segments + q0, q_segments + q0 + bq, same) &&
                   std::all_of(kv_segments + k0, kv_segments + k0 + bk, same)
               ? BlockMask::visible
               : BlockMask::partial;
  }
};

// The scaled scores of a block, -inf where masked, each row's largest, and each row's end: its scores from
// there on are hidden and left unset (a causal mask hides the end of a row), so the exponentials stop there.
template <class T, class A = Acc<T>>
void scores(const Masking& mask, BlockMask kind, A scale, const T* q, const T* k, int64_t d, int64_t q0, int64_t bq,
            int64_t k0, int64_t bk, A* s, A* row_max, int64_t* row_end) {
  product(false, true, bq, bk, d, q + q0 * d, d, k + k0 * d, d, false, s, bk);
  for (int64_t r = 0; r < bq; ++r) {
    A* sr = s + r * bk;
    row_end[r] = bk;
    if (kind == BlockMask::partial && !mask.q_segments)
      row_end[r] = std::clamp<int64_t>(q0 + r + mask.dims.offset() - k0 + 1, 0, bk);
    if (kind == BlockMask::visible || !mask.q_segments) {
      row_max[r] = scale_and_max(sr, row_end[r], scale);
      continue;
    }
    A best = kNegInf;
    for (int64_t c = 0; c < bk; ++c)
      best = std::max(best, sr[c] = mask.visible(q0 + r, k0 + c) ? sr[c] * scale : kNegInf);
    row_max[r] = best;
  }
}

// A row of scores [0, width) replaced by exp(score - shift) up to its end and zeros after it (the scores
// there are hidden and unset, see scores()); returns the sum. shift must be finite when end > 0.
template <class A>
A row_exponentials(A* row, int64_t end, int64_t width, A shift) {
  const A sum = exp_shifted_sum(row, end, shift);
  std::fill(row + end, row + width, 0.0f);
  return sum;
}

// Each thread's scratch: the forward's block of scores, its output block and three numbers per row; the
// backward's two blocks of scores (P and dS), in each of its two passes, and one number per query row (delta).
// bf16 adds the blocks rounded to bf16 that the products read. Counted wide for the scratch rule, which
// refuses a count past int64 before the kernel runs.
constexpr int64_t kBlock = kQueryBlock * kKeyBlock;

int64_t acc_size(DType dtype) { return dtype_size(acc_dtype(dtype)); }
int64_t rounded_size(DType dtype) { return dtype == DType::bf16 ? dtype_size(dtype) : 0; }

__int128 forward_bytes_per_thread(int64_t d, DType dtype) {
  return (kBlock + __int128{kQueryBlock} * d + 3 * kQueryBlock) * acc_size(dtype) + kBlock * rounded_size(dtype);
}

int64_t backward_bytes_per_thread(DType dtype) { return 2 * kBlock * (acc_size(dtype) + rounded_size(dtype)); }

template <class T>
T* take(CpuContext& context, int64_t count) {
  return static_cast<T*>(context.scratch(static_cast<size_t>(count) * sizeof(T)));
}

int64_t forward_scratch(const std::vector<TensorType>& in, const Attrs&, int threads) {
  return scratch_bytes("flash_attention", threads * forward_bytes_per_thread(in[0].shape[3], in[0].dtype));
}

int64_t backward_scratch(const std::vector<TensorType>& in, const Attrs&, int threads) {
  const Dims dims = dims_of(in[0], in[1]);
  const __int128 delta = __int128{dims.batch} * dims.heads * dims.sq * acc_size(in[0].dtype);
  const int passes = 2;
  return scratch_bytes("flash_attention_backward",
                       delta + __int128{passes} * threads * backward_bytes_per_thread(in[0].dtype));
}

// The query-key pairs the masks leave visible, counting the causal mask only (segments depend on the data):
// 2 D operations each in each of the forward's two products and the backward's five (seven when it splits
// into two passes).
double visible_pairs(const Dims& dims, bool causal) {
  if (!causal) return static_cast<double>(dims.sq) * static_cast<double>(dims.skv);
  double pairs = 0;
  for (int64_t i = 0; i < dims.sq; ++i)
    pairs += static_cast<double>(std::clamp<int64_t>(i + dims.offset() + 1, 0, dims.skv));
  return pairs;
}

template <int kProducts>
double attention_cost(const std::vector<TensorType>& in, const Attrs& attrs) {
  const Dims dims = dims_of(in[0], in[1]);
  return 2.0 * kProducts * static_cast<double>(dims.batch * dims.heads * dims.d) *
         visible_pairs(dims, AttrReader("flash_attention", attrs).int_attr("causal") != 0);
}

// Outputs: the attention in q's dtype, and each row's log-sum-exp in the dtype it is computed in.
std::vector<TensorType> forward_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const bool segments = has_segments(attrs);
  if (in.size() != (segments ? 5u : 3u)) refuse("takes q, k, v and, with segments=1, their segment ids");
  const Dims dims = check_inputs(in, segments, 3);
  return {in[0], {{dims.batch, dims.heads, dims.sq}, acc_dtype(in[0].dtype)}};
}

template <class T>
void forward_cpu(const CpuCall& call, CpuContext& context) {
  using A = Acc<T>;
  const Dims dims = dims_of(call.input_type(0), call.input_type(1));
  const bool causal = call.int_attr("causal") != 0, segments = has_segments(call.attrs());
  const A scale = static_cast<A>(call.float_attr("sm_scale"));
  const T *q = call.input<T>(0), *k = call.input<T>(1), *v = call.input<T>(2);
  T* out = call.output<T>(0);
  A* lse = call.output<A>(1);
  const int64_t d = dims.d, q_blocks = (dims.sq + kQueryBlock - 1) / kQueryBlock;
  constexpr bool kRounds = !std::is_same_v<T, A>;
  context.parallel_for(dims.batch * dims.heads * q_blocks, 1, [&](int64_t begin, int64_t end) {
    A* const s = take<A>(context, kBlock);
    A* const acc = take<A>(context, kQueryBlock * d);
    A* const row_max = take<A>(context, 3 * kQueryBlock);
    A *const row_sum = row_max + kQueryBlock, *const block_max = row_sum + kQueryBlock;
    int64_t row_end[kQueryBlock];
    T* const rounded = kRounds ? take<T>(context, kBlock) : nullptr;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / (dims.heads * q_blocks), h = item / q_blocks % dims.heads, qb = item % q_blocks;
      const int64_t q0 = qb * kQueryBlock, bq = std::min(kQueryBlock, dims.sq - q0);
      const int64_t hk = h / dims.group();
      const T* qh = q + (b * dims.heads + h) * dims.sq * d;
      const T* kh = k + (b * dims.kv_heads + hk) * dims.skv * d;
      const T* vh = v + (b * dims.kv_heads + hk) * dims.skv * d;
      const Masking mask{dims, causal, segments ? call.input<int32_t>(3) + b * dims.sq : nullptr,
                         segments ? call.input<int32_t>(4) + b * dims.skv : nullptr};
      std::fill(acc, acc + kQueryBlock * d, 0.0f);
      std::fill(row_max, row_max + kQueryBlock, kNegInf);
      std::fill(row_sum, row_sum + kQueryBlock, 0.0f);
      for (int64_t k0 = 0; k0 < dims.skv; k0 += kKeyBlock) {
        const int64_t bk = std::min(kKeyBlock, dims.skv - k0);
        const BlockMask kind = mask.classify(q0, bq, k0, bk);
        if (kind == BlockMask::hidden) break;  // so are the later blocks: only a causal mask hides whole blocks
        scores(mask, kind, scale, qh, kh, d, q0, bq, k0, bk, s, block_max, row_end);
        for (int64_t r = 0; r < bq; ++r) {
          A* sr = s + r * bk;
          const A new_max = std::max(row_max[r], block_max[r]);
          if (new_max == kNegInf) {  // nothing visible yet in this row
            std::fill(sr, sr + bk, 0.0f);
            continue;
          }
          const A rescale = std::exp(row_max[r] - new_max);
          row_sum[r] = row_sum[r] * rescale + row_exponentials(sr, row_end[r], bk, new_max);
          row_max[r] = new_max;
          if (rescale != 1.0f)
            for (int64_t j = 0; j < d; ++j) acc[r * d + j] *= rescale;
        }
        product(false, false, bq, d, bk, operand<T>(s, bq * bk, rounded), bk, vh + k0 * d, d, true, acc, d);
      }
      T* oh = out + ((b * dims.heads + h) * dims.sq + q0) * d;
      A* lh = lse + (b * dims.heads + h) * dims.sq + q0;
      for (int64_t r = 0; r < bq; ++r) {
        // A row that sees no key gives zeros, and -inf for its log-sum-exp.
        const A inverse = row_sum[r] > 0 ? 1.0f / row_sum[r] : 0.0f;
        for (int64_t j = 0; j < d; ++j) oh[r * d + j] = narrow<T>(acc[r * d + j] * inverse);
        lh[r] = row_sum[r] > 0 ? row_max[r] + std::log(row_sum[r]) : kNegInf;
      }
    }
  });
}

// Inputs q, k, v, out, lse, dout (and segment ids): dq, dk, dv, in the dtype the kernel computes in (f32 for
// bf16: the gradients are sums over many blocks, rounded once by the caller). dk and dv are summed over the
// query heads of a group.
std::vector<TensorType> backward_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const bool segments = has_segments(attrs);
  if (in.size() != (segments ? 8u : 6u))
    refuse("backward takes q, k, v, out, lse, dout and, with segments=1, their segment ids");
  const Dims dims = check_inputs(in, segments, 6);
  const DType acc = acc_dtype(in[0].dtype);
  if (in[3] != in[0] || in[5] != in[0] || in[4] != TensorType{{dims.batch, dims.heads, dims.sq}, acc})
    refuse("backward needs out and dout of q's type and lse [B, H, Sq] of " + std::string(dtype_name(acc)) + ", got " +
           type_text(in[3]) + ", " + type_text(in[4]) + ", " + type_text(in[5]));
  return {{in[0].shape, acc}, {in[1].shape, acc}, {in[2].shape, acc}};
}

// One query head's rows and its key head's, as the backward reads them.
template <class T>
struct HeadData {
  const T *q, *k, *v, *dout;
  const Acc<T>*lse, *delta;
};

// One thread's blocks: P and dS as computed, and as the products read them (the same, or rounded to bf16).
template <class T>
struct Blocks {
  Acc<T>*p, *ds;
  T *rounded_p, *rounded_ds;
  const T *p_operand, *ds_operand;
};

template <class T>
Blocks<T> take_blocks(CpuContext& context) {
  Blocks<T> blocks{};
  blocks.p = take<Acc<T>>(context, 2 * kBlock);
  blocks.ds = blocks.p + kBlock;
  if constexpr (!std::is_same_v<T, Acc<T>>) {
    blocks.rounded_p = take<T>(context, 2 * kBlock);
    blocks.rounded_ds = blocks.rounded_p + kBlock;
  }
  return blocks;
}

// P = exp(S - lse) of a block (0 where masked), then dP = dO V^T and dS = scale P (dP - delta): the
// gradient of the unscaled scores, which the dQ and dK products read.
template <class T>
void probabilities_and_ds(const Masking& mask, BlockMask kind, Acc<T> scale, const HeadData<T>& head, int64_t d,
                          int64_t q0, int64_t bq, int64_t k0, int64_t bk, Blocks<T>& blocks) {
  using A = Acc<T>;
  A *p = blocks.p, *ds = blocks.ds;
  const A *lse = head.lse, *delta = head.delta;
  A row_max[kQueryBlock];
  int64_t row_end[kQueryBlock];
  scores(mask, kind, scale, head.q, head.k, d, q0, bq, k0, bk, p, row_max, row_end);
  for (int64_t r = 0; r < bq; ++r) {
    // A row that sees no key has no probabilities.
    row_exponentials(p + r * bk, lse[q0 + r] == kNegInf ? 0 : row_end[r], bk, lse[q0 + r]);
  }
  product(false, true, bq, bk, d, head.dout + q0 * d, d, head.v + k0 * d, d, false, ds, bk);
  for (int64_t r = 0; r < bq; ++r)
    for (int64_t c = 0; c < bk; ++c) ds[r * bk + c] = scale * p[r * bk + c] * (ds[r * bk + c] - delta[q0 + r]);
  blocks.p_operand = operand<T>(p, bq * bk, blocks.rounded_p);
  blocks.ds_operand = operand<T>(ds, bq * bk, blocks.rounded_ds);
}

// Runs body(outer, start, length, blocks) for every block of at most `block` of [0, size) under each of
// `outers` outer indices, side by side, with one thread's blocks of scratch.
template <class T, class Body>
void for_each_block(CpuContext& context, int64_t outers, int64_t size, int64_t block, Body body) {
  const int64_t blocks = (size + block - 1) / block;
  context.parallel_for(outers * blocks, 1, [&](int64_t begin, int64_t end) {
    Blocks<T> scratch = take_blocks<T>(context);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t start = item % blocks * block;
      body(item / blocks, start, std::min(block, size - start), scratch);
    }
  });
}

template <class T>
void backward_cpu(const CpuCall& call, CpuContext& context) {
  using A = Acc<T>;
  const Dims dims = dims_of(call.input_type(0), call.input_type(1));
  const bool causal = call.int_attr("causal") != 0, segments = has_segments(call.attrs());
  const A scale = static_cast<A>(call.float_attr("sm_scale"));
  const T *q = call.input<T>(0), *k = call.input<T>(1), *v = call.input<T>(2);
  const T *out = call.input<T>(3), *dout = call.input<T>(5);
  const A* lse = call.input<A>(4);
  A *dq = call.output<A>(0), *dk = call.output<A>(1), *dv = call.output<A>(2);
  const int64_t d = dims.d;
  // delta_i = rowsum(dO_i * O_i), per (b, h, query).
  A* const delta = take<A>(context, dims.batch * dims.heads * dims.sq);
  context.parallel_for(dims.batch * dims.heads * dims.sq, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      A sum = 0;
      for (int64_t j = 0; j < d; ++j) sum += widen(dout[i * d + j]) * widen(out[i * d + j]);
      delta[i] = sum;
    }
  });
  auto masking = [&](int64_t b) {
    return Masking{dims, causal, segments ? call.input<int32_t>(6) + b * dims.sq : nullptr,
                   segments ? call.input<int32_t>(7) + b * dims.skv : nullptr};
  };
  auto head = [&](int64_t b, int64_t h) {
    const int64_t hk = h / dims.group(), rows = (b * dims.heads + h) * dims.sq;
    const int64_t keys = (b * dims.kv_heads + hk) * dims.skv * d;
    return HeadData<T>{q + rows * d, k + keys, v + keys, dout + rows * d, lse + rows, delta + rows};
  };
  // dP_ij's products: dV_j += P^T dO_i; dK_j += dS^T Q_i; dQ_i += dS K_j (dS carries the scale).
  auto accumulate_dk_dv = [&](const HeadData<T>& data, int64_t q0, int64_t bq, int64_t bk, const Blocks<T>& blocks,
                              A* dkh, A* dvh) {
    product(true, false, bk, d, bq, blocks.p_operand, bk, data.dout + q0 * d, d, true, dvh, d);
    product(true, false, bk, d, bq, blocks.ds_operand, bk, data.q + q0 * d, d, true, dkh, d);
  };
  auto accumulate_dq = [&](const HeadData<T>& data, int64_t k0, int64_t bq, int64_t bk, const Blocks<T>& blocks,
                           A* dqh) {
    product(false, false, bq, d, bk, blocks.ds_operand, bk, data.k + k0 * d, d, true, dqh, d);
  };
  if (dims.batch * dims.kv_heads >= 2 * context.num_threads()) {
    // Enough (b, kv head) pairs to share out: each is one work item that owns its dk, dv and the dq of its
    // query heads, so every block of probabilities is computed once and feeds all three (five products per
    // block instead of the seven of the split passes below).
    context.parallel_for(dims.batch * dims.kv_heads, 1, [&](int64_t begin, int64_t end) {
      Blocks<T> blocks = take_blocks<T>(context);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / dims.kv_heads, hk = item % dims.kv_heads;
        const Masking mask = masking(b);
        std::fill(dk + item * dims.skv * d, dk + (item + 1) * dims.skv * d, 0.0f);
        std::fill(dv + item * dims.skv * d, dv + (item + 1) * dims.skv * d, 0.0f);
        for (int64_t h = hk * dims.group(); h < (hk + 1) * dims.group(); ++h) {
          const HeadData<T> data = head(b, h);
          A* const dqh = dq + (b * dims.heads + h) * dims.sq * d;
          std::fill(dqh, dqh + dims.sq * d, 0.0f);
          for (int64_t k0 = 0; k0 < dims.skv; k0 += kKeyBlock) {
            const int64_t bk = std::min(kKeyBlock, dims.skv - k0);
            for (int64_t q0 = 0; q0 < dims.sq; q0 += kQueryBlock) {
              const int64_t bq = std::min(kQueryBlock, dims.sq - q0);
              const BlockMask kind = mask.classify(q0, bq, k0, bk);
              if (kind == BlockMask::hidden) continue;
              probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, blocks);
              accumulate_dk_dv(data, q0, bq, bk, blocks, dk + (item * dims.skv + k0) * d,
                               dv + (item * dims.skv + k0) * d);
              accumulate_dq(data, k0, bq, bk, blocks, dqh + q0 * d);
            }
          }
        }
      }
    });
    return;
  }
  // Too few pairs to keep the threads busy: dk, dv per (b, kv head, key block), then dq per (b, head, query
  // block), each pass recomputing the probabilities it needs.
  for_each_block<T>(context, dims.batch * dims.kv_heads, dims.skv, kKeyBlock,
                    [&](int64_t outer, int64_t k0, int64_t bk, Blocks<T>& blocks) {
                      const int64_t b = outer / dims.kv_heads, hk = outer % dims.kv_heads;
                      const Masking mask = masking(b);
                      A* dkh = dk + outer * dims.skv * d + k0 * d;
                      A* dvh = dv + outer * dims.skv * d + k0 * d;
                      std::fill(dkh, dkh + bk * d, 0.0f);
                      std::fill(dvh, dvh + bk * d, 0.0f);
                      for (int64_t h = hk * dims.group(); h < (hk + 1) * dims.group(); ++h) {
                        const HeadData<T> data = head(b, h);
                        for (int64_t q0 = 0; q0 < dims.sq; q0 += kQueryBlock) {
                          const int64_t bq = std::min(kQueryBlock, dims.sq - q0);
                          const BlockMask kind = mask.classify(q0, bq, k0, bk);
                          if (kind == BlockMask::hidden) continue;
                          probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, blocks);
                          accumulate_dk_dv(data, q0, bq, bk, blocks, dkh, dvh);
                        }
                      }
                    });
  for_each_block<T>(context, dims.batch * dims.heads, dims.sq, kQueryBlock,
                    [&](int64_t outer, int64_t q0, int64_t bq, Blocks<T>& blocks) {
                      const HeadData<T> data = head(outer / dims.heads, outer % dims.heads);
                      const Masking mask = masking(outer / dims.heads);
                      A* dqh = dq + outer * dims.sq * d + q0 * d;
                      std::fill(dqh, dqh + bq * d, 0.0f);
                      for (int64_t k0 = 0; k0 < dims.skv; k0 += kKeyBlock) {
                        const int64_t bk = std::min(kKeyBlock, dims.skv - k0);
                        const BlockMask kind = mask.classify(q0, bq, k0, bk);
                        if (kind == BlockMask::hidden) break;
                        probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, blocks);
                        accumulate_dq(data, k0, bq, bk, blocks, dqh);
                      }
                    });
}

// The implementation for q's dtype, f32, bf16 or f64 (the shape rules allow no other).
using CpuKernel = void (*)(const CpuCall&, CpuContext&);
template <CpuKernel kF32, CpuKernel kBf16, CpuKernel kF64>
void for_dtype(const CpuCall& call, CpuContext& context) {
  switch (call.input_type(0).dtype) {
    case DType::f64: return kF64(call, context);
    case DType::bf16: return kBf16(call, context);
    default: return kF32(call, context);
  }
}

std::vector<Tensor> with_segments(std::vector<Tensor> inputs, const Tensor& q_segment_ids,
                                  const Tensor& kv_segment_ids) {
  if (q_segment_ids.defined() != kv_segment_ids.defined())
    throw Error("[flash_attention] give both q_segment_ids and kv_segment_ids, or neither");
  if (q_segment_ids.defined()) inputs.insert(inputs.end(), {q_segment_ids, kv_segment_ids});
  return inputs;
}

std::vector<Tensor> forward_backward(const std::vector<Tensor>& in, const std::vector<Tensor>& outputs,
                                     const std::vector<Tensor>& grads, const Attrs& attrs) {
  if (!grads[0].defined()) return std::vector<Tensor>(in.size());  // only lse got a gradient: none flows
  std::vector<Tensor> inputs = {in[0], in[1], in[2], outputs[0], outputs[1], grads[0]};
  if (in.size() == 5) inputs.insert(inputs.end(), {in[3], in[4]});
  std::vector<Tensor> d = call("flash_attention_backward", inputs, attrs);
  for (size_t i = 0; i < 3; ++i)
    if (d[i].dtype() != in[i].dtype()) d[i] = d[i].to(in[i].dtype());  // bf16's come in f32
  d.resize(in.size());                                                 // no gradient for segment ids
  return d;
}

}  // namespace

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double sm_scale,
                       const Tensor& q_segment_ids, const Tensor& kv_segment_ids) {
  const Attrs attrs = {
      {"causal", int64_t{causal}}, {"sm_scale", sm_scale}, {"segments", int64_t{q_segment_ids.defined()}}};
  // The kernel takes bf16 as it is; f16 inputs are computed in f32 (oneDNN has no f16 products on CPUs
  // without AVX-512 FP16) and the output comes back in f16. The shape rule names any other dtype or a mix.
  const bool f16 = q.dtype() == DType::f16 && k.dtype() == DType::f16 && v.dtype() == DType::f16;
  auto widen = [f16](const Tensor& t) { return f16 ? t.to(DType::f32) : t; };
  const Tensor out =
      call("flash_attention", with_segments({widen(q), widen(k), widen(v)}, q_segment_ids, kv_segment_ids), attrs)[0];
  return f16 ? out.to(DType::f16) : out;
}

namespace builtin {

void register_flash_attention() {
  ir::add_builtin_kernel({.name = "flash_attention",
                          .shape = forward_shape,
                          .cpu = for_dtype<forward_cpu<float>, forward_cpu<Bf16>, forward_cpu<double>>,
                          .backward = forward_backward,
                          .scratch = forward_scratch,
                          .cost = attention_cost<2>});
  ir::add_builtin_kernel({.name = "flash_attention_backward",
                          .shape = backward_shape,
                          .cpu = for_dtype<backward_cpu<float>, backward_cpu<Bf16>, backward_cpu<double>>,
                          .scratch = backward_scratch,
                          .cost = attention_cost<5>});
}

}  // namespace builtin
}  // namespace xlite::kernels
