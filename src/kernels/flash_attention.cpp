// flash_attention: softmax(q k^T * scale + mask) v without the S x S matrix. The forward keeps, per query
// row, the running maximum and sum of its exponentials over blocks of keys (online softmax) and saves the
// row's log-sum-exp; the backward recomputes each block's probabilities from it. Tile products are
// oneDNN sgemms on one thread each; blocks of queries (forward, dq) or keys (dk, dv) run side by side.
// Extra memory is the saved log-sum-exp and, per thread, one block of scores and of the output: O(B*H*S*D)
// in all, never S x S; the kernels declare their scratch, so debug::memory_stats counts it. The kernels take
// f32, and f64 for checking gradients; flash_attention() runs f16 and bf16 inputs through them in f32.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/kernel_registry.h"
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
    if ((q.dtype != DType::f32 && q.dtype != DType::f64) || t->dtype != q.dtype || t->shape.size() != 4)
      refuse("q, k and v must be f32 (or f64) [B, H, S, D], got " + type_text(q) + ", " + type_text(k) + ", " +
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

// C [m, n] = alpha op(A) op(B) + beta C, row-major, op transposing where the flag is 'T'; one thread.
// oneDNN has no f64 GEMM, and f64 is here for checking gradients, not for speed: its tiles are plain loops.
template <class T>
void blas_gemm(char transpose_a, char transpose_b, int64_t m, int64_t n, int64_t k, std::type_identity_t<T> alpha,
               const T* a, int64_t lda, const T* b, int64_t ldb, std::type_identity_t<T> beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (k > 0) {
      if (dnnl_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) != dnnl_success)
        throw Error("[flash_attention] oneDNN's sgemm failed");
      return;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t l = 0; l < k; ++l)
        sum += (transpose_a == 'T' ? a[l * lda + i] : a[i * lda + l]) *
               (transpose_b == 'T' ? b[j * ldb + l] : b[l * ldb + j]);
      c[i * ldc + j] = alpha * sum + (beta == 0 ? T(0) : beta * c[i * ldc + j]);
    }
}

// C [m, n] (+)= A [m, k] x B, B given as [k, n] or, transposed, as [n, k]; one thread.
template <class T>
void gemm(bool b_transposed, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          std::type_identity_t<T> beta, T* c, int64_t ldc) {
  blas_gemm<T>('N', b_transposed ? 'T' : 'N', m, n, k, 1, a, lda, b, ldb, beta, c, ldc);
}

