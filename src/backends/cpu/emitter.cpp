// Turns a region body (a small graph whose parameters are the region's input buffers) into one LLVM
// function: a loop over output elements in which every fused producer is generated per element, so
// elementwise ops, broadcasts, layout changes, pads, concats and gathers cost no memory traffic.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <unordered_map>
#include <vector>

#include "backends/codegen/element_generator.h"
#include "backends/cpu/emitter.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/math.h"
#include "backends/cpu/math_ir.h"
#include "backends/cpu/streaming_stores.h"
#include "core/check.h"
#include "ir/op_attrs.h"

namespace xlite::backends::cpu {
namespace {
using ir::Instr;
using ir::OpClass;
using ir::OpId;
using ir::ReduceOp;

using codegen::ElementFailure;
using codegen::Index;
using codegen::is_unsigned;

// The CPU's half of a kernel: a function over the buffers and a range of output elements, the loops
// (elementwise, by rows, reductions), and failures noted in the status word (KernelStatus).
class Emitter final : public codegen::ElementGenerator {
 public:
  Emitter(const ir::Graph& body, llvm::LLVMContext& ctx, llvm::Module& module, KernelMode mode)
      : ElementGenerator(body, ctx, module, cpu_math(mode.fast_math), mode.excess_precision) {}

  void emit(const std::string& name) {
    const Instr& root = g_.instrs[g_.outputs[0]];
    auto* ptr = b_.getPtrTy();
    auto* i64 = b_.getInt64Ty();
    // The body takes each buffer as its own noalias argument; a thin entry unpacks the array.
    std::vector<llvm::Type*> params(g_.num_parameters + 1, ptr);
    params.insert(params.end(), {i64, i64, ptr});
    auto* body_type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    body_fn_ = llvm::Function::Create(body_type, llvm::Function::InternalLinkage, name + "_body", module_);
    body_fn_->addFnAttr(llvm::Attribute::AlwaysInline);
    body_fn_->addFnAttr(llvm::Attribute::NoUnwind);
    for (unsigned i = 0; i < params.size(); ++i)
      if (params[i] == ptr) body_fn_->addParamAttr(i, llvm::Attribute::NoAlias);
    buffers_.clear();
    failure_sites_.clear();
    for (int64_t i = 0; i <= g_.num_parameters; ++i) buffers_.push_back(body_fn_->getArg(i));
    output_ = buffers_.back();
    begin_ = body_fn_->getArg(g_.num_parameters + 1);
    end_ = body_fn_->getArg(g_.num_parameters + 2);
    status_ = body_fn_->getArg(g_.num_parameters + 3);

    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", body_fn_);
    b_.SetInsertPoint(entry);
    streaming_ = streams_output(root);
    if (ir::op_info(root.op).cls == OpClass::Reduce || ir::op_info(root.op).cls == OpClass::ArgReduce) {
      if (!emit_leading_reduce_loop(root)) emit_reduce_loop(root);
    } else
      emit_elementwise_loop(root);
    if (streaming_) b_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_sfence));
    report_failures();
    b_.CreateRetVoid();

