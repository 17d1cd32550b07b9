#pragma once
// The target-neutral half of a fused kernel, as XLA's elemental IR emitter is: the value of one element
// of a region body's instruction at an index, as LLVM IR. It lowers dtypes (16-bit floats computed in
// f32, bools stored in bytes), gives every elementwise op its scalar semantics, draws Philox random
// numbers, and turns layout ops, pads, concats and gathers into index arithmetic. A target derives from
// it and adds the function around it and the loops that call gen() (backends/cpu/emitter.cpp); math
// comes from the target (TargetMath), and failures in the data go to the target's flag_failure.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <deque>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "backends/codegen/element_failure.h"
#include "backends/codegen/target_math.h"
#include "ir/graph.h"

namespace xlite::backends::codegen {

bool is_unsigned(DType d);

// A dim whose index the target's innermost loop counts in part: multi[dim] == outer * size + inner with
// 0 <= inner < size, inner that loop's counter and outer invariant in it. Layout ops carry it to their
// operands' indices wherever it stays whole, so heads transposed back into rows read `inner` as their last
// index: contiguous loads, where the divisions of the reshape made gathers.
struct IndexSplit {
  int64_t dim = -1;  // -1: none
  llvm::Value* outer = nullptr;
  llvm::Value* inner = nullptr;
  int64_t size = 0;
};

// An element position: a linear index, a multi-index, or both, computed on demand.
struct Index {
  Shape shape;
  llvm::Value* linear = nullptr;
  std::vector<llvm::Value*> multi;
  IndexSplit split;
};

// Where a pad or one operand of a concat reads, and whether the element is its operand's at all.
struct BoundedIndex {
  Index* index;
  llvm::Value* inside;
};

class ElementGenerator {
 public:
  virtual ~ElementGenerator() = default;
  ElementGenerator(const ElementGenerator&) = delete;
  ElementGenerator& operator=(const ElementGenerator&) = delete;

 protected:
  // `excess_precision`: 16-bit float results of elementwise arithmetic stay in f32 (xlite/math_mode.h).
  ElementGenerator(const ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, TargetMath& math,
                   bool excess_precision = false)
      : g_(body), ctx_(context), module_(module), b_(context), math_(math), excess_precision_(excess_precision) {}

  // ---- what the target provides ------------------------------------------------------------------
  // Notes that `bad` holds for instruction `instr` (with the failure's value and a constant size) unless an
  // earlier failure is noted already, there or when the loops end; the caller goes on with a harmless value.
  virtual void flag_failure(llvm::Value* bad, ElementFailure failure, llvm::Value* value, llvm::Value* size,
                            int32_t instr) = 0;
  // The value of reduction `instr` when the target computes it per row inside the loop, else nullptr.
  virtual llvm::Value* fused_reduction_value(int32_t instr) = 0;
  // The value of `instr` at `idx` when the target kept it from an earlier loop, else nullptr.
  virtual llvm::Value* reused_value(int32_t /*instr*/, Index* /*idx*/) { return nullptr; }

  // ---- types -------------------------------------------------------------------------------------
  llvm::Type* value_type(DType d);
  llvm::Type* storage_type(DType d);
  llvm::Value* from_storage(llvm::Value* v, DType d);
  llvm::Value* to_storage(llvm::Value* v, DType d);
  // 16-bit floats are computed in f32 and, unless under excess precision, every value is rounded to its storage
  // type, like the oracle.
  llvm::Value* rounded(llvm::Value* v, DType d);
  // An elementwise op's result: rounded as above, or left in f32 under excess precision.
  llvm::Value* arithmetic_result(llvm::Value* v, DType d) { return excess_precision_ ? v : rounded(v, d); }
  // The value of `id` at `idx` where its bits become observable: compared, tested (isnan, isinf), converted,
  // or searched for an extreme's index. Under excess precision a 16-bit value is rounded to its dtype there,
  // as the store would round it, so that x == amax(x) (a max gradient's mask) and isinf hold as they do for
  // the stored values; loads and constants are rounded already.
  llvm::Value* observed(int32_t id, Index* idx);
  llvm::Value* i64c(int64_t v) { return b_.getInt64(v); }
  llvm::Value* fconst(DType d, double v) { return llvm::ConstantFP::get(value_type(d), v); }
  llvm::Value* iconst(DType d, int64_t v) {
    return llvm::ConstantInt::get(value_type(d), static_cast<uint64_t>(v), !is_unsigned(d));
  }
  llvm::Value* constant(DType d, double v);

  // ---- indices -----------------------------------------------------------------------------------
  Index* make_index(Shape shape);
  llvm::Value* linear(Index* idx);
  const std::vector<llvm::Value*>& multi(Index* idx);
  Index* with_multi(Shape shape, std::vector<llvm::Value*> m);
  // Where each layout op reads its operand (of shape in_shape) for the output element at idx
  // (element_index.cpp).
  Index* reshaped_index(Index* idx, const Shape& in_shape);
  Index* transposed_index(Index* idx, std::span<const int64_t> perm, const Shape& in_shape);
  Index* broadcast_index(Index* idx, std::span<const int64_t> dims, const Shape& in_shape);
  Index* sliced_index(Index* idx, std::span<const int64_t> start, std::span<const int64_t> stride,
                      const Shape& in_shape);
  // Reads outside the operand are clamped into it, so that the discarded value stays in bounds.
  BoundedIndex padded_index(Index* idx, std::span<const int64_t> lo, const Shape& in_shape);
  BoundedIndex concat_part_index(Index* idx, int64_t dim, int64_t base, const Shape& in_shape);

  // ---- element generators ------------------------------------------------------------------------
  llvm::Value* gen(int32_t id, Index* idx);

  llvm::Value* load(int64_t param, DType d, llvm::Value* at);

  llvm::Value* math(MathFn fn, DType d, llvm::Value* x) { return math_.call(b_, module_, fn, d, x); }
  // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that tiny results keep their precision.

  llvm::Value* unary(ir::OpId op, DType d, llvm::Value* x);

  llvm::Value* predicate(ir::OpId op, DType d, llvm::Value* x);

  llvm::Value* binary(int32_t id, ir::OpId op, DType d, llvm::Value* a, llvm::Value* c);

  llvm::Value* compare(ir::OpId op, DType d, llvm::Value* a, llvm::Value* c);

  llvm::Value* convert(llvm::Value* v, DType from, DType to);

  // A checked index value read for gather and index_select: out-of-range values are reported and
  // clamped so that nothing outside the buffer is read.
  llvm::Value* checked_index(int32_t id, llvm::Value* raw, DType index_dtype, int64_t size);

  llvm::Value* philox_block(llvm::Value* seed, llvm::Value* counter);
  llvm::Value* lane(llvm::Value* packed, llvm::Value* which);

  llvm::Value* random(const ir::Instr& instr, Index* idx);

  llvm::Value* gen_uncached(int32_t id, Index* idx);

  const ir::Graph& g_;
  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  TargetMath& math_;
  const bool excess_precision_;
  std::vector<llvm::Value*> buffers_;  // the body's parameters, then its output: set by the target
  std::map<std::pair<int32_t, Index*>, llvm::Value*> memo_;
  std::deque<Index> arena_;
};

}  // namespace xlite::backends::codegen