// C [m, n] += alpha A^T B, A given as [k, m] (lda) and B as [k, n]; one thread.
template <class T>
void gemm_transposed_a(int64_t m, int64_t n, int64_t k, std::type_identity_t<T> alpha, const T* a, int64_t lda,
                       const T* b, int64_t ldb, T* c) {
  if (k == 0) return;
  blas_gemm<T>('T', 'N', m, n, k, alpha, a, lda, b, ldb, 1, c, n);
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

// The scaled scores of a block, -inf where masked, and each row's largest.
template <class T>
void scores(const Masking& mask, BlockMask kind, T scale, const T* q, const T* k, int64_t d, int64_t q0, int64_t bq,
            int64_t k0, int64_t bk, T* s, T* row_max) {
  gemm(true, bq, bk, d, q + q0 * d, d, k + k0 * d, d, 0.0f, s, bk);
  for (int64_t r = 0; r < bq; ++r) {
    T* sr = s + r * bk;
    if (kind == BlockMask::visible) {
      row_max[r] = scale_and_max(sr, bk, scale);
      continue;
    }
    T best = kNegInf;
    for (int64_t c = 0; c < bk; ++c)
      best = std::max(best, sr[c] = mask.visible(q0 + r, k0 + c) ? sr[c] * scale : kNegInf);
    row_max[r] = best;
  }
}

// Each thread's scratch: the forward's block of scores, its output block and three numbers per row; the
// backward's two blocks of scores (P and dS), in each of its two passes, and one number per query row (delta).
// Counted wide for the scratch rule, which refuses a count past int64 before the kernel runs.
__int128 forward_floats_per_thread(int64_t d) {
  return kQueryBlock * kKeyBlock + __int128{kQueryBlock} * d + 3 * kQueryBlock;
}
constexpr int64_t kBackwardFloatsPerThread = 2 * kQueryBlock * kKeyBlock;

template <class T>
T* take(CpuContext& context, int64_t count) {
  return static_cast<T*>(context.scratch(static_cast<size_t>(count) * sizeof(T)));
}

int64_t forward_scratch(const std::vector<TensorType>& in, const Attrs&, int threads) {
  return scratch_bytes("flash_attention",
                       threads * forward_floats_per_thread(in[0].shape[3]) * dtype_size(in[0].dtype));
}

int64_t backward_scratch(const std::vector<TensorType>& in, const Attrs&, int threads) {
  const Dims dims = dims_of(in[0], in[1]);
  const __int128 floats = __int128{dims.batch} * dims.heads * dims.sq + 2 * threads * kBackwardFloatsPerThread;
  return scratch_bytes("flash_attention_backward", floats * dtype_size(in[0].dtype));
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

std::vector<TensorType> forward_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const bool segments = has_segments(attrs);
  if (in.size() != (segments ? 5u : 3u)) refuse("takes q, k, v and, with segments=1, their segment ids");
  const Dims dims = check_inputs(in, segments, 3);
  return {in[0], {{dims.batch, dims.heads, dims.sq}, in[0].dtype}};
}

template <class T>
void forward_cpu(const CpuCall& call, CpuContext& context) {
  const Dims dims = dims_of(call.input_type(0), call.input_type(1));
  const bool causal = call.int_attr("causal") != 0, segments = has_segments(call.attrs());
  const T scale = static_cast<T>(call.float_attr("sm_scale"));
  const T *q = call.input<T>(0), *k = call.input<T>(1), *v = call.input<T>(2);
  T *out = call.output<T>(0), *lse = call.output<T>(1);
  const int64_t d = dims.d, q_blocks = (dims.sq + kQueryBlock - 1) / kQueryBlock;
  context.parallel_for(dims.batch * dims.heads * q_blocks, 1, [&](int64_t begin, int64_t end) {
    T* const s = take<T>(context, static_cast<int64_t>(forward_floats_per_thread(d)));
    T *const acc = s + kQueryBlock * kKeyBlock, *const row_max = acc + kQueryBlock * d;
    T *const row_sum = row_max + kQueryBlock, *const block_max = row_sum + kQueryBlock;
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
        scores(mask, kind, scale, qh, kh, d, q0, bq, k0, bk, s, block_max);
        for (int64_t r = 0; r < bq; ++r) {
          T* sr = s + r * bk;
          const T new_max = std::max(row_max[r], block_max[r]);
          if (new_max == kNegInf) {  // nothing visible yet in this row
            std::fill(sr, sr + bk, 0.0f);
            continue;
          }
          const T rescale = std::exp(row_max[r] - new_max);
          row_sum[r] = row_sum[r] * rescale + exp_shifted_sum(sr, bk, new_max);
          row_max[r] = new_max;
          if (rescale != 1.0f)
            for (int64_t j = 0; j < d; ++j) acc[r * d + j] *= rescale;
        }
        gemm(false, bq, d, bk, s, bk, vh + k0 * d, d, 1.0f, acc, d);
      }
      T* oh = out + ((b * dims.heads + h) * dims.sq + q0) * d;
      T* lh = lse + (b * dims.heads + h) * dims.sq + q0;
      for (int64_t r = 0; r < bq; ++r) {
        // A row that sees no key gives zeros, and -inf for its log-sum-exp.
        const T inverse = row_sum[r] > 0 ? 1.0f / row_sum[r] : 0.0f;
        for (int64_t j = 0; j < d; ++j) oh[r * d + j] = acc[r * d + j] * inverse;
        lh[r] = row_sum[r] > 0 ? row_max[r] + std::log(row_sum[r]) : kNegInf;
      }
    }
  });
}

// Inputs q, k, v, out, lse, dout (and segment ids): dq, dk, dv. dk and dv are summed over the query heads
// of a group.
std::vector<TensorType> backward_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const bool segments = has_segments(attrs);
  if (in.size() != (segments ? 8u : 6u))
    refuse("backward takes q, k, v, out, lse, dout and, with segments=1, their segment ids");
  const Dims dims = check_inputs(in, segments, 6);
  if (in[3] != in[0] || in[5] != in[0] || in[4] != TensorType{{dims.batch, dims.heads, dims.sq}, in[0].dtype})
    refuse("backward needs out and dout of q's type and lse [B, H, Sq] of q's dtype");
  return {in[0], in[1], in[2]};
}

// One query head's rows and its key head's, as the backward reads them.
template <class T>
struct HeadData {
  const T *q, *k, *v, *dout, *lse, *delta;
};

