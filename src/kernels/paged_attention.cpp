// paged_attention: decode attention (one new query per sequence) over a KV cache kept in fixed-size pages,
// as serving systems keep it: sequence b's keys are the first lengths[b] token slots of the pages that
// page_indices[b] lists, in order. Decode reads every cached key and value once and does two multiply-adds
// per element read, so it is bound by memory bandwidth: each (sequence, kv head) is one work item that
// streams its pages once for all the query heads of its group, in blocks of pages_per_compute_block pages
// with an online softmax, so that a block's scores stay in cache.
//
// Both are split in two: a check of the lengths and page indices, which may fail, and the kernel that reads
// or writes the pages, which cannot. The checks read no pages, so the compiler runs them first, and a decode
// step's writes into the cache (paged_kv_append_) may then go into the cache's donated buffer: only steps
// after the last that may fail can (kernels::Kernel::may_fail). The page kernels take the check's result
// as an input, which orders them after it; called without a check, they skip a token that has no page.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
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

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The sizes, read from pages [Hkv, total_pages, page_size, D] and page_indices [B, pages_per_seq].
struct PageDims {
  int64_t kv_heads, total_pages, page_size, d, batch, pages_per_seq;
  int64_t capacity() const { return pages_per_seq * page_size; }  // tokens a sequence can hold
  // The row of the pages that holds kv head hk's token `token` of the sequence whose pages are listed.
  int64_t row(const int32_t* pages_of_sequence, int64_t hk, int64_t token) const {
    return (hk * total_pages + pages_of_sequence[token / page_size]) * page_size + token % page_size;
  }
};

PageDims check_pages(const char* kernel, const TensorType& pages, const TensorType& lengths,
                     const TensorType& page_indices) {
  if (pages.dtype != DType::f32 || pages.shape.size() != 4)
    refuse(kernel, "pages must be f32 [Hkv, total_pages, page_size, D], got " + type_text(pages));
  if (page_indices.dtype != DType::i32 || page_indices.shape.size() != 2)
    refuse(kernel, "page_indices must be i32 [B, pages_per_sequence], got " + type_text(page_indices));
  const int64_t batch = page_indices.shape[0];
  if (lengths != TensorType{{batch}, DType::i32})
    refuse(kernel, "lengths must be i32 [" + std::to_string(batch) + "], one per sequence, got " + type_text(lengths));
  return {pages.shape[0], pages.shape[1], pages.shape[2], pages.shape[3], batch, page_indices.shape[1]};
}

// Fails the call unless each sequence's first `length + extra` tokens lie in pages that exist.
void check_tokens(CpuContext& context, const PageDims& dims, const int32_t* lengths, const int32_t* page_indices,
                  int64_t extra) {
  for (int64_t b = 0; b < dims.batch; ++b) {
    const int64_t tokens = int64_t{lengths[b]} + extra;
    const std::string pages = std::to_string(dims.pages_per_seq) + " pages of " + std::to_string(dims.page_size);
    if (lengths[b] < 0 || tokens > dims.capacity())
      context.fail("sequence " + std::to_string(b) + " has length " + std::to_string(lengths[b]) +
                   (lengths[b] >= 0 && extra
                        ? " and no free slot in its " + pages
                        : ", outside [0, " + std::to_string(dims.capacity()) + "], what its " + pages + " hold"));
    for (int64_t p = 0; p * dims.page_size < tokens; ++p) {
      const int32_t page = page_indices[b * dims.pages_per_seq + p];
      if (page < 0 || page >= dims.total_pages)
        context.fail("page_indices[" + std::to_string(b) + ", " + std::to_string(p) + "] = " + std::to_string(page) +
                     " is outside the " + std::to_string(dims.total_pages) + " pages");
    }
  }
}

// Decode waits on memory: each token's key and value row is fetched ahead of its use, kPrefetchTokens
// tokens early, since pages lie anywhere and the hardware prefetcher does not follow them.
constexpr int64_t kPrefetchTokens = 6;
void prefetch_row(const float* row, int64_t d) {
  for (int64_t i = 0; i < d; i += 16) __builtin_prefetch(row + i);
}

