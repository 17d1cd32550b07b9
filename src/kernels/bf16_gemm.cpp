#include "kernels/bf16_gemm.h"

#include <dnnl.h>

#include <algorithm>
#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "core/runtime_context.h"
#include "xlite/error.h"

namespace xlite::kernels {
namespace {

void check(dnnl_status_t status, const char* op, const char* what) {
  if (status == dnnl_success) return;
  if (status == dnnl_out_of_memory) throw Error(std::string("[") + op + "] out of memory in oneDNN's bf16 " + what);
  throw Error(std::string("[") + op + "] oneDNN's bf16 " + what + " failed (status " + std::to_string(status) + ")");
}

struct Shape {
  bool a_transposed, b_transposed, accumulate;
  int64_t m, n, k, lda, ldb, ldc;
  auto operator<=>(const Shape&) const = default;
};

// One tile shape's primitive, with memory objects whose data pointers each call replaces.
class Tile {
 public:
  Tile() = default;
  Tile(const Tile&) = delete;
  Tile& operator=(const Tile&) = delete;
  // Separate from the constructor so that the destructor frees what a failed creation made.
  void create(const char* op, dnnl_engine_t e, const Shape& s) {
    dnnl_memory_desc_t a_desc, b_desc, c_desc;
    dnnl_dims_t a_dims = {s.m, s.k}, b_dims = {s.k, s.n}, c_dims = {s.m, s.n};
    dnnl_dims_t a_strides = {s.lda, 1}, b_strides = {s.ldb, 1}, c_strides = {s.ldc, 1};
    if (s.a_transposed) a_strides[0] = 1, a_strides[1] = s.lda;
    if (s.b_transposed) b_strides[0] = 1, b_strides[1] = s.ldb;
    check(dnnl_memory_desc_init_by_strides(&a_desc, 2, a_dims, dnnl_bf16, a_strides), op, "matmul descriptor");
    check(dnnl_memory_desc_init_by_strides(&b_desc, 2, b_dims, dnnl_bf16, b_strides), op, "matmul descriptor");
    check(dnnl_memory_desc_init_by_strides(&c_desc, 2, c_dims, dnnl_f32, c_strides), op, "matmul descriptor");
    dnnl_matmul_desc_t desc;
    check(dnnl_matmul_desc_init(&desc, &a_desc, &b_desc, nullptr, &c_desc), op, "matmul descriptor");
    check(dnnl_primitive_attr_create(&attr_), op, "matmul attributes");
    // The thread's own scratchpad, not the library's shared one: threads run tiles concurrently.
    check(dnnl_primitive_attr_set_scratchpad_mode(attr_, dnnl_scratchpad_mode_user), op, "matmul attributes");
    if (s.accumulate) {
      check(dnnl_post_ops_create(&post_ops_), op, "matmul attributes");
      check(dnnl_post_ops_append_sum(post_ops_, 1.0f), op, "matmul attributes");
      check(dnnl_primitive_attr_set_post_ops(attr_, post_ops_), op, "matmul attributes");
    }
    check(dnnl_primitive_desc_create(&pd_, &desc, attr_, e, nullptr), op, "matmul");
    check(dnnl_primitive_create(&primitive_, pd_), op, "matmul");
    check(dnnl_memory_create(&a_, &a_desc, e, DNNL_MEMORY_NONE), op, "matmul memory");
    check(dnnl_memory_create(&b_, &b_desc, e, DNNL_MEMORY_NONE), op, "matmul memory");
    check(dnnl_memory_create(&c_, &c_desc, e, DNNL_MEMORY_NONE), op, "matmul memory");
    const dnnl_memory_desc_t* scratch_desc = dnnl_primitive_desc_query_md(pd_, dnnl_query_scratchpad_md, 0);
    check(dnnl_memory_create(&scratchpad_, scratch_desc, e, DNNL_MEMORY_ALLOCATE), op, "matmul scratchpad");
    check(dnnl_stream_create(&stream_, e, dnnl_stream_default_flags), op, "stream");
  }
  ~Tile() {
    for (dnnl_memory_t m : {a_, b_, c_, scratchpad_})
      if (m) dnnl_memory_destroy(m);
    if (stream_) dnnl_stream_destroy(stream_);
    if (primitive_) dnnl_primitive_destroy(primitive_);
    if (pd_) dnnl_primitive_desc_destroy(pd_);
    if (post_ops_) dnnl_post_ops_destroy(post_ops_);
    if (attr_) dnnl_primitive_attr_destroy(attr_);
  }

  void run(const char* op, const uint16_t* a, const uint16_t* b, float* c) {
    check(dnnl_memory_set_data_handle(a_, const_cast<uint16_t*>(a)), op, "matmul memory");
    check(dnnl_memory_set_data_handle(b_, const_cast<uint16_t*>(b)), op, "matmul memory");
    check(dnnl_memory_set_data_handle(c_, c), op, "matmul memory");
    const dnnl_exec_arg_t args[] = {
        {DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}, {DNNL_ARG_SCRATCHPAD, scratchpad_}};
    check(dnnl_primitive_execute(primitive_, stream_, 4, args), op, "matmul");
    check(dnnl_stream_wait(stream_), op, "matmul");
  }

 private:
  dnnl_primitive_attr_t attr_ = nullptr;
  dnnl_post_ops_t post_ops_ = nullptr;
  dnnl_primitive_desc_t pd_ = nullptr;
  dnnl_primitive_t primitive_ = nullptr;
  dnnl_memory_t a_ = nullptr, b_ = nullptr, c_ = nullptr, scratchpad_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
};

// The tiles made so far, by thread and shape: each thread runs its own, with its own scratchpad and
// stream, so the lock guards only the lookup.
struct Bf16Tiles final : RuntimeState {
  mutable std::mutex mutex;
  dnnl_engine_t engine = nullptr;  // made on first use; the state lives as long as the process
  std::map<std::pair<std::thread::id, Shape>, std::shared_ptr<Tile>> tiles;
  std::string describe() const override {
    std::lock_guard lock(mutex);
    return std::to_string(tiles.size()) + " oneDNN matmul primitives";
  }
  void clear_cache() override {
    std::lock_guard lock(mutex);
    tiles.clear();
  }

  std::shared_ptr<Tile> tile(const char* op, const Shape& shape) {
    std::lock_guard lock(mutex);
    if (!engine) check(dnnl_engine_create(&engine, dnnl_cpu, 0), op, "engine");
    std::shared_ptr<Tile>& tile = tiles[{std::this_thread::get_id(), shape}];
    if (!tile) {
      auto made = std::make_shared<Tile>();
      made->create(op, engine, shape);
      tile = std::move(made);
    }
    return tile;
  }
};

}  // namespace

void gemm_bf16(const char* op, bool a_transposed, bool b_transposed, int64_t m, int64_t n, int64_t k, const uint16_t* a,
               int64_t lda, const uint16_t* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // oneDNN refuses empty products; the sum over nothing is 0
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  // A block kernel meets a handful of shapes (full blocks and the edges), so the cache stays small.
  const Shape shape{a_transposed, b_transposed, accumulate, m, n, k, lda, ldb, ldc};
  runtime_context::state<Bf16Tiles>("bf16 tiles").tile(op, shape)->run(op, a, b, c);
}

}  // namespace xlite::kernels