// P = exp(S - lse) of a block (0 where masked), then dP = dO V^T and dS = P (dP - delta).
template <class T>
void probabilities_and_ds(const Masking& mask, BlockMask kind, T scale, const HeadData<T>& head, int64_t d, int64_t q0,
                          int64_t bq, int64_t k0, int64_t bk, T* p, T* ds) {
  const T *v = head.v, *dout = head.dout, *lse = head.lse, *delta = head.delta;
  T row_max[kQueryBlock];
  scores(mask, kind, scale, head.q, head.k, d, q0, bq, k0, bk, p, row_max);
  for (int64_t r = 0; r < bq; ++r) {
    if (lse[q0 + r] == kNegInf)  // a row that sees no key has no probabilities
      std::fill(p + r * bk, p + (r + 1) * bk, 0.0f);
    else
      exp_shifted_sum(p + r * bk, bk, lse[q0 + r]);
  }
  gemm(true, bq, bk, d, dout + q0 * d, d, v + k0 * d, d, 0.0f, ds, bk);
  for (int64_t r = 0; r < bq; ++r)
    for (int64_t c = 0; c < bk; ++c) ds[r * bk + c] = p[r * bk + c] * (ds[r * bk + c] - delta[q0 + r]);
}

// Runs body(outer, start, length, p, ds) for every block of at most `block` of [0, size) under each of
// `outers` outer indices, side by side, with two score blocks of scratch per thread.
template <class T, class Body>
void for_each_block(CpuContext& context, int64_t outers, int64_t size, int64_t block, Body body) {
  const int64_t blocks = (size + block - 1) / block;
  context.parallel_for(outers * blocks, 1, [&](int64_t begin, int64_t end) {
    T* const p = take<T>(context, kBackwardFloatsPerThread);
    T* const ds = p + kQueryBlock * kKeyBlock;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t start = item % blocks * block;
      body(item / blocks, start, std::min(block, size - start), p, ds);
    }
  });
}