// A token's row in the pages, or -1 when its page is outside them (only without the check).
int64_t checked_row(const PageDims& dims, const int32_t* pages_of_sequence, int64_t hk, int64_t token) {
  const int32_t page = pages_of_sequence[token / dims.page_size];
  return page < 0 || page >= dims.total_pages ? -1 : dims.row(pages_of_sequence, hk, token);
}

// The lengths a sequence may have: up to its capacity, or one less when a token is to be appended.
int64_t longest(const PageDims& dims, int64_t append) { return dims.capacity() - append; }

// ---- paged_attention_check and paged_kv_append_check(lengths, page_indices) ----
// Attributes: total_pages and page_size (the pages' sizes, so that the check does not read the pages).

PageDims dims_from_attrs(const char* kernel, const std::vector<TensorType>& in, const Attrs& attrs) {
  const AttrReader reader(kernel, attrs);
  const int64_t total_pages = reader.int_attr("total_pages"), page_size = reader.int_attr("page_size");
  if (total_pages < 0 || page_size < 1) refuse(kernel, "the pages' sizes must be positive");
  return check_pages(kernel, {{1, total_pages, page_size, 1}, DType::f32}, in[0], in[1]);
}

template <int64_t kAppend>
std::vector<TensorType> check_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const char* kernel = kAppend ? "paged_kv_append_check" : "paged_attention_check";
  if (in.size() != 2) refuse(kernel, "takes lengths and page_indices");
  dims_from_attrs(kernel, in, attrs);
  return {{{}, DType::i32}};
}

template <int64_t kAppend>
void check_cpu(const CpuCall& call, CpuContext& context) {
  const PageDims dims = dims_from_attrs(call.kernel().c_str(), {call.input_type(0), call.input_type(1)}, call.attrs());
  check_tokens(context, dims, call.input<int32_t>(0), call.input<int32_t>(1), kAppend);
  *call.output<int32_t>(0) = 0;
}

const TensorType kCheckResult{{}, DType::i32};

// ---- paged_attention(q, k_pages, v_pages, lengths, page_indices, checked) ----

// A block never needs more pages than a sequence has: a larger pages_per_compute_block asks for no more
// scratch than one block of the whole sequence.
int64_t block_tokens(const AttrReader& attrs, const PageDims& dims) {
  return std::min(attrs.int_attr("pages_per_compute_block"), std::max<int64_t>(dims.pages_per_seq, 1)) * dims.page_size;
}

std::vector<TensorType> attention_shape(const std::vector<TensorType>& in, const Attrs& attrs) {
  const char* kernel = "paged_attention";
  if (in.size() != 6 || in[5] != kCheckResult)
    refuse(kernel, "takes q, k_pages, v_pages, lengths, page_indices and paged_attention_check's result");
  const PageDims dims = check_pages(kernel, in[1], in[3], in[4]);
  const TensorType& q = in[0];
  if (in[2] != in[1]) refuse(kernel, "k_pages and v_pages differ: " + type_text(in[1]) + " and " + type_text(in[2]));
  if (q.dtype != DType::f32 || q.shape.size() != 3 || q.shape[0] != dims.batch || q.shape[2] != dims.d)
    refuse(kernel, "q must be f32 [B, H, D] with B = " + std::to_string(dims.batch) +
                       " (page_indices) and D = " + std::to_string(dims.d) + " (pages), got " + type_text(q));
  if (dims.kv_heads == 0 || q.shape[1] % dims.kv_heads != 0)
    refuse(kernel, "q's " + std::to_string(q.shape[1]) + " heads are not a multiple of the pages' " +
                       std::to_string(dims.kv_heads) + " kv heads");
  if (AttrReader(kernel, attrs).int_attr("pages_per_compute_block") < 1)
    refuse(kernel, "pages_per_compute_block must be at least 1");
  return {q};
}

// Per thread: a block of scores for each query head of the group, their outputs, maxima and sums. Counted wide
// for the scratch rule, which refuses a count past int64 before the kernel runs.
__int128 attention_floats_per_thread(int64_t group, int64_t block, int64_t d) {
  return __int128{group} * (__int128{block} + d + 2);
}

int64_t attention_scratch(const std::vector<TensorType>& in, const Attrs& attrs, int threads) {
  const PageDims dims = check_pages("paged_attention", in[1], in[3], in[4]);
  const int64_t block = block_tokens(AttrReader("paged_attention", attrs), dims);
  const __int128 floats = attention_floats_per_thread(in[0].shape[1] / dims.kv_heads, block, dims.d);
  return scratch_bytes("paged_attention", threads * floats * int64_t{sizeof(float)});
}