    auto* entry_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64, ptr}, false);
    auto* entry_fn = llvm::Function::Create(entry_type, llvm::Function::ExternalLinkage, name, module_);
    entry_fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (streaming_) entry_fn->addFnAttr(kStreamingStoresAttribute);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry_fn));
    std::vector<llvm::Value*> args;
    for (int64_t i = 0; i <= g_.num_parameters; ++i)
      args.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, entry_fn->getArg(0), i)));
    args.insert(args.end(), {entry_fn->getArg(1), entry_fn->getArg(2), entry_fn->getArg(3)});
    b_.CreateCall(body_fn_, args);
    b_.CreateRetVoid();
  }

 private:
  // A failure is gathered where it is found without a branch: a flag (or) and the largest bad value (max),
  // both reductions the loop vectorizer knows. A branch to the status word there kept the loop scalar: a
  // cross-entropy's gradient, whose one-hot select checks each row's target in its output loop, ran at half
  // the speed of the same loop unchecked. report_failures writes the status once, when the body returns.
  void flag_failure(llvm::Value* bad, ElementFailure failure, llvm::Value* value, llvm::Value* size,
                    int32_t instr) override {
    auto* i64 = b_.getInt64Ty();
    XLITE_CHECK(llvm::isa<llvm::Constant>(size), "a failure's size is a constant of its op");
    // One site per instruction, however many loops evaluate it (a row reduction's loop and the output's, the
    // two versions of a streamed output loop): its value is the largest over all of them.
    auto found = std::find_if(failure_sites_.begin(), failure_sites_.end(),
                              [&](const FailureSite& s) { return s.instr == instr && s.failure == failure; });
    if (found == failure_sites_.end()) {
      llvm::BasicBlock& entry = body_fn_->getEntryBlock();
      llvm::IRBuilder<> at_entry(&entry, entry.begin());
      FailureSite fresh{failure, size, instr, at_entry.CreateAlloca(b_.getInt1Ty(), nullptr, "failed"),
                        at_entry.CreateAlloca(i64, nullptr, "failed_value")};
      at_entry.CreateStore(b_.getFalse(), fresh.flag);
      at_entry.CreateStore(i64c(std::numeric_limits<int64_t>::min()), fresh.value);
      failure_sites_.push_back(fresh);
      found = std::prev(failure_sites_.end());
    }
    const FailureSite& site = *found;
    b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), site.flag), bad), site.flag);
    llvm::Value* candidate = b_.CreateSelect(bad, value, i64c(std::numeric_limits<int64_t>::min()));
    b_.CreateStore(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateLoad(i64, site.value), candidate),
                   site.value);
  }

  // Notes each failure found unless the status already holds one of this or an earlier instruction
  // (KernelStatus).
  void report_failures() {
    auto* i64 = b_.getInt64Ty();
    for (const FailureSite& site : failure_sites_) {
      llvm::Function* fn = b_.GetInsertBlock()->getParent();
      auto* check = llvm::BasicBlock::Create(ctx_, "bad_value", fn);
      auto* fail = llvm::BasicBlock::Create(ctx_, "first_bad_value", fn);
      auto* cont = llvm::BasicBlock::Create(ctx_, "ok", fn);
      b_.CreateCondBr(b_.CreateLoad(b_.getInt1Ty(), site.flag), check, cont);
      b_.SetInsertPoint(check);
      llvm::Value* none_yet = b_.CreateICmpEQ(b_.CreateLoad(i64, status_), i64c(0));
      llvm::Value* later_yet =
          b_.CreateICmpSGT(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, status_, 3)), i64c(site.instr));
      b_.CreateCondBr(b_.CreateOr(none_yet, later_yet), fail, cont);
      b_.SetInsertPoint(fail);
      b_.CreateStore(i64c(static_cast<int64_t>(site.failure)), status_);
      b_.CreateStore(b_.CreateLoad(i64, site.value), b_.CreateConstGEP1_64(i64, status_, 1));
      b_.CreateStore(site.size, b_.CreateConstGEP1_64(i64, status_, 2));
      b_.CreateStore(i64c(site.instr), b_.CreateConstGEP1_64(i64, status_, 3));
      b_.CreateBr(cont);
      b_.SetInsertPoint(cont);
    }
  }

  llvm::Value* fused_reduction_value(int32_t instr) override {
    auto it = row_values_.find(instr);
    return it == row_values_.end() ? nullptr : it->second;
  }

  // ---- loops -------------------------------------------------------------------------------------
  struct Loop {
    llvm::PHINode* iv;
    llvm::BasicBlock* header;
    llvm::BasicBlock* exit;
  };
  Loop open_loop(llvm::Value* begin, llvm::Value* end, const char* name) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, std::string(name) + ".header", fn);
    auto* body = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn);
    auto* exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    iv->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, end), body, exit);
    b_.SetInsertPoint(body);
    return Loop{iv, header, exit};
  }
  // unroll = false: LLVM must not unroll the loop. The blocking loops of a sum have few iterations and
  // large bodies (a vectorised loop and its remainder, each with every fused producer): unrolled, they
  // doubled the compile time of a reduction.
  // interleave > 1: the vectoriser runs that many vectors per iteration (see emit_flat_loop).
  void close_loop(Loop& loop, bool unroll = true, int interleave = 0) {
    llvm::Value* next = b_.CreateAdd(loop.iv, i64c(1), "", true, true);
    loop.iv->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* latch = b_.CreateBr(loop.header);
    llvm::SmallVector<llvm::Metadata*, 3> hints = {nullptr};
    if (!unroll) hints.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")));
    if (interleave > 1)
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                                               llvm::ConstantAsMetadata::get(b_.getInt32(interleave))}));
    if (hints.size() > 1) {
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, hints);
      id->replaceOperandWith(0, id);
      latch->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(loop.exit);
  }

  void store_output(llvm::Value* at, llvm::Value* v, DType d) {
    llvm::Value* where = stream_base_ ? b_.CreateGEP(storage_type(d), stream_base_, b_.CreateSub(at, stream_origin_))
                                      : b_.CreateGEP(storage_type(d), output_, at);
    b_.CreateStore(to_storage(v, d), where);
  }

  // Emits the loop that writes output elements [origin + from, origin + to) by `emit_loop(from, to)`. With
  // streaming stores (streaming_stores.h), twice: where the first element's address is 64-byte aligned,
  // the stores are addressed from it, known aligned, so that the vectorized stores are aligned and may
  // stream; elsewhere plainly. Values generated inside one version do not dominate the other.
  void emit_output_loop(llvm::Value* origin, llvm::Value* from, llvm::Value* to, DType d,
                        const std::function<void(llvm::Value*, llvm::Value*)>& emit_loop) {
    if (!streaming_) return emit_loop(from, to);
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* aligned = llvm::BasicBlock::Create(ctx_, "stream", fn);
    auto* plain = llvm::BasicBlock::Create(ctx_, "plain", fn);
    auto* join = llvm::BasicBlock::Create(ctx_, "written", fn);
    llvm::Value* start = b_.CreateAdd(origin, from);
    llvm::Value* first = b_.CreateGEP(storage_type(d), output_, start);
    llvm::Value* misalignment = b_.CreateAnd(b_.CreatePtrToInt(first, b_.getInt64Ty()), i64c(kStreamLineBytes - 1));
    b_.CreateCondBr(b_.CreateICmpEQ(misalignment, i64c(0)), aligned, plain);
    const auto memo = memo_;
    b_.SetInsertPoint(aligned);
    // The base passes through an empty asm, which the optimizer cannot look through: an alignment stated on
    // `first` itself is lost once the stores' addresses fold back into offsets from the output.
    auto* opaque =
        llvm::InlineAsm::get(llvm::FunctionType::get(first->getType(), {first->getType()}, false), "", "=r,0", false);
    stream_base_ = b_.CreateCall(opaque, {first});
    b_.CreateAlignmentAssumption(module_.getDataLayout(), stream_base_, kStreamLineBytes);
    stream_origin_ = start;
    emit_loop(from, to);
    stream_base_ = stream_origin_ = nullptr;
    b_.CreateBr(join);
    memo_ = memo;
    b_.SetInsertPoint(plain);
    emit_loop(from, to);
    b_.CreateBr(join);
    memo_ = memo;
    b_.SetInsertPoint(join);
  }

  // Rows of the last dim, then the elements of a row: values that depend only on the row (broadcast
  // statistics, leading indices) are computed once per row and the inner loop vectorises.
  void emit_elementwise_loop(const Instr& root) {
    const Shape& shape = root.shape;
    if (shape.size() < 2 || shape.back() <= 1) return emit_flat_loop(root);
    const int64_t inner = shape.back();
    llvm::Value* first_row = b_.CreateSDiv(begin_, i64c(inner));
    llvm::Value* last_row = b_.CreateSDiv(b_.CreateAdd(end_, i64c(inner - 1)), i64c(inner));
    Loop rows = open_loop(first_row, last_row, "row");
    memo_.clear();
    arena_.clear();
    llvm::Value* row_start = b_.CreateMul(rows.iv, i64c(inner));
    llvm::Value* from = b_.CreateSub(begin_, row_start);
    from = b_.CreateSelect(b_.CreateICmpSLT(from, i64c(0)), i64c(0), from);
    llvm::Value* to = b_.CreateSub(end_, row_start);
    to = b_.CreateSelect(b_.CreateICmpSGT(to, i64c(inner)), i64c(inner), to);
    Index* row_index = make_index(Shape(shape.begin(), shape.end() - 1));
    row_index->linear = rows.iv;
    std::vector<llvm::Value*> lead = multi(row_index);
    row_values_.clear();
    kept_rows_.clear();
    emit_row_reductions(lead, rows.iv, lead.size(), &shape);
    if (const int64_t tile = inner_tile(root)) {
      emit_tiled_row(root, lead, row_start, from, to, tile);
    } else {
      emit_output_loop(row_start, from, to, root.dtype, [&](llvm::Value* first, llvm::Value* last) {
        Loop cols = open_loop(first, last, "col");
        Index* idx = make_index(shape);
        idx->multi = lead;
        idx->multi.push_back(cols.iv);
        idx->linear = b_.CreateAdd(row_start, cols.iv);
        // Reductions whose rows are this loop's elements (a loop over rows, one element per row).
        emit_row_reductions(idx->multi, idx->linear, shape.size(), nullptr);
        output_element_ = idx;
        store_output(idx->linear, gen(g_.outputs[0], idx), root.dtype);
        output_element_ = nullptr;
        close_loop(cols);
      });
    }
    memo_.clear();
    close_loop(rows);
  }

  // The width of the tiles in which a row's elements are run, the innermost loop over one tile: where the
  // region merges heads back into rows (a reshape of a transposed [.., H, D] into [.., H * D]), tiles of D
  // keep the heads' reads contiguous (IndexSplit). 0: the row is one loop. Not with row reductions, whose
  // loops run over whole rows.
  int64_t inner_tile(const Instr& root) const {
    const int64_t length = root.shape.back();
    int64_t tile = 0;
    for (const Instr& instr : g_.instrs) {
      if (ir::op_info(instr.op).cls == OpClass::Reduce) return 0;
      if (instr.op != OpId::reshape || instr.shape.empty()) continue;
      const Instr& heads = g_.instrs[instr.operands[0]];
      if (heads.op != OpId::transpose || heads.shape.empty()) continue;
      const int64_t width = heads.shape.back();
      if (width >= kMinTile && width < instr.shape.back() && instr.shape.back() % width == 0 && length % width == 0 &&
          length > width)
        tile = width;
    }
    return tile;
  }
  static constexpr int64_t kMinTile = 16;  // a vector of floats

  // Elements [from, to) of the row at `lead`, tile by tile.
  void emit_tiled_row(const Instr& root, const std::vector<llvm::Value*>& lead, llvm::Value* row_start,
                      llvm::Value* from, llvm::Value* to, int64_t tile) {
    Loop tiles =
        open_loop(b_.CreateSDiv(from, i64c(tile)), b_.CreateSDiv(b_.CreateAdd(to, i64c(tile - 1)), i64c(tile)), "tile");
    llvm::Value* tile_start = b_.CreateMul(tiles.iv, i64c(tile));
    llvm::Value* first = b_.CreateSub(from, tile_start);
    first = b_.CreateSelect(b_.CreateICmpSLT(first, i64c(0)), i64c(0), first);
    llvm::Value* last = b_.CreateSub(to, tile_start);
    last = b_.CreateSelect(b_.CreateICmpSGT(last, i64c(tile)), i64c(tile), last);
    Loop cols = open_loop(first, last, "col");
    llvm::Value* col = b_.CreateAdd(tile_start, cols.iv);
    Index* idx = make_index(root.shape);
    idx->multi = lead;
    idx->multi.push_back(col);
    idx->linear = b_.CreateAdd(row_start, col);
    idx->split = codegen::IndexSplit{static_cast<int64_t>(root.shape.size()) - 1, tiles.iv, cols.iv, tile};
    store_output(idx->linear, gen(g_.outputs[0], idx), root.dtype);
    close_loop(cols);
    memo_.clear();
    close_loop(tiles);
  }

  // The row reductions fused into this loop (fusion checked that only this row reaches them) whose rows
  // have `rank` dims, each computed once for the row whose multi-index starts `lead` and whose linear index
  // is `row`, in dependency order. `row_elements`: the shape of a loop over the row's elements, which may
  // read kept elements back.
  void emit_row_reductions(const std::vector<llvm::Value*>& lead, llvm::Value* row, size_t rank,
                           const Shape* row_elements) {
    for (size_t k = 0; k < g_.instrs.size(); ++k) {
      if (!row_reduction_of_rank(k, rank)) continue;
      const Instr& r = g_.instrs[k];
      const Shape& in_shape = g_.instrs[r.operands[0]].shape;
      const int64_t length = in_shape.back();
      if (row_elements && worth_keeping(r, *row_elements)) {
        keeping_ = stack_row(length);
        kept_rows_.push_back({r.operands[0], keeping_});
      }
      row_values_[static_cast<int32_t>(k)] = emit_reduction(r, length, true, [&](llvm::Value* j) {
        std::vector<llvm::Value*> m(lead.begin(), lead.begin() + static_cast<std::ptrdiff_t>(rank));
        m.push_back(j);
        Index* in = with_multi(in_shape, std::move(m));
        in->linear = b_.CreateAdd(b_.CreateMul(row, i64c(length)), j);
        return in;
      });
      keeping_ = nullptr;
    }
  }

  // Whether instruction k is a fused row reduction (not the root) whose rows have `rank` dims.
  bool row_reduction_of_rank(size_t k, size_t rank) const {
    const Instr& r = g_.instrs[k];
    return static_cast<int32_t>(k) != g_.outputs[0] && ir::op_info(r.op).cls == OpClass::Reduce &&
           g_.instrs[r.operands[0]].shape.size() == rank + 1;
  }

  bool has_row_reductions(size_t rank) const {
    for (size_t k = 0; k < g_.instrs.size(); ++k)
      if (row_reduction_of_rank(k, rank)) return true;
    return false;
  }

  // A row sum of an element that costs a transcendental (softmax's exp(x - max)) which the output reads
  // again at the same place: the sum's loop keeps each value in a row on the stack, and the output's loop
  // reads it back instead of computing it a second time. Rows up to 16 KiB, so it stays in L1.
  static constexpr int64_t kKeptRowElements = 4096;
  bool worth_keeping(const Instr& reduction, const Shape& output_shape) const {
    if (reduction.op != OpId::reduce_sum) return false;
    const Instr& element = g_.instrs[reduction.operands[0]];
    if (element.dtype != DType::f32 || element.shape != output_shape || output_shape.back() > kKeptRowElements)
      return false;
    return ir::op_info(element.op).has(ir::kExpensive);
  }

  llvm::AllocaInst* stack_row(int64_t length) {
    llvm::BasicBlock& entry = body_fn_->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* row = at_entry.CreateAlloca(b_.getFloatTy(), i64c(length), "kept_row");
    row->setAlignment(llvm::Align(64));
    return row;
  }

  llvm::Value* reused_value(int32_t instr, Index* idx) override {
    if (idx != output_element_) return nullptr;
    for (const KeptRow& kept : kept_rows_)
      if (kept.instr == instr)
        return b_.CreateLoad(b_.getFloatTy(), b_.CreateGEP(b_.getFloatTy(), kept.row, idx->multi.back()));
    return nullptr;
  }

  void emit_flat_loop(const Instr& root) {
    emit_output_loop(i64c(0), begin_, end_, root.dtype, [&](llvm::Value* first, llvm::Value* last) {
      Loop loop = open_loop(first, last, "i");
      memo_.clear();
      arena_.clear();
      Index* idx = make_index(root.shape);
      idx->linear = loop.iv;
      // A loop over rows, one element per row (a loss per row): the row's reductions come first. Its shape
      // is the rows', or theirs with a trailing 1.
      row_values_.clear();
      const Shape& shape = root.shape;
      if (has_row_reductions(shape.size())) emit_row_reductions(multi(idx), loop.iv, shape.size(), nullptr);
      if (!shape.empty() && shape.back() == 1 && has_row_reductions(shape.size() - 1))
        emit_row_reductions(multi(idx), loop.iv, shape.size() - 1, nullptr);
      store_output(loop.iv, gen(g_.outputs[0], idx), root.dtype);
      // Two vectors per iteration. A fused chain of transcendentals is one long dependency chain per
      // vector, and the vectoriser runs a large body once per iteration: the out-of-order window then held
      // too little independent work. tanh, sigmoid and gelu fused on 16M f32 (2 threads, Zen 4): 13.1 ms
      // with one vector, 11.7 with two; four gained nothing more (llvm-mca agrees).
      close_loop(loop, true, 2);
    });
  }

  // A sum or product over leading dims (a column sum, such as a bias gradient): rows outer and the kept
  // elements inner, so that the inner loop reads contiguous memory and vectorises (the general loop
  // below would stride down each column). Floating sums accumulate in f32 partials and f64 totals, whatever
  // the output's width, so 16-bit float sums take this path too (a bf16 bias gradient of [2048, 2048] summed
  // down its columns one at a time took 11 ms, 13x the f32 one); 16-bit products and integers accumulate in
  // the output, so only where it holds the accumulator type exactly.
  static constexpr int64_t kNarrowColumns = 8;
  bool emit_leading_reduce_loop(const Instr& root) {
    if (root.op != OpId::reduce_sum && root.op != OpId::reduce_prod) return false;
    const int32_t input = root.operands[0];
    const Shape& in_shape = g_.instrs[input].shape;
    const DType dtype = root.dtype;
    if (g_.instrs[input].dtype != dtype) return false;
    const bool half_sum = is_16_bit_float(dtype) && root.op == OpId::reduce_sum;
    if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::i32 && dtype != DType::i64 && !half_sum)
      return false;
    const std::vector<bool> reduced = reduced_dims(root);
    const auto leading = static_cast<int64_t>(std::find(reduced.begin(), reduced.end(), false) - reduced.begin());
    // Some dims must be kept (a full reduction vectorises better in the general loop), all after the reduced ones.
    if (leading == 0 || leading == static_cast<int64_t>(reduced.size()) ||
        std::find(reduced.begin() + leading, reduced.end(), true) != reduced.end())
      return false;
    const int64_t kept = numel(root.shape);
    if (kept == 0) return false;
    // Few columns make the inner loop too short to pay for itself: each output then sums its own strided
    // column, which the vectoriser reads as interleaved loads. Measured on 16M f32 (2 threads): 2 columns
    // 48.8 ms here against 4.2 ms strided, 8 columns 12.9 against 9.4, 16 columns 8.0 against 17.4.
    if (kept <= kNarrowColumns) return false;
    const int64_t rows = numel(in_shape) / kept;
    // The input element at (row, column), generated inside the innermost loop: its multi-index is split
    // from the row and the column apart, so the row's part is invariant in the column loop.
    auto element = [&](llvm::Value* row, llvm::Value* column) {
      memo_.clear();
      arena_.clear();
      Index* in_index = make_index(in_shape);
      in_index->linear = b_.CreateAdd(b_.CreateMul(row, i64c(kept)), column);
      Index* reduced_index = make_index(Shape(in_shape.begin(), in_shape.begin() + leading));
      reduced_index->linear = row;
      Index* kept_index = make_index(Shape(in_shape.begin() + leading, in_shape.end()));
      kept_index->linear = column;
      in_index->multi = multi(reduced_index);
      const std::vector<llvm::Value*>& kept_multi = multi(kept_index);
      in_index->multi.insert(in_index->multi.end(), kept_multi.begin(), kept_multi.end());
      return gen(input, in_index);
    };
    if (is_floating(dtype) && root.op == OpId::reduce_sum && rows > 0) {
      emit_column_sums(dtype, rows, element);
      return true;
    }
    // Integers are exact; a product's roundings are each relative to the product, and nothing small is
    // absorbed as in a long sum; with no rows the result is the initial value. Accumulated in the output.
    Loop first = open_loop(begin_, end_, "o0");
    store_output(first.iv, constant(dtype, root.op == OpId::reduce_sum ? 0 : 1), dtype);
    close_loop(first);
    Loop row = open_loop(i64c(0), i64c(rows), "r");
    Loop column = open_loop(begin_, end_, "o");
    llvm::Value* v = element(row.iv, column.iv);
    llvm::Value* at = b_.CreateGEP(storage_type(dtype), output_, column.iv);
    llvm::Value* acc = b_.CreateLoad(storage_type(dtype), at);
    const bool fp = is_floating(dtype);
    llvm::Value* next = root.op == OpId::reduce_sum ? (fp ? b_.CreateFAdd(acc, v) : b_.CreateAdd(acc, v))
                                                    : (fp ? b_.CreateFMul(acc, v) : b_.CreateMul(acc, v));
    b_.CreateStore(next, at);
    close_loop(column);
    close_loop(row);
    return true;
  }

  // Floating column sums (rows > 0), blocked like emit_float_sum: each column adds kSumChain rows into
  // a float partial, then the partial into a double total. Partials and totals live in stack tiles of
  // kColumnTile columns (each tile reads every row's kColumnTile contiguous elements), so the inner loop
  // still runs along contiguous columns. Without the blocks a float column of 2^25 ones summed to 2^24.
  static constexpr int64_t kColumnTile = 1024;
  void emit_column_sums(DType dtype, int64_t rows,
                        const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& element) {
    llvm::Type* acc_type = value_type(dtype);
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::BasicBlock& entry = body_fn_->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* partials = at_entry.CreateAlloca(acc_type, i64c(kColumnTile), "partials");
    llvm::AllocaInst* totals = at_entry.CreateAlloca(f64, i64c(kColumnTile), "totals");
    partials->setAlignment(llvm::Align(64));
    totals->setAlignment(llvm::Align(64));
    auto min = [&](llvm::Value* a, llvm::Value* c) { return b_.CreateSelect(b_.CreateICmpSLT(a, c), a, c); };

    llvm::Value* tile_count =
        b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(end_, begin_), i64c(kColumnTile - 1)), i64c(kColumnTile));
    Loop tile = open_loop(i64c(0), tile_count, "tile");
    llvm::Value* first = b_.CreateAdd(begin_, b_.CreateMul(tile.iv, i64c(kColumnTile)));
    llvm::Value* width = min(b_.CreateSub(end_, first), i64c(kColumnTile));
    // Zero bits are 0.0 in both types.
    auto clear = [&](llvm::AllocaInst* buffer, llvm::Type* type) {
      b_.CreateMemSet(buffer, b_.getInt8(0),
                      b_.CreateMul(width, i64c(static_cast<int64_t>(type->getPrimitiveSizeInBits() / 8))),
                      llvm::Align(64));
    };
    clear(partials, acc_type);
    clear(totals, f64);
    Loop block = open_loop(i64c(0), i64c((rows + kSumChain - 1) / kSumChain), "rows");
    llvm::Value* from = b_.CreateMul(block.iv, i64c(kSumChain));
    Loop row = open_loop(from, min(b_.CreateAdd(from, i64c(kSumChain)), i64c(rows)), "r");
    Loop column = open_loop(i64c(0), width, "o");
    llvm::Value* v = element(row.iv, b_.CreateAdd(first, column.iv));
    llvm::Value* partial = b_.CreateGEP(acc_type, partials, column.iv);
    b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(acc_type, partial), v), partial);
    close_loop(column);
    close_loop(row, false);
    // Each flush also stores the total so far: the last one leaves the result, and no separate loop
    // (another vectorised loop to compile) writes the output.
    Loop flush = open_loop(i64c(0), width, "flush");
    llvm::Value* t = b_.CreateGEP(f64, totals, flush.iv);
    llvm::Value* p = b_.CreateLoad(acc_type, b_.CreateGEP(acc_type, partials, flush.iv));
    llvm::Value* total = b_.CreateFAdd(b_.CreateLoad(f64, t), b_.CreateFPExt(p, f64));
    b_.CreateStore(total, t);
    store_output(b_.CreateAdd(first, flush.iv), b_.CreateFPTrunc(total, acc_type), dtype);
    close_loop(flush);
    clear(partials, acc_type);
    close_loop(block, false);
    close_loop(tile);
  }

  void emit_reduce_loop(const Instr& root) {
    const int32_t input = root.operands[0];
    const Shape& in_shape = g_.instrs[input].shape;
    std::vector<bool> reduced = reduced_dims(root);
    Shape kept_shape, reduced_shape;
    for (size_t d = 0; d < in_shape.size(); ++d) (reduced[d] ? reduced_shape : kept_shape).push_back(in_shape[d]);
    const int64_t count = numel(reduced_shape);
    // Reducing trailing dims reads a contiguous run per output: the inner loop indexes it linearly.
    bool trailing = true;
    for (size_t d = 0; d < in_shape.size(); ++d)
      if (reduced[d] && d < kept_shape.size()) trailing = false;

    Loop outer = open_loop(begin_, end_, "o");
    memo_.clear();
    arena_.clear();
    Index* kept_index = make_index(kept_shape);
    kept_index->linear = outer.iv;
    const std::vector<llvm::Value*> kept = multi(kept_index);
    llvm::Value* result = emit_reduction(root, count, trailing, [&](llvm::Value* r) {
      Index* in_index = make_index(in_shape);
      if (trailing) {
        in_index->linear = b_.CreateAdd(b_.CreateMul(outer.iv, i64c(count)), r);
        if (reduced_shape.size() == 1) {
          // The multi-index too: producers that broadcast per-row values then see a loop-invariant row.
          in_index->multi = kept;
          in_index->multi.push_back(r);
        }
      } else {
        Index* r_index = make_index(reduced_shape);
        r_index->linear = r;
        const std::vector<llvm::Value*> rm = multi(r_index);
        std::vector<llvm::Value*> m(in_shape.size());
        size_t k = 0, j = 0;
        for (size_t d = 0; d < in_shape.size(); ++d) m[d] = reduced[d] ? rm[j++] : kept[k++];
        in_index->multi = m;
      }
      return in_index;
    });
    store_output(outer.iv, result, ir::op_info(root.op).cls == OpClass::ArgReduce ? DType::i64 : root.dtype);
    close_loop(outer);
  }

  std::vector<bool> reduced_dims(const Instr& root) {
    const bool arg = ir::op_info(root.op).cls == OpClass::ArgReduce;
    std::vector<int64_t> dims;
    if (arg) {
      dims = {ir::ArgReduceAttrs::of(root.attrs).dim};
    } else {
      const auto reduced = ir::ReduceAttrs::of(root.attrs).dims;
      dims.assign(reduced.begin(), reduced.end());
    }
    std::vector<bool> reduced(g_.instrs[root.operands[0]].shape.size(), false);
    for (int64_t d : dims) reduced[d] = true;
    return reduced;
  }

  // Floating sums are blocked so that rounding errors do not pile up with the count: a float running
  // sum of 2^25 ones stops at 2^24, and one of 10^7 copies of 3.7182817 was 7e-4 off. A block of
  // kSumBlock contiguous elements is summed in one reassociated loop, which the vectoriser splits over
  // its lanes (8 floats x 4 chains here), so no float chain is longer than kSumBlock / 32 = 16 additions;
  // each block's sum then goes into a double total. With u = 2^-24 the rounding error is then at most
  // ~(16 + 5) u * sum|x| (the chains, then the tree across lanes) plus ~count * 2^-53, whatever the
  // count. Strided reads (a column, a middle dim) have no lanes to split over: their chains are kSumChain
  // long, ~31 u. Blocks of 512 keep 10^7 equal values within one ulp of their sum; the block's
  // horizontal add and one double addition cost little next to its 512 loads, and a column's flush of
  // its partials every kSumChain rows stays ~10% of the loop's loads and stores. The order of the
  // additions depends only on the shape, so every thread count gives the same bits.
  static constexpr int64_t kSumBlock = 512;
  static constexpr int64_t kSumChain = 32;

  llvm::Value* emit_float_sum(int32_t input, llvm::Type* acc_type, int64_t count, int64_t block,
                              const std::function<Index*(llvm::Value*)>& input_index) {
    if (count <= block) return emit_sum_loop(input, acc_type, i64c(0), i64c(count), input_index);
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    Loop blocks = open_loop(i64c(0), i64c((count + block - 1) / block), "block");
    llvm::PHINode* total = llvm::PHINode::Create(f64, 2, "total", blocks.header->getFirstNonPHI());
    total->addIncoming(llvm::ConstantFP::get(f64, 0.0), before);
    llvm::Value* from = b_.CreateMul(blocks.iv, i64c(block));
    llvm::Value* to = b_.CreateSelect(b_.CreateICmpSLT(b_.CreateSub(i64c(count), from), i64c(block)), i64c(count),
                                      b_.CreateAdd(from, i64c(block)));
    llvm::Value* partial = emit_sum_loop(input, acc_type, from, to, input_index);
    total->addIncoming(b_.CreateFAdd(total, b_.CreateFPExt(partial, f64)), b_.GetInsertBlock());
    close_loop(blocks, false);
    return b_.CreateFPTrunc(total, acc_type);
  }

  // The sum of elements [from, to) of `input`, in acc_type, from a loop at the insertion point.
  llvm::Value* emit_sum_loop(int32_t input, llvm::Type* acc_type, llvm::Value* from, llvm::Value* to,
                             const std::function<Index*(llvm::Value*)>& input_index) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    Loop loop = open_loop(from, to, "r");
    llvm::PHINode* acc = llvm::PHINode::Create(acc_type, 2, "acc", loop.header->getFirstNonPHI());
    acc->addIncoming(llvm::ConstantFP::get(acc_type, 0.0), before);
    auto saved_memo = memo_;
    llvm::Value* v = gen(input, input_index(loop.iv));
    if (keeping_) b_.CreateStore(v, b_.CreateGEP(b_.getFloatTy(), keeping_, loop.iv));
    llvm::Value* next;
    {
      // Reassociation lets the loop vectoriser split the accumulator across lanes.
      llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
      llvm::FastMathFlags reassoc;
      reassoc.setAllowReassoc();
      b_.setFastMathFlags(reassoc);
      next = b_.CreateFAdd(acc, v);
    }
    acc->addIncoming(next, b_.GetInsertBlock());
    close_loop(loop);
    memo_ = saved_memo;
    return acc;
  }

  // Reduces `count` elements of the root's input, the r-th read at input_index(r), in a loop at the
  // insertion point. Returns the value to store: the result rounded to the root's dtype, or for an
  // arg reduction the index. Values generated inside the loop are forgotten after it.
  // `contiguous`: element r + 1 follows element r in the input's last dim (the loop can vectorise).
  llvm::Value* emit_reduction(const Instr& root, int64_t count, bool contiguous,
                              const std::function<Index*(llvm::Value*)>& input_index) {
    const int32_t input = root.operands[0];
    const DType in_dtype = g_.instrs[input].dtype;
    const bool arg = ir::op_info(root.op).cls == OpClass::ArgReduce;
    llvm::Type* acc_type = value_type(is_floating(in_dtype) && in_dtype != DType::f64 ? DType::f32 : in_dtype);
    const bool fp = is_floating(in_dtype);
    if (fp && root.op == OpId::reduce_sum)
      return rounded(emit_float_sum(input, acc_type, count, contiguous ? kSumBlock : kSumChain, input_index),
                     root.dtype);
    llvm::Value* init =
        fp ? llvm::ConstantFP::get(acc_type, 0.0) : llvm::ConstantInt::get(acc_type, 0);  // argmax, argmin
    if (!arg) switch (ir::reduce_op(root.op)) {
        case ReduceOp::reduce_sum:
          init = fp ? llvm::ConstantFP::get(acc_type, 0.0) : llvm::ConstantInt::get(acc_type, 0);
          break;
        case ReduceOp::reduce_prod:
          init = fp ? llvm::ConstantFP::get(acc_type, 1.0) : llvm::ConstantInt::get(acc_type, 1);
          break;
        case ReduceOp::reduce_max:
          init = fp ? llvm::ConstantFP::getInfinity(acc_type, true)
                    : (is_unsigned(in_dtype) ? llvm::ConstantInt::get(acc_type, 0)
                                             : llvm::ConstantInt::get(acc_type, llvm::APInt::getSignedMinValue(
                                                                                    acc_type->getIntegerBitWidth())));
          break;
        case ReduceOp::reduce_min:
          init = fp ? llvm::ConstantFP::getInfinity(acc_type, false)
                    : (is_unsigned(in_dtype)
                           ? llvm::ConstantInt::get(acc_type, llvm::APInt::getMaxValue(acc_type->getIntegerBitWidth()))
                           : llvm::ConstantInt::get(acc_type,
                                                    llvm::APInt::getSignedMaxValue(acc_type->getIntegerBitWidth())));
          break;
      }

    llvm::BasicBlock* before_inner = b_.GetInsertBlock();
    Loop inner = open_loop(i64c(0), i64c(count), "r");
    llvm::PHINode* acc = llvm::PHINode::Create(acc_type, 2, "acc", inner.header->getFirstNonPHI());
    acc->addIncoming(init, before_inner);
    llvm::PHINode* nan_seen = nullptr;
    if (fp && (root.op == OpId::reduce_max || root.op == OpId::reduce_min)) {
      llvm::Type* bits_type = b_.getIntNTy(acc_type->getPrimitiveSizeInBits());
      nan_seen = llvm::PHINode::Create(bits_type, 2, "largest_bits", inner.header->getFirstNonPHI());
      nan_seen->addIncoming(llvm::ConstantInt::get(bits_type, 0), before_inner);
    }
    llvm::PHINode* best_index = nullptr;
    if (arg) {
      best_index = llvm::PHINode::Create(b_.getInt64Ty(), 2, "best", inner.header->getFirstNonPHI());
      best_index->addIncoming(i64c(0), before_inner);
    }
    auto saved_memo = memo_;
    // An extreme's index compares the values as stored (observed), so that ties break as the reference's do.
    llvm::Value* v = arg ? observed(input, input_index(inner.iv)) : gen(input, input_index(inner.iv));
    llvm::Value* next = nullptr;
    llvm::FastMathFlags reassoc;
    reassoc.setAllowReassoc();
    if (!arg) switch (ir::reduce_op(root.op)) {
        case ReduceOp::reduce_sum:  // integers here: floating sums are emit_float_sum's
        case ReduceOp::reduce_prod: {
          // Reassociation lets the loop vectoriser split the accumulator across lanes.
          llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
          b_.setFastMathFlags(reassoc);
          if (root.op == OpId::reduce_sum)
            next = b_.CreateAdd(acc, v);
          else
            next = fp ? b_.CreateFMul(acc, v) : b_.CreateMul(acc, v);
          break;
        }
        case ReduceOp::reduce_max:
        case ReduceOp::reduce_min: {
          const bool is_max = root.op == OpId::reduce_max;
          if (fp) {
            // maxnum/minnum reductions vectorise; they skip NaN, so NaN is tracked by a separate
            // or-reduction and applied after the loop (NaN propagates, like the oracle).
            llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
            llvm::FastMathFlags no_nans;
            no_nans.setNoNaNs();
            no_nans.setNoSignedZeros();
            b_.setFastMathFlags(no_nans);
            next = b_.CreateBinaryIntrinsic(is_max ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, acc, v);
            b_.clearFastMathFlags();
            // The largest magnitude bit pattern, an integer max that vectorises well: above the bits of
            // infinity means a NaN was seen.
            llvm::Type* bits_type = b_.getIntNTy(acc_type->getPrimitiveSizeInBits());
            llvm::Value* magnitude = b_.CreateAnd(b_.CreateBitCast(v, bits_type),
                                                  llvm::APInt::getSignedMaxValue(bits_type->getIntegerBitWidth()));
            nan_seen->addIncoming(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, nan_seen, magnitude),
                                  b_.GetInsertBlock());
          } else {
            auto id = is_max ? (is_unsigned(in_dtype) ? llvm::Intrinsic::umax : llvm::Intrinsic::smax)
                             : (is_unsigned(in_dtype) ? llvm::Intrinsic::umin : llvm::Intrinsic::smin);
            next = b_.CreateBinaryIntrinsic(id, acc, v);
          }
          break;
        }
      }
    if (arg) {  // the first extreme value; NaN counts as extreme
      llvm::Value* first = b_.CreateICmpEQ(inner.iv, i64c(0));
      llvm::Value* better;
      bool want_max = root.op == OpId::argmax;
      if (fp) {
        llvm::Value* strictly = want_max ? b_.CreateFCmpOGT(v, acc) : b_.CreateFCmpOLT(v, acc);
        better = b_.CreateAnd(b_.CreateFCmpORD(acc, acc), b_.CreateOr(b_.CreateFCmpUNO(v, v), strictly));
      } else {
        bool u = is_unsigned(in_dtype);
        better = want_max ? (u ? b_.CreateICmpUGT(v, acc) : b_.CreateICmpSGT(v, acc))
                          : (u ? b_.CreateICmpULT(v, acc) : b_.CreateICmpSLT(v, acc));
      }
      llvm::Value* take = b_.CreateOr(first, better);
      next = b_.CreateSelect(take, v, acc);
      best_index->addIncoming(b_.CreateSelect(take, inner.iv, best_index), b_.GetInsertBlock());
    }
    acc->addIncoming(next, b_.GetInsertBlock());
    close_loop(inner);
    memo_ = saved_memo;
    if (arg) return best_index;
    llvm::Value* result = acc;
    if (nan_seen) {
      llvm::Value* infinity_bits = b_.CreateBitCast(llvm::ConstantFP::getInfinity(acc_type), nan_seen->getType());
      result = b_.CreateSelect(b_.CreateICmpUGT(nan_seen, infinity_bits), llvm::ConstantFP::getNaN(acc_type), acc);
    }
    return rounded(result, root.dtype);
  }

  llvm::Function* body_fn_ = nullptr;
  llvm::Value* output_ = nullptr;
  llvm::Value* begin_ = nullptr;
  llvm::Value* end_ = nullptr;
  llvm::Value* status_ = nullptr;
  struct FailureSite {
    ElementFailure failure;
    llvm::Value* size;
    int32_t instr;
    llvm::AllocaInst* flag;   // i1: a bad value was seen
    llvm::AllocaInst* value;  // i64: the largest bad value seen
  };
  std::vector<FailureSite> failure_sites_;
  bool streaming_ = false;                // the output's stores stream (streaming_stores.h)
  llvm::Value* stream_base_ = nullptr;    // in the aligned version of the output loop: its first element
  llvm::Value* stream_origin_ = nullptr;  // ... and that element's index
  std::unordered_map<int32_t, llvm::Value*> row_values_;  // row reductions of the current row
  struct KeptRow {
    int32_t instr;
    llvm::AllocaInst* row;
  };
  std::vector<KeptRow> kept_rows_;       // elements of the current row that a row sum kept (worth_keeping)
  llvm::AllocaInst* keeping_ = nullptr;  // while a row sum is emitted: where it keeps its elements
  Index* output_element_ = nullptr;      // while the output's loop is emitted: the element it computes
};

}  // namespace

void emit_kernel(const ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, const std::string& name,
                 KernelMode mode) {
  Emitter(body, context, module, mode).emit(name);
  // After emission: the element code's helper functions are inlined into the entry, whose attributes count.
  if (mode.fast_math)
    for (llvm::Function& function : module)
      if (!function.isDeclaration()) function.addFnAttr(math::kReciprocalEstimates[0], math::kReciprocalEstimates[1]);
}

}  // namespace xlite::backends::cpu