template <class T>
void backward_cpu(const CpuCall& call, CpuContext& context) {
  const Dims dims = dims_of(call.input_type(0), call.input_type(1));
  const bool causal = call.int_attr("causal") != 0, segments = has_segments(call.attrs());
  const T scale = static_cast<T>(call.float_attr("sm_scale"));
  const T *q = call.input<T>(0), *k = call.input<T>(1), *v = call.input<T>(2);
  const T *out = call.input<T>(3), *lse = call.input<T>(4), *dout = call.input<T>(5);
  T *dq = call.output<T>(0), *dk = call.output<T>(1), *dv = call.output<T>(2);
  const int64_t d = dims.d;
  // delta_i = rowsum(dO_i * O_i), per (b, h, query).
  T* const delta = take<T>(context, dims.batch * dims.heads * dims.sq);
  context.parallel_for(dims.batch * dims.heads * dims.sq, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < d; ++j) sum += dout[i * d + j] * out[i * d + j];
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
  // dP_ij's products: dV_j += P^T dO_i; dK_j += scale dS^T Q_i; dQ_i += scale dS K_j.
  auto accumulate_dk_dv = [&](const HeadData<T>& data, int64_t q0, int64_t bq, int64_t bk, const T* p, const T* ds,
                              T* dkh, T* dvh) {
    gemm_transposed_a(bk, d, bq, 1.0f, p, bk, data.dout + q0 * d, d, dvh);
    gemm_transposed_a(bk, d, bq, scale, ds, bk, data.q + q0 * d, d, dkh);
  };
  auto accumulate_dq = [&](const HeadData<T>& data, int64_t k0, int64_t bq, int64_t bk, const T* ds, T* dqh) {
    blas_gemm<T>('N', 'N', bq, d, bk, scale, ds, bk, data.k + k0 * d, d, 1, dqh, d);
  };
  if (dims.batch * dims.kv_heads >= 2 * context.num_threads()) {
    // Enough (b, kv head) pairs to share out: each is one work item that owns its dk, dv and the dq of its
    // query heads, so every block of probabilities is computed once and feeds all three (five products per
    // block instead of the seven of the split passes below).
    context.parallel_for(dims.batch * dims.kv_heads, 1, [&](int64_t begin, int64_t end) {
      T* const p = take<T>(context, kBackwardFloatsPerThread);
      T* const ds = p + kQueryBlock * kKeyBlock;
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / dims.kv_heads, hk = item % dims.kv_heads;
        const Masking mask = masking(b);
        std::fill(dk + item * dims.skv * d, dk + (item + 1) * dims.skv * d, 0.0f);
        std::fill(dv + item * dims.skv * d, dv + (item + 1) * dims.skv * d, 0.0f);
        for (int64_t h = hk * dims.group(); h < (hk + 1) * dims.group(); ++h) {
          const HeadData<T> data = head(b, h);
          T* const dqh = dq + (b * dims.heads + h) * dims.sq * d;
          std::fill(dqh, dqh + dims.sq * d, 0.0f);
          for (int64_t k0 = 0; k0 < dims.skv; k0 += kKeyBlock) {
            const int64_t bk = std::min(kKeyBlock, dims.skv - k0);
            for (int64_t q0 = 0; q0 < dims.sq; q0 += kQueryBlock) {
              const int64_t bq = std::min(kQueryBlock, dims.sq - q0);
              const BlockMask kind = mask.classify(q0, bq, k0, bk);
              if (kind == BlockMask::hidden) continue;
              probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, p, ds);
              accumulate_dk_dv(data, q0, bq, bk, p, ds, dk + (item * dims.skv + k0) * d,
                               dv + (item * dims.skv + k0) * d);
              accumulate_dq(data, k0, bq, bk, ds, dqh + q0 * d);
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
                    [&](int64_t outer, int64_t k0, int64_t bk, T* p, T* ds) {
                      const int64_t b = outer / dims.kv_heads, hk = outer % dims.kv_heads;
                      const Masking mask = masking(b);
                      T* dkh = dk + outer * dims.skv * d + k0 * d;
                      T* dvh = dv + outer * dims.skv * d + k0 * d;
                      std::fill(dkh, dkh + bk * d, 0.0f);
                      std::fill(dvh, dvh + bk * d, 0.0f);
                      for (int64_t h = hk * dims.group(); h < (hk + 1) * dims.group(); ++h) {
                        const HeadData<T> data = head(b, h);
                        for (int64_t q0 = 0; q0 < dims.sq; q0 += kQueryBlock) {
                          const int64_t bq = std::min(kQueryBlock, dims.sq - q0);
                          const BlockMask kind = mask.classify(q0, bq, k0, bk);
                          if (kind == BlockMask::hidden) continue;
                          probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, p, ds);
                          accumulate_dk_dv(data, q0, bq, bk, p, ds, dkh, dvh);
                        }
                      }
                    });
  for_each_block<T>(context, dims.batch * dims.heads, dims.sq, kQueryBlock,
                    [&](int64_t outer, int64_t q0, int64_t bq, T* p, T* ds) {
                      const HeadData<T> data = head(outer / dims.heads, outer % dims.heads);
                      const Masking mask = masking(outer / dims.heads);
                      T* dqh = dq + outer * dims.sq * d + q0 * d;
                      std::fill(dqh, dqh + bq * d, 0.0f);
                      for (int64_t k0 = 0; k0 < dims.skv; k0 += kKeyBlock) {
                        const int64_t bk = std::min(kKeyBlock, dims.skv - k0);
                        const BlockMask kind = mask.classify(q0, bq, k0, bk);
                        if (kind == BlockMask::hidden) break;
                        probabilities_and_ds(mask, kind, scale, data, d, q0, bq, k0, bk, p, ds);
                        accumulate_dq(data, k0, bq, bk, ds, dqh);
                      }
                    });
}

// The implementation for q's dtype, f32 or f64 (the shape rules allow no other).
template <void (*kF32)(const CpuCall&, CpuContext&), void (*kF64)(const CpuCall&, CpuContext&)>
void for_dtype(const CpuCall& call, CpuContext& context) {
  (call.input_type(0).dtype == DType::f64 ? kF64 : kF32)(call, context);
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
  d.resize(in.size());  // no gradient for segment ids
  return d;
}

}  // namespace

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double sm_scale,
                       const Tensor& q_segment_ids, const Tensor& kv_segment_ids) {
  const Attrs attrs = {
      {"causal", int64_t{causal}}, {"sm_scale", sm_scale}, {"segments", int64_t{q_segment_ids.defined()}}};
  // Half-precision inputs are computed in f32 (as PyTorch's CPU kernel accumulates them) and the output
  // comes back in their type; the kernel's shape rule names any other dtype or a mix.
  const DType dtype = q.dtype();
  const bool half = (dtype == DType::f16 || dtype == DType::bf16) && k.dtype() == dtype && v.dtype() == dtype;
  auto widen = [half](const Tensor& t) { return half ? t.to(DType::f32) : t; };
  const Tensor out =
      call("flash_attention", with_segments({widen(q), widen(k), widen(v)}, q_segment_ids, kv_segment_ids), attrs)[0];
  return half ? out.to(dtype) : out;
}

namespace builtin {

void register_flash_attention() {
  ir::add_builtin_kernel({.name = "flash_attention",
                          .shape = forward_shape,
                          .cpu = for_dtype<forward_cpu<float>, forward_cpu<double>>,
                          .backward = forward_backward,
                          .scratch = forward_scratch,
                          .cost = attention_cost<2>});
  ir::add_builtin_kernel({.name = "flash_attention_backward",
                          .shape = backward_shape,
                          .cpu = for_dtype<backward_cpu<float>, backward_cpu<double>>,
                          .scratch = backward_scratch,
                          .cost = attention_cost<5>});
}

}  // namespace builtin
}  // namespace xlite::kernels