void attention_cpu(const CpuCall& call, CpuContext& context) {
  const PageDims dims = check_pages("paged_attention", call.input_type(1), call.input_type(3), call.input_type(4));
  const int64_t heads = call.input_type(0).shape[1], group = heads / dims.kv_heads, d = dims.d;
  const int64_t block = block_tokens(call, dims);
  const float scale = static_cast<float>(call.float_attr("sm_scale"));
  const float *q = call.input<float>(0), *k_pages = call.input<float>(1), *v_pages = call.input<float>(2);
  const int32_t *lengths = call.input<int32_t>(3), *page_indices = call.input<int32_t>(4);
  float* out = call.output<float>(0);
  const auto floats = static_cast<int64_t>(attention_floats_per_thread(group, block, d));
  context.parallel_for(dims.batch * dims.kv_heads, 1, [&](int64_t begin, int64_t end) {
    float* const scores = static_cast<float*>(context.scratch(static_cast<size_t>(floats) * sizeof(float)));
    float *const acc = scores + group * block, *const row_max = acc + group * d, *const row_sum = row_max + group;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / dims.kv_heads, hk = item % dims.kv_heads;
      const int64_t length = std::clamp<int64_t>(lengths[b], 0, longest(dims, 0));
      const int32_t* pages = page_indices + b * dims.pages_per_seq;
      const float* qg = q + (b * heads + hk * group) * d;  // the group's query heads, one after another
      std::fill(acc, acc + group * d, 0.0f);
      std::fill(row_max, row_max + group, kNegInf);
      std::fill(row_sum, row_sum + group, 0.0f);
      for (int64_t t0 = 0; t0 < length; t0 += block) {
        const int64_t tokens = std::min(block, length - t0);
        for (int64_t t = 0; t < tokens; ++t) {
          const int64_t row = checked_row(dims, pages, hk, t0 + t);
          if (t0 + t + kPrefetchTokens < length) {
            const int64_t ahead = checked_row(dims, pages, hk, t0 + t + kPrefetchTokens);
            if (ahead >= 0) prefetch_row(k_pages + ahead * d, d);
          }
          if (row >= 0)
            dot_rows(qg, group, k_pages + row * d, d, scores + t, block);
          else
            for (int64_t g = 0; g < group; ++g) scores[g * block + t] = kNegInf;
        }
        for (int64_t g = 0; g < group; ++g) {
          float* s = scores + g * block;
          const float new_max = std::max(row_max[g], scale_and_max(s, tokens, scale));
          if (new_max == kNegInf) continue;  // every token so far without a page
          const float rescale = std::exp(row_max[g] - new_max);
          row_sum[g] = row_sum[g] * rescale + exp_shifted_sum(s, tokens, new_max);
          row_max[g] = new_max;
          if (rescale != 1.0f)
            for (int64_t j = 0; j < d; ++j) acc[g * d + j] *= rescale;
        }
        for (int64_t t = 0; t < tokens; ++t) {
          const int64_t row = checked_row(dims, pages, hk, t0 + t);
          if (t + kPrefetchTokens < tokens) {
            const int64_t ahead = checked_row(dims, pages, hk, t0 + t + kPrefetchTokens);
            if (ahead >= 0) prefetch_row(v_pages + ahead * d, d);
          }
          if (row >= 0) add_scaled_rows(acc, group, scores + t, block, v_pages + row * d, d);
        }
      }
      float* og = out + (b * heads + hk * group) * d;
      for (int64_t g = 0; g < group; ++g) {
        const float inverse = row_sum[g] > 0 ? 1.0f / row_sum[g] : 0.0f;  // an empty sequence gives zeros
        for (int64_t j = 0; j < d; ++j) og[g * d + j] = acc[g * d + j] * inverse;
      }
    }
  });
}

// ---- paged_kv_write(pages, new rows [B, Hkv, D], lengths, page_indices, checked) ----

std::vector<TensorType> write_shape(const std::vector<TensorType>& in, const Attrs&) {
  const char* kernel = "paged_kv_write";
  if (in.size() != 5 || in[4] != kCheckResult)
    refuse(kernel, "takes pages, the new rows, lengths, page_indices and paged_kv_append_check's result");
  const PageDims dims = check_pages(kernel, in[0], in[2], in[3]);
  if (in[1] != TensorType{{dims.batch, dims.kv_heads, dims.d}, DType::f32})
    refuse(kernel, "the new rows must be f32 [B, Hkv, D] = [" + std::to_string(dims.batch) + ", " +
                       std::to_string(dims.kv_heads) + ", " + std::to_string(dims.d) + "], got " + type_text(in[1]));
  return {in[0]};
}

void write_cpu(const CpuCall& call, CpuContext&) {
  const PageDims dims = check_pages("paged_kv_write", call.input_type(0), call.input_type(2), call.input_type(3));
  const float* rows = call.input<float>(1);
  const int32_t *lengths = call.input<int32_t>(2), *page_indices = call.input<int32_t>(3);
  float* pages = call.output<float>(0);
  for (int64_t b = 0; b < dims.batch; ++b) {
    const int64_t token = lengths[b];
    if (token < 0 || token > longest(dims, 1)) continue;
    const int32_t* own = page_indices + b * dims.pages_per_seq;
    for (int64_t hk = 0; hk < dims.kv_heads; ++hk) {
      const int64_t row = checked_row(dims, own, hk, token);
      if (row >= 0)
        std::memcpy(pages + row * dims.d, rows + (b * dims.kv_heads + hk) * dims.d,
                    static_cast<size_t>(dims.d) * sizeof(float));
    }
  }
}

Attrs page_sizes(const Tensor& pages) {
  const Shape& shape = pages.shape();
  if (shape.size() != 4) return {{"total_pages", int64_t{0}}, {"page_size", int64_t{0}}};  // the check refuses
  return {{"total_pages", shape[1]}, {"page_size", shape[2]}};
}

}  // namespace

Tensor paged_attention(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages, const Tensor& lengths,
                       const Tensor& page_indices, int64_t pages_per_compute_block, double sm_scale) {
  const Tensor checked = call("paged_attention_check", {lengths, page_indices}, page_sizes(k_pages))[0];
  return call("paged_attention", {q, k_pages, v_pages, lengths, page_indices, checked},
              {{"pages_per_compute_block", pages_per_compute_block}, {"sm_scale", sm_scale}})[0];
}

void paged_kv_append_(Tensor& k_pages, Tensor& v_pages, const Tensor& k, const Tensor& v, const Tensor& lengths,
                      const Tensor& page_indices) {
  // One check serves both caches, so they must be alike.
  if (v_pages.shape() != k_pages.shape() || v_pages.dtype() != k_pages.dtype() || v.shape() != k.shape() ||
      v.dtype() != k.dtype())
    refuse("paged_kv_append_", "k_pages and v_pages, and k and v, must have one type each, got " +
                                   type_text({k_pages.shape(), k_pages.dtype()}) + " and " +
                                   type_text({v_pages.shape(), v_pages.dtype()}) + ", " +
                                   type_text({k.shape(), k.dtype()}) + " and " + type_text({v.shape(), v.dtype()}));
  const Tensor checked = call("paged_kv_append_check", {lengths, page_indices}, page_sizes(k_pages))[0];
  k_pages.copy_(call("paged_kv_write", {k_pages, k, lengths, page_indices, checked})[0]);
  v_pages.copy_(call("paged_kv_write", {v_pages, v, lengths, page_indices, checked})[0]);
}

namespace builtin {

void register_paged_attention() {
  ir::add_builtin_kernel({.name = "paged_attention_check", .shape = check_shape<0>, .cpu = check_cpu<0>});
  ir::add_builtin_kernel({.name = "paged_kv_append_check", .shape = check_shape<1>, .cpu = check_cpu<1>});
  ir::add_builtin_kernel({.name = "paged_attention",
                          .shape = attention_shape,
                          .cpu = attention_cpu,
                          .scratch = attention_scratch,
                          .may_fail = false});
  ir::add_builtin_kernel(
      {.name = "paged_kv_write", .shape = write_shape, .cpu = write_cpu, .updates_input = 0, .may_fail = false});
}

}  // namespace builtin
}  // namespace xlite::kernels
