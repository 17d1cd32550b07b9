// Turns a region body (a small graph whose parameters are the region's input buffers) into one LLVM
// function: a loop over output elements in which every fused producer is generated per element, so
// elementwise ops, broadcasts, layout changes, pads, concats and gathers cost no memory traffic.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <unordered_map>

#include "backends/cpu/emitter.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/math.h"
#include "core/check.h"
#include "xlite/error.h"

extern "C" int64_t xlite_cpu_ipow(int64_t base, int64_t exponent) {
  if (exponent < 0) return base == 1 ? 1 : exponent % 2 == 0 ? 1 : -1;  // base is +-1 (the kernel checked)
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return static_cast<int64_t>(result);
}

namespace xlite::backends::cpu {
namespace {
using ir::AttrKey;
using ir::Instr;
using ir::OpClass;
using ir::OpId;
using ir::BinaryOp;
using ir::CompareOp;
using ir::PredicateOp;
using ir::ReduceOp;
using ir::UnaryFloatOp;
using ir::UnaryOp;

bool is_unsigned(DType d) { return d == DType::u8 || d == DType::bool_; }

// An element position: a linear index, a multi-index, or both, computed on demand.
struct Index {
  Shape shape;
  llvm::Value* linear = nullptr;
  std::vector<llvm::Value*> multi;
};

class Emitter {
 public:
  Emitter(const ir::Graph& body, llvm::LLVMContext& ctx, llvm::Module& module)
      : g_(body), ctx_(ctx), module_(module), b_(ctx) {}

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
    for (int64_t i = 0; i <= g_.num_parameters; ++i) buffers_.push_back(body_fn_->getArg(i));
    output_ = buffers_.back();
    begin_ = body_fn_->getArg(g_.num_parameters + 1);
    end_ = body_fn_->getArg(g_.num_parameters + 2);
    status_ = body_fn_->getArg(g_.num_parameters + 3);

    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", body_fn_);
    b_.SetInsertPoint(entry);
    if (ir::op_info(root.op).cls == OpClass::Reduce || ir::op_info(root.op).cls == OpClass::ArgReduce) {
      if (!emit_leading_reduce_loop(root)) emit_reduce_loop(root);
    } else
      emit_elementwise_loop(root);
    b_.CreateRetVoid();

    auto* entry_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64, ptr}, false);
    auto* entry_fn = llvm::Function::Create(entry_type, llvm::Function::ExternalLinkage, name, module_);
    entry_fn->addFnAttr(llvm::Attribute::NoUnwind);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry_fn));
    std::vector<llvm::Value*> args;
    for (int64_t i = 0; i <= g_.num_parameters; ++i)
      args.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, entry_fn->getArg(0), i)));
    args.insert(args.end(), {entry_fn->getArg(1), entry_fn->getArg(2), entry_fn->getArg(3)});
    b_.CreateCall(body_fn_, args);
    b_.CreateRetVoid();
  }

 private:
  // ---- types -------------------------------------------------------------------------------------
  llvm::Type* value_type(DType d) {
    switch (d) {
      case DType::f32: case DType::f16: case DType::bf16: return b_.getFloatTy();
      case DType::f64: return b_.getDoubleTy();
      case DType::i32: return b_.getInt32Ty();
      case DType::i64: return b_.getInt64Ty();
      case DType::u8: return b_.getInt8Ty();
      case DType::bool_: return b_.getInt1Ty();
    }
    return nullptr;
  }
  llvm::Type* storage_type(DType d) {
    switch (d) {
      case DType::f16: return b_.getHalfTy();
      case DType::bf16: return b_.getInt16Ty();
      case DType::bool_: return b_.getInt8Ty();
      default: return value_type(d);
    }
  }
  llvm::Value* from_storage(llvm::Value* v, DType d) {
    switch (d) {
      case DType::f16: return b_.CreateFPExt(v, b_.getFloatTy());
      case DType::bf16: return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
      case DType::bool_: return b_.CreateICmpNE(v, b_.getInt8(0));
      default: return v;
    }
  }
  llvm::Value* to_storage(llvm::Value* v, DType d) {
    switch (d) {
      case DType::f16: return b_.CreateFPTrunc(v, b_.getHalfTy());
      case DType::bf16: {
        // Round to nearest even on the bits; NaN stays a quiet NaN.
        llvm::Value* u = b_.CreateBitCast(v, b_.getInt32Ty());
        llvm::Value* rounded = b_.CreateAdd(u, b_.CreateAdd(b_.getInt32(0x7fff), b_.CreateAnd(b_.CreateLShr(u, 16), b_.getInt32(1))));
        llvm::Value* nan = b_.CreateOr(b_.CreateLShr(u, 16), b_.getInt32(0x40));
        llvm::Value* bits = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, b_.CreateLShr(rounded, 16));
        return b_.CreateTrunc(bits, b_.getInt16Ty());
      }
      case DType::bool_: return b_.CreateZExt(v, b_.getInt8Ty());
      default: return v;
    }
  }
  // 16-bit floats are computed in f32 but every value is rounded to its storage type, like the oracle.
  llvm::Value* rounded(llvm::Value* v, DType d) {
    return d == DType::f16 || d == DType::bf16 ? from_storage(to_storage(v, d), d) : v;
  }
  llvm::Value* i64c(int64_t v) { return b_.getInt64(v); }
  llvm::Value* fconst(DType d, double v) { return llvm::ConstantFP::get(value_type(d), v); }
  llvm::Value* iconst(DType d, int64_t v) { return llvm::ConstantInt::get(value_type(d), static_cast<uint64_t>(v), !is_unsigned(d)); }
  llvm::Value* constant(DType d, double v) {
    return is_floating(d) ? fconst(d, v) : d == DType::bool_ ? b_.getInt1(v != 0) : iconst(d, static_cast<int64_t>(v));
  }

  // ---- indices -----------------------------------------------------------------------------------
  Index* make_index(Shape shape) {
    arena_.push_back(Index{std::move(shape), nullptr, {}});
    return &arena_.back();
  }
  llvm::Value* linear(Index* idx) {
    if (idx->linear) return idx->linear;
    llvm::Value* l = i64c(0);
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(idx->shape.size()) - 1; d >= 0; --d) {
      if (idx->shape[d] != 1) l = b_.CreateAdd(l, b_.CreateMul(idx->multi[d], i64c(stride)));
      stride *= idx->shape[d];
    }
    return idx->linear = l;
  }
  const std::vector<llvm::Value*>& multi(Index* idx) {
    if (!idx->multi.empty() || idx->shape.empty()) return idx->multi;
    idx->multi.resize(idx->shape.size());
    llvm::Value* rest = idx->linear;
    for (int64_t d = static_cast<int64_t>(idx->shape.size()) - 1; d >= 0; --d) {
      int64_t size = idx->shape[d];
      if (size == 1) {
        idx->multi[d] = i64c(0);
      } else if (d == 0) {
        idx->multi[d] = rest;
      } else {
        idx->multi[d] = b_.CreateURem(rest, i64c(size));
        rest = b_.CreateUDiv(rest, i64c(size));
      }
    }
    return idx->multi;
  }
  Index* with_multi(Shape shape, std::vector<llvm::Value*> m) {
    Index* idx = make_index(std::move(shape));
    idx->multi = std::move(m);
    return idx;
  }

  // ---- element generators ------------------------------------------------------------------------
  llvm::Value* gen(int32_t id, Index* idx) {
    auto key = std::make_pair(id, idx);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    llvm::Value* v = gen_uncached(id, idx);
    memo_[key] = v;
    return v;
  }

  llvm::Value* load(int64_t param, DType d, llvm::Value* at) {
    llvm::Value* p = b_.CreateGEP(storage_type(d), buffers_[param], at);
    return from_storage(b_.CreateLoad(storage_type(d), p), d);
  }

  llvm::Value* call_libm(const char* name32, const char* name64, DType d, std::vector<llvm::Value*> args) {
    bool wide = d == DType::f64;
    llvm::Type* t = value_type(d);
    std::vector<llvm::Type*> types(args.size(), t);
    auto callee = module_.getOrInsertFunction(wide ? name64 : name32, llvm::FunctionType::get(t, types, false));
    auto* call = b_.CreateCall(callee, args);
    call->setDoesNotThrow();
    return call;
  }

  llvm::Value* exp_of(DType d, llvm::Value* x) { return d == DType::f64 ? call_libm("expf", "exp", d, {x}) : math::exp_f32(b_, x); }
  llvm::Value* erf_of(DType d, llvm::Value* x) { return d == DType::f64 ? call_libm("erff", "erf", d, {x}) : math::erf_f32(b_, x); }
  llvm::Value* tanh_of(DType d, llvm::Value* x) { return d == DType::f64 ? call_libm("tanhf", "tanh", d, {x}) : math::tanh_f32(b_, x); }
  // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that tiny results keep their precision.
  llvm::Value* sigmoid_of(DType d, llvm::Value* x) {
    llvm::Value* e = exp_of(d, b_.CreateFNeg(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)));
    llvm::Value* r = b_.CreateFDiv(fconst(d, 1.0), b_.CreateFAdd(fconst(d, 1.0), e));
    return b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(d, 0.0)), b_.CreateFMul(e, r), r);
  }

  llvm::Value* unary(OpId op, DType d, llvm::Value* x) {
    const bool fp = is_floating(d);
    if (ir::op_info(op).cls == OpClass::Unary) {
      switch (ir::unary_op(op)) {
        case UnaryOp::neg: return fp ? b_.CreateFNeg(x) : b_.CreateSub(iconst(d, 0), x);
        case UnaryOp::abs:
          if (fp) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
          return is_unsigned(d) ? x : b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
        case UnaryOp::relu:
          if (fp) return b_.CreateSelect(b_.CreateFCmpUGT(x, fconst(d, 0)), x, fconst(d, 0));  // NaN passes through
          return is_unsigned(d) ? x : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, iconst(d, 0));
        case UnaryOp::sign: {
          if (!fp) {
            if (is_unsigned(d)) return b_.CreateZExt(b_.CreateICmpNE(x, iconst(d, 0)), value_type(d));
            llvm::Value* pos = b_.CreateZExt(b_.CreateICmpSGT(x, iconst(d, 0)), value_type(d));
            llvm::Value* negv = b_.CreateZExt(b_.CreateICmpSLT(x, iconst(d, 0)), value_type(d));
            return b_.CreateSub(pos, negv);
          }
          llvm::Value* s = b_.CreateSelect(b_.CreateFCmpOGT(x, fconst(d, 0)), fconst(d, 1),
                                           b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(d, 0)), fconst(d, -1), fconst(d, 0)));
          return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, s);
        }
      }
      XLITE_FAIL("[cpu] no code for unary " + std::string(ir::op_name(op)));
    }
    switch (ir::unary_float_op(op)) {
      case UnaryFloatOp::exp: return exp_of(d, x);
      case UnaryFloatOp::expm1: return call_libm("expm1f", "expm1", d, {x});
      case UnaryFloatOp::log: return d == DType::f64 ? call_libm("logf", "log", d, {x}) : math::log_f32(b_, x);
      case UnaryFloatOp::log1p: return call_libm("log1pf", "log1p", d, {x});
      case UnaryFloatOp::sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
      case UnaryFloatOp::rsqrt: return b_.CreateFDiv(fconst(d, 1), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      case UnaryFloatOp::sin: return d == DType::f64 ? call_libm("sinf", "sin", d, {x}) : math::trig_f32(b_, module_, x, math::Trig::sin);
      case UnaryFloatOp::cos: return d == DType::f64 ? call_libm("cosf", "cos", d, {x}) : math::trig_f32(b_, module_, x, math::Trig::cos);
      case UnaryFloatOp::tan: return d == DType::f64 ? call_libm("tanf", "tan", d, {x}) : math::trig_f32(b_, module_, x, math::Trig::tan);
      case UnaryFloatOp::tanh: return tanh_of(d, x);
      case UnaryFloatOp::erf: return erf_of(d, x);
      case UnaryFloatOp::sigmoid: return sigmoid_of(d, x);
      case UnaryFloatOp::silu: return b_.CreateFMul(x, sigmoid_of(d, x));
      case UnaryFloatOp::gelu: {
        llvm::Value* e = erf_of(d, b_.CreateFMul(x, fconst(d, 0.70710678118654752)));
        return b_.CreateFMul(b_.CreateFMul(fconst(d, 0.5), x), b_.CreateFAdd(fconst(d, 1), e));
      }
      case UnaryFloatOp::gelu_tanh: {
        llvm::Value* cube = b_.CreateFMul(b_.CreateFMul(x, x), x);
        llvm::Value* inner = b_.CreateFMul(fconst(d, 0.79788456080286536), b_.CreateFAdd(x, b_.CreateFMul(fconst(d, 0.044715), cube)));
        return b_.CreateFMul(b_.CreateFMul(fconst(d, 0.5), x), b_.CreateFAdd(fconst(d, 1), tanh_of(d, inner)));
      }
      case UnaryFloatOp::floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
      case UnaryFloatOp::ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
      case UnaryFloatOp::round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
      case UnaryFloatOp::reciprocal: return b_.CreateFDiv(fconst(d, 1), x);
    }
    XLITE_FAIL("[cpu] no code for unary " + std::string(ir::op_name(op)));
  }

  llvm::Value* predicate(OpId op, DType d, llvm::Value* x) {
    const bool fp = is_floating(d);
    switch (ir::predicate_op(op)) {
      case PredicateOp::logical_not: return fp ? b_.CreateFCmpOEQ(x, fconst(d, 0)) : b_.CreateICmpEQ(x, constant(d, 0));
      case PredicateOp::isnan: return fp ? b_.CreateFCmpUNO(x, x) : b_.getFalse();
      case PredicateOp::isinf:
        return fp ? b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), fconst(d, INFINITY)) : b_.getFalse();
    }
    XLITE_FAIL("[cpu] no code for predicate " + std::string(ir::op_name(op)));
  }

  // Notes a failure unless the status already holds one of this or an earlier instruction (KernelStatus).
  void flag_error(llvm::Value* bad, KernelFailure failure, llvm::Value* value, llvm::Value* size, int32_t instr) {
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    auto* check = llvm::BasicBlock::Create(ctx_, "bad_value", fn);
    auto* fail = llvm::BasicBlock::Create(ctx_, "first_bad_value", fn);
    auto* cont = llvm::BasicBlock::Create(ctx_, "ok", fn);
    b_.CreateCondBr(bad, check, cont);
    b_.SetInsertPoint(check);
    auto* i64 = b_.getInt64Ty();
    llvm::Value* none_yet = b_.CreateICmpEQ(b_.CreateLoad(i64, status_), i64c(0));
    llvm::Value* later_yet = b_.CreateICmpSGT(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, status_, 3)), i64c(instr));
    b_.CreateCondBr(b_.CreateOr(none_yet, later_yet), fail, cont);
    b_.SetInsertPoint(fail);
    b_.CreateStore(i64c(static_cast<int64_t>(failure)), status_);
    b_.CreateStore(value, b_.CreateConstGEP1_64(i64, status_, 1));
    b_.CreateStore(size, b_.CreateConstGEP1_64(i64, status_, 2));
    b_.CreateStore(i64c(instr), b_.CreateConstGEP1_64(i64, status_, 3));
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  }

  llvm::Value* binary(int32_t id, OpId op, DType d, llvm::Value* a, llvm::Value* c) {
    if (is_floating(d)) {
      switch (ir::binary_op(op)) {
        case BinaryOp::add: return b_.CreateFAdd(a, c);
        case BinaryOp::sub: return b_.CreateFSub(a, c);
        case BinaryOp::mul: return b_.CreateFMul(a, c);
        case BinaryOp::div: return b_.CreateFDiv(a, c);
        case BinaryOp::pow: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, c);
        case BinaryOp::maximum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, c);
        case BinaryOp::minimum: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, c);
        case BinaryOp::remainder: {
          llvm::Value* r = b_.CreateFRem(a, c);
          llvm::Value* fix = b_.CreateAnd(b_.CreateFCmpONE(r, fconst(d, 0)),
                                          b_.CreateXor(b_.CreateFCmpOLT(r, fconst(d, 0)), b_.CreateFCmpOLT(c, fconst(d, 0))));
          return b_.CreateSelect(fix, b_.CreateFAdd(r, c), r);
        }
      }
    } else {
      const bool u = is_unsigned(d);
      switch (ir::binary_op(op)) {
        case BinaryOp::add: return b_.CreateAdd(a, c);
        case BinaryOp::sub: return b_.CreateSub(a, c);
        case BinaryOp::mul: return b_.CreateMul(a, c);
        case BinaryOp::maximum: return b_.CreateBinaryIntrinsic(u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a, c);
        case BinaryOp::minimum: return b_.CreateBinaryIntrinsic(u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a, c);
        case BinaryOp::pow: {
          auto callee = module_.getOrInsertFunction(
              "xlite_cpu_ipow", llvm::FunctionType::get(b_.getInt64Ty(), {b_.getInt64Ty(), b_.getInt64Ty()}, false));
          llvm::Value* wa = u ? b_.CreateZExt(a, b_.getInt64Ty()) : b_.CreateSExt(a, b_.getInt64Ty());
          llvm::Value* wc = u ? b_.CreateZExt(c, b_.getInt64Ty()) : b_.CreateSExt(c, b_.getInt64Ty());
          // Only 1 and -1 have integer powers of a negative exponent.
          llvm::Value* unit_base = b_.CreateOr(b_.CreateICmpEQ(wa, i64c(1)), b_.CreateICmpEQ(wa, i64c(-1)));
          llvm::Value* bad = b_.CreateAnd(b_.CreateICmpSLT(wc, i64c(0)), b_.CreateNot(unit_base));
          flag_error(bad, KernelFailure::negative_power, wc, i64c(0), id);
          llvm::Value* r = b_.CreateCall(callee, {wa, b_.CreateSelect(bad, i64c(0), wc)});
          return b_.CreateTrunc(r, value_type(d));
        }
        case BinaryOp::div:
        case BinaryOp::remainder: {
          llvm::Value* zero = b_.CreateICmpEQ(c, iconst(d, 0));
          flag_error(zero, KernelFailure::division_by_zero, i64c(0), i64c(0), id);
          llvm::Value* minus_one = u ? b_.getFalse() : b_.CreateICmpEQ(c, iconst(d, -1));
          llvm::Value* safe = b_.CreateSelect(b_.CreateOr(zero, minus_one), iconst(d, 1), c);
          if (op == OpId::div) {
            llvm::Value* q = u ? b_.CreateUDiv(a, safe) : b_.CreateSDiv(a, safe);
            return b_.CreateSelect(minus_one, b_.CreateSub(iconst(d, 0), a), q);
          }
          if (u) return b_.CreateURem(a, safe);
          llvm::Value* r = b_.CreateSRem(a, safe);
          llvm::Value* fix = b_.CreateAnd(b_.CreateICmpNE(r, iconst(d, 0)),
                                          b_.CreateXor(b_.CreateICmpSLT(r, iconst(d, 0)), b_.CreateICmpSLT(safe, iconst(d, 0))));
          return b_.CreateSelect(minus_one, iconst(d, 0), b_.CreateSelect(fix, b_.CreateAdd(r, safe), r));
        }
      }
    }
    XLITE_FAIL("[cpu] no code for binary " + std::string(ir::op_name(op)));
  }

  llvm::Value* compare(OpId op, DType d, llvm::Value* a, llvm::Value* c) {
    if (is_floating(d)) {
      switch (ir::compare_op(op)) {
        case CompareOp::eq: return b_.CreateFCmpOEQ(a, c);
        case CompareOp::ne: return b_.CreateFCmpUNE(a, c);
        case CompareOp::lt: return b_.CreateFCmpOLT(a, c);
        case CompareOp::le: return b_.CreateFCmpOLE(a, c);
        case CompareOp::gt: return b_.CreateFCmpOGT(a, c);
        case CompareOp::ge: return b_.CreateFCmpOGE(a, c);
      }
    } else {
      const bool u = is_unsigned(d);
      switch (ir::compare_op(op)) {
        case CompareOp::eq: return b_.CreateICmpEQ(a, c);
        case CompareOp::ne: return b_.CreateICmpNE(a, c);
        case CompareOp::lt: return u ? b_.CreateICmpULT(a, c) : b_.CreateICmpSLT(a, c);
        case CompareOp::le: return u ? b_.CreateICmpULE(a, c) : b_.CreateICmpSLE(a, c);
        case CompareOp::gt: return u ? b_.CreateICmpUGT(a, c) : b_.CreateICmpSGT(a, c);
        case CompareOp::ge: return u ? b_.CreateICmpUGE(a, c) : b_.CreateICmpSGE(a, c);
      }
    }
    XLITE_FAIL("[cpu] no code for compare " + std::string(ir::op_name(op)));
  }

  llvm::Value* convert(llvm::Value* v, DType from, DType to) {
    if (from == to) return v;
    llvm::Type* t = value_type(to);
    if (to == DType::bool_) return is_floating(from) ? b_.CreateFCmpUNE(v, fconst(from, 0)) : b_.CreateICmpNE(v, iconst(from, 0));
    if (is_floating(from) && is_floating(to)) return rounded(b_.CreateFPCast(v, t), to);
    if (is_floating(from)) {
      // Truncate toward zero; NaN gives 0 and out-of-range values saturate at i64, then wrap, like the oracle.
      llvm::Value* wide = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt64Ty(), v->getType()}, {v});
      return b_.CreateTrunc(wide, t);
    }
    if (is_floating(to)) return rounded(is_unsigned(from) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t), to);
    return is_unsigned(from) ? b_.CreateZExtOrTrunc(v, t) : b_.CreateSExtOrTrunc(v, t);
  }

  // A checked index value read for gather and index_select: out-of-range values are reported and
  // clamped so that nothing outside the buffer is read.
  llvm::Value* checked_index(int32_t id, llvm::Value* raw, DType index_dtype, int64_t size) {
    llvm::Value* v = b_.CreateSExt(raw, b_.getInt64Ty());
    if (index_dtype == DType::i64) v = raw;
    llvm::Value* bad = b_.CreateOr(b_.CreateICmpSLT(v, i64c(0)), b_.CreateICmpSGE(v, i64c(size)));
    flag_error(bad, KernelFailure::index_out_of_range, v, i64c(size), id);
    return b_.CreateSelect(bad, i64c(0), v);
  }

  llvm::Value* philox_block(llvm::Value* seed, llvm::Value* counter) {
    auto* i32 = b_.getInt32Ty();
    auto* i64 = b_.getInt64Ty();
    llvm::Value* c[4] = {b_.CreateTrunc(counter, i32), b_.CreateTrunc(b_.CreateLShr(counter, 32), i32), b_.getInt32(0), b_.getInt32(0)};
    llvm::Value* k0 = b_.CreateTrunc(seed, i32);
    llvm::Value* k1 = b_.CreateTrunc(b_.CreateLShr(seed, 32), i32);
    for (int round = 0; round < 10; ++round) {
      llvm::Value* p0 = b_.CreateMul(b_.getInt64(0xD2511F53u), b_.CreateZExt(c[0], i64));
      llvm::Value* p1 = b_.CreateMul(b_.getInt64(0xCD9E8D57u), b_.CreateZExt(c[2], i64));
      llvm::Value* hi0 = b_.CreateTrunc(b_.CreateLShr(p0, 32), i32);
      llvm::Value* hi1 = b_.CreateTrunc(b_.CreateLShr(p1, 32), i32);
      llvm::Value* next[4] = {b_.CreateXor(b_.CreateXor(hi1, c[1]), k0), b_.CreateTrunc(p1, i32),
                              b_.CreateXor(b_.CreateXor(hi0, c[3]), k1), b_.CreateTrunc(p0, i32)};
      for (int k = 0; k < 4; ++k) c[k] = next[k];
      k0 = b_.CreateAdd(k0, b_.getInt32(0x9E3779B9u));
      k1 = b_.CreateAdd(k1, b_.getInt32(0xBB67AE85u));
    }
    // Pack the four lanes into an i128 so callers pick a lane with a shift.
    llvm::Type* i128 = b_.getInt128Ty();
    llvm::Value* packed = b_.CreateZExt(c[0], i128);
    for (int k = 1; k < 4; ++k) packed = b_.CreateOr(packed, b_.CreateShl(b_.CreateZExt(c[k], i128), 32 * k));
    return packed;
  }
  llvm::Value* lane(llvm::Value* packed, llvm::Value* which) {
    llvm::Value* shift = b_.CreateZExt(b_.CreateMul(which, i64c(32)), b_.getInt128Ty());
    return b_.CreateTrunc(b_.CreateLShr(packed, shift), b_.getInt32Ty());
  }

  llvm::Value* random(const Instr& instr, Index* idx) {
    Index* scalar = make_index({});
    llvm::Value* seed = gen(instr.operands[0], scalar);
    llvm::Value* offset = gen(instr.operands[1], scalar);
    llvm::Value* i = linear(idx);
    auto* dbl = b_.getDoubleTy();
    if (instr.op == OpId::rng_normal) {
      llvm::Value* block = philox_block(seed, b_.CreateAdd(offset, i));
      llvm::Value* u1 = b_.CreateFMul(b_.CreateFAdd(b_.CreateUIToFP(b_.CreateLShr(lane(block, i64c(0)), 8), dbl), llvm::ConstantFP::get(dbl, 1.0)),
                                      llvm::ConstantFP::get(dbl, 1.0 / 16777216.0));
      llvm::Value* u2 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(lane(block, i64c(1)), 8), dbl), llvm::ConstantFP::get(dbl, 1.0 / 16777216.0));
      llvm::Value* radius = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b_.CreateFMul(llvm::ConstantFP::get(dbl, -2.0), call_libm("log", "log", DType::f64, {u1})));
      llvm::Value* z = b_.CreateFMul(radius, call_libm("cos", "cos", DType::f64, {b_.CreateFMul(llvm::ConstantFP::get(dbl, 6.283185307179586), u2)}));
      return instr.dtype == DType::f64 ? z : b_.CreateFPTrunc(z, b_.getFloatTy());
    }
    if (instr.dtype == DType::f64) {
      llvm::Value* block = philox_block(seed, b_.CreateAdd(offset, b_.CreateUDiv(i, i64c(2))));
      llvm::Value* pair = b_.CreateMul(b_.CreateURem(i, i64c(2)), i64c(2));
      llvm::Value* hi = b_.CreateZExt(lane(block, pair), b_.getInt64Ty());
      llvm::Value* lo = b_.CreateZExt(lane(block, b_.CreateAdd(pair, i64c(1))), b_.getInt64Ty());
      llvm::Value* bits = b_.CreateLShr(b_.CreateOr(b_.CreateShl(hi, 32), lo), 11);
      return b_.CreateFMul(b_.CreateUIToFP(bits, dbl), llvm::ConstantFP::get(dbl, 1.0 / 9007199254740992.0));
    }
    llvm::Value* block = philox_block(seed, b_.CreateAdd(offset, b_.CreateUDiv(i, i64c(4))));
    llvm::Value* bits = b_.CreateLShr(lane(block, b_.CreateURem(i, i64c(4))), 8);
    return b_.CreateFMul(b_.CreateUIToFP(bits, b_.getFloatTy()), llvm::ConstantFP::get(b_.getFloatTy(), 1.0 / 16777216.0));
  }

  llvm::Value* gen_uncached(int32_t id, Index* idx) {
    const Instr& instr = g_.instrs[id];
    const DType d = instr.dtype;
    auto operand_type = [&](int k) -> const Instr& { return g_.instrs[instr.operands[k]]; };
    switch (ir::op_info(instr.op).cls) {
      case OpClass::Leaf:
        if (instr.op == OpId::parameter) return load(instr.attrs.get_int(AttrKey::index), d, linear(idx));
        if (instr.op == OpId::constant) return rounded(constant(d, instr.attrs.get_float(AttrKey::value)), d);
        return convert(multi(idx)[instr.attrs.get_int(AttrKey::dim)], DType::i64, d);  // iota
      case OpClass::Random:
        return random(instr, idx);
      case OpClass::Convert:
        return convert(gen(instr.operands[0], idx), operand_type(0).dtype, d);
      case OpClass::Unary:
      case OpClass::UnaryFloat:
        return rounded(unary(instr.op, d, gen(instr.operands[0], idx)), d);
      case OpClass::Predicate:
        return predicate(instr.op, operand_type(0).dtype, gen(instr.operands[0], idx));
      case OpClass::Binary:
        return rounded(binary(id, instr.op, d, gen(instr.operands[0], idx), gen(instr.operands[1], idx)), d);
      case OpClass::Compare:
        return compare(instr.op, operand_type(0).dtype, gen(instr.operands[0], idx), gen(instr.operands[1], idx));
      case OpClass::Logical: {
        llvm::Value* a = gen(instr.operands[0], idx);
        llvm::Value* c = gen(instr.operands[1], idx);
        switch (ir::logical_op(instr.op)) {
          case ir::LogicalOp::logical_and: return b_.CreateAnd(a, c);
          case ir::LogicalOp::logical_or: return b_.CreateOr(a, c);
          case ir::LogicalOp::logical_xor: return b_.CreateXor(a, c);
        }
        break;
      }
      case OpClass::Select:
        return b_.CreateSelect(gen(instr.operands[0], idx), gen(instr.operands[1], idx), gen(instr.operands[2], idx));
      case OpClass::Reshape: {
        const Shape& in_shape = operand_type(0).shape;
        // Trailing dims the reshape keeps (merging or splitting only leading dims, as when a Linear
        // layer flattens [B, T, D] to [B * T, D]) pass through: the inner loop's index stays the loop
        // counter, and only the leading part is re-split (once per row in a row loop). Otherwise the
        // linear index carries over.
        size_t keep = 0;
        while (keep < in_shape.size() && keep < instr.shape.size() &&
               in_shape[in_shape.size() - 1 - keep] == instr.shape[instr.shape.size() - 1 - keep])
          ++keep;
        if (keep == 0 || idx->multi.empty()) {
          Index* in = make_index(in_shape);
          in->linear = linear(idx);
          return gen(instr.operands[0], in);
        }
        const std::vector<llvm::Value*> out = multi(idx);
        Index* lead_out = with_multi(Shape(instr.shape.begin(), instr.shape.end() - keep),
                                     std::vector<llvm::Value*>(out.begin(), out.end() - keep));
        Index* lead_in = make_index(Shape(in_shape.begin(), in_shape.end() - keep));
        lead_in->linear = linear(lead_out);
        std::vector<llvm::Value*> in = multi(lead_in);
        in.insert(in.end(), out.end() - keep, out.end());
        return gen(instr.operands[0], with_multi(in_shape, in));
      }
      case OpClass::Transpose: {
        const auto& perm = instr.attrs.get_ints(AttrKey::perm);
        const auto& out = multi(idx);
        std::vector<llvm::Value*> in(perm.size());
        for (size_t k = 0; k < perm.size(); ++k) in[perm[k]] = out[k];
        return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
      }
      case OpClass::Broadcast: {
        const auto& dims = instr.attrs.get_ints(AttrKey::dims);
        const Shape& in_shape = operand_type(0).shape;
        if (numel(in_shape) == 1) return gen(instr.operands[0], make_index(in_shape));
        const auto& out = multi(idx);
        std::vector<llvm::Value*> in(dims.size());
        for (size_t k = 0; k < dims.size(); ++k) in[k] = in_shape[k] == 1 ? i64c(0) : out[dims[k]];
        return gen(instr.operands[0], with_multi(in_shape, in));
      }
      case OpClass::Slice: {
        const auto& start = instr.attrs.get_ints(AttrKey::start);
        const auto& stride = instr.attrs.get_ints(AttrKey::stride);
        const auto& out = multi(idx);
        std::vector<llvm::Value*> in(out.size());
        for (size_t k = 0; k < out.size(); ++k)
          in[k] = b_.CreateAdd(i64c(start[k]), b_.CreateMul(out[k], i64c(stride[k])));
        return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
      }
      case OpClass::Flip: {
        const auto& dims = instr.attrs.get_ints(AttrKey::dims);
        std::vector<llvm::Value*> in = multi(idx);
        for (int64_t dim : dims) in[dim] = b_.CreateSub(i64c(instr.shape[dim] - 1), in[dim]);
        return gen(instr.operands[0], with_multi(instr.shape, in));
      }
      case OpClass::Pad: {
        const auto& lo = instr.attrs.get_ints(AttrKey::lo);
        const Shape& in_shape = operand_type(0).shape;
        const auto& out = multi(idx);
        std::vector<llvm::Value*> in(out.size());
        llvm::Value* inside = b_.getTrue();
        for (size_t k = 0; k < out.size(); ++k) {
          llvm::Value* v = b_.CreateSub(out[k], i64c(lo[k]));
          inside = b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(v, i64c(0)), b_.CreateICmpSLT(v, i64c(in_shape[k]))));
          // Clamped so the (discarded) read outside the operand stays in bounds.
          in[k] = b_.CreateSelect(b_.CreateICmpSLT(v, i64c(0)), i64c(0),
                                  b_.CreateSelect(b_.CreateICmpSGE(v, i64c(in_shape[k])), i64c(std::max<int64_t>(in_shape[k] - 1, 0)), v));
        }
        llvm::Value* value = constant(d, is_floating(d) ? instr.attrs.get_float(AttrKey::value)
                                                       : static_cast<double>(static_cast<int64_t>(instr.attrs.get_float(AttrKey::value))));
        if (numel(in_shape) == 0) return rounded(value, d);
        return b_.CreateSelect(inside, gen(instr.operands[0], with_multi(in_shape, in)), rounded(value, d));
      }
      case OpClass::Concat: {
        int64_t dim = instr.attrs.get_int(AttrKey::dim);
        const auto& out = multi(idx);
        llvm::Value* result = nullptr;
        int64_t base = 0;
        for (size_t k = 0; k < instr.operands.size(); ++k) {
          const Shape& s = operand_type(k).shape;
          if (numel(s) == 0) {  // contributes no element; generating it would read empty buffers
            base += s[dim];
            continue;
          }
          std::vector<llvm::Value*> in = out;
          llvm::Value* local = b_.CreateSub(out[dim], i64c(base));
          llvm::Value* inside = b_.CreateAnd(b_.CreateICmpSGE(local, i64c(0)), b_.CreateICmpSLT(local, i64c(s[dim])));
          in[dim] = b_.CreateSelect(inside, local, i64c(0));
          llvm::Value* v = gen(instr.operands[k], with_multi(s, in));
          result = result ? b_.CreateSelect(inside, v, result) : v;
          base += s[dim];
        }
        return result ? result : constant(d, 0);  // every operand empty: the loop never runs
      }
      case OpClass::Gather: {
        int64_t dim = instr.attrs.get_int(AttrKey::dim);
        llvm::Value* raw = gen(instr.operands[1], idx);
        std::vector<llvm::Value*> in = multi(idx);
        in[dim] = checked_index(id, raw, operand_type(1).dtype, operand_type(0).shape[dim]);
        return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
      }
      case OpClass::IndexSelect: {
        int64_t dim = instr.attrs.get_int(AttrKey::dim);
        std::vector<llvm::Value*> in = multi(idx);
        llvm::Value* raw = gen(instr.operands[1], with_multi(operand_type(1).shape, {in[dim]}));
        in[dim] = checked_index(id, raw, operand_type(1).dtype, operand_type(0).shape[dim]);
        return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
      }
      case OpClass::Reduce:
        // A row reduction, computed before the row's elements (emit_elementwise_loop).
        if (auto it = row_values_.find(id); it != row_values_.end()) return it->second;
        XLITE_FAIL("[cpu] " + std::string(ir::op_name(instr.op)) + " is fused into a loop that does not run by its rows");
      case OpClass::ArgReduce: case OpClass::ScatterAdd: case OpClass::Dot: case OpClass::Conv:
        break;  // regions of their own (fusion.cpp)
    }
    XLITE_FAIL("[cpu] " + std::string(ir::op_name(instr.op)) + " cannot be fused into a loop");
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
  void close_loop(Loop& loop, bool unroll = true) {
    llvm::Value* next = b_.CreateAdd(loop.iv, i64c(1), "", true, true);
    loop.iv->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* latch = b_.CreateBr(loop.header);
    if (!unroll) {
      llvm::MDNode* disable = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, {nullptr, disable});
      id->replaceOperandWith(0, id);
      latch->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(loop.exit);
  }

  void store_output(llvm::Value* at, llvm::Value* v, DType d) {
    b_.CreateStore(to_storage(v, d), b_.CreateGEP(storage_type(d), output_, at));
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
    // Row reductions fused into this loop (fusion checked that only this row reaches them): each is
    // computed once per row, before the row's elements, in dependency order.
    row_values_.clear();
    for (size_t k = 0; k < g_.instrs.size(); ++k) {
      const Instr& r = g_.instrs[k];
      if (static_cast<int32_t>(k) == g_.outputs[0] || ir::op_info(r.op).cls != OpClass::Reduce) continue;
      const Shape& in_shape = g_.instrs[r.operands[0]].shape;
      const int64_t length = in_shape.back();
      row_values_[static_cast<int32_t>(k)] = emit_reduction(r, length, true, [&](llvm::Value* j) {
        std::vector<llvm::Value*> m = lead;
        m.push_back(j);
        Index* in = with_multi(in_shape, std::move(m));
        in->linear = b_.CreateAdd(b_.CreateMul(rows.iv, i64c(length)), j);
        return in;
      });
    }
    Loop cols = open_loop(from, to, "col");
    Index* idx = make_index(shape);
    idx->multi = lead;
    idx->multi.push_back(cols.iv);
    idx->linear = b_.CreateAdd(row_start, cols.iv);
    store_output(idx->linear, gen(g_.outputs[0], idx), root.dtype);
    close_loop(cols);
    memo_.clear();
    close_loop(rows);
  }

  void emit_flat_loop(const Instr& root) {
    Loop loop = open_loop(begin_, end_, "i");
    memo_.clear();
    arena_.clear();
    Index* idx = make_index(root.shape);
    idx->linear = loop.iv;
    store_output(loop.iv, gen(g_.outputs[0], idx), root.dtype);
    close_loop(loop);
  }

  // A sum or product over leading dims (a column sum, such as a bias gradient): rows outer and the kept
  // elements inner, so that the inner loop reads contiguous memory and vectorises (the general loop
  // below would stride down each column). Only where the output holds the accumulator type exactly
  // (not for 16-bit floats, which accumulate in f32).
  static constexpr int64_t kNarrowColumns = 8;
  bool emit_leading_reduce_loop(const Instr& root) {
    if (root.op != OpId::reduce_sum && root.op != OpId::reduce_prod) return false;
    const int32_t input = root.operands[0];
    const Shape& in_shape = g_.instrs[input].shape;
    const DType dtype = root.dtype;
    if (g_.instrs[input].dtype != dtype) return false;
    if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::i32 && dtype != DType::i64) return false;
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
  void emit_column_sums(DType dtype, int64_t rows, const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& element) {
    llvm::Type* acc_type = value_type(dtype);
    llvm::Type* f64 = b_.getDoubleTy();
    llvm::BasicBlock& entry = body_fn_->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* partials = at_entry.CreateAlloca(acc_type, i64c(kColumnTile), "partials");
    llvm::AllocaInst* totals = at_entry.CreateAlloca(f64, i64c(kColumnTile), "totals");
    partials->setAlignment(llvm::Align(64));
    totals->setAlignment(llvm::Align(64));
    auto min = [&](llvm::Value* a, llvm::Value* c) { return b_.CreateSelect(b_.CreateICmpSLT(a, c), a, c); };

    llvm::Value* tile_count = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(end_, begin_), i64c(kColumnTile - 1)), i64c(kColumnTile));
    Loop tile = open_loop(i64c(0), tile_count, "tile");
    llvm::Value* first = b_.CreateAdd(begin_, b_.CreateMul(tile.iv, i64c(kColumnTile)));
    llvm::Value* width = min(b_.CreateSub(end_, first), i64c(kColumnTile));
    // Zero bits are 0.0 in both types.
    auto clear = [&](llvm::AllocaInst* buffer, llvm::Type* type) {
      b_.CreateMemSet(buffer, b_.getInt8(0), b_.CreateMul(width, i64c(static_cast<int64_t>(type->getPrimitiveSizeInBits() / 8))), llvm::Align(64));
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
    std::vector<int64_t> dims = arg ? std::vector<int64_t>{root.attrs.get_int(AttrKey::dim)} : root.attrs.get_ints(AttrKey::dims);
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
  llvm::Value* emit_reduction(const Instr& root, int64_t count, bool contiguous, const std::function<Index*(llvm::Value*)>& input_index) {
    const int32_t input = root.operands[0];
    const DType in_dtype = g_.instrs[input].dtype;
    const bool arg = ir::op_info(root.op).cls == OpClass::ArgReduce;
    llvm::Type* acc_type = value_type(is_floating(in_dtype) && in_dtype != DType::f64 ? DType::f32 : in_dtype);
    const bool fp = is_floating(in_dtype);
    if (fp && root.op == OpId::reduce_sum)
      return rounded(emit_float_sum(input, acc_type, count, contiguous ? kSumBlock : kSumChain, input_index), root.dtype);
    llvm::Value* init = fp ? llvm::ConstantFP::get(acc_type, 0.0) : llvm::ConstantInt::get(acc_type, 0);  // argmax, argmin
    if (!arg) switch (ir::reduce_op(root.op)) {
      case ReduceOp::reduce_sum: init = fp ? llvm::ConstantFP::get(acc_type, 0.0) : llvm::ConstantInt::get(acc_type, 0); break;
      case ReduceOp::reduce_prod: init = fp ? llvm::ConstantFP::get(acc_type, 1.0) : llvm::ConstantInt::get(acc_type, 1); break;
      case ReduceOp::reduce_max:
        init = fp ? llvm::ConstantFP::getInfinity(acc_type, true)
                  : (is_unsigned(in_dtype) ? llvm::ConstantInt::get(acc_type, 0) : llvm::ConstantInt::get(acc_type, llvm::APInt::getSignedMinValue(acc_type->getIntegerBitWidth())));
        break;
      case ReduceOp::reduce_min:
        init = fp ? llvm::ConstantFP::getInfinity(acc_type, false)
                  : (is_unsigned(in_dtype) ? llvm::ConstantInt::get(acc_type, llvm::APInt::getMaxValue(acc_type->getIntegerBitWidth()))
                                           : llvm::ConstantInt::get(acc_type, llvm::APInt::getSignedMaxValue(acc_type->getIntegerBitWidth())));
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
    llvm::Value* v = gen(input, input_index(inner.iv));
    llvm::Value* next = nullptr;
    llvm::FastMathFlags reassoc;
    reassoc.setAllowReassoc();
    if (!arg) switch (ir::reduce_op(root.op)) {
      case ReduceOp::reduce_sum:  // integers here: floating sums are emit_float_sum's
      case ReduceOp::reduce_prod: {
        // Reassociation lets the loop vectoriser split the accumulator across lanes.
        llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
        b_.setFastMathFlags(reassoc);
        if (root.op == OpId::reduce_sum) next = b_.CreateAdd(acc, v);
        else next = fp ? b_.CreateFMul(acc, v) : b_.CreateMul(acc, v);
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
          llvm::Value* magnitude = b_.CreateAnd(b_.CreateBitCast(v, bits_type), llvm::APInt::getSignedMaxValue(bits_type->getIntegerBitWidth()));
          nan_seen->addIncoming(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, nan_seen, magnitude), b_.GetInsertBlock());
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

  const ir::Graph& g_;
  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  llvm::IRBuilder<> b_;
  llvm::Function* body_fn_ = nullptr;
  std::vector<llvm::Value*> buffers_;
  llvm::Value* output_ = nullptr;
  llvm::Value* begin_ = nullptr;
  llvm::Value* end_ = nullptr;
  llvm::Value* status_ = nullptr;
  std::map<std::pair<int32_t, Index*>, llvm::Value*> memo_;
  std::deque<Index> arena_;
  std::unordered_map<int32_t, llvm::Value*> row_values_;  // row reductions of the current row
};

}  // namespace

void emit_kernel(const ir::Graph& body, llvm::LLVMContext& context, llvm::Module& module, const std::string& name) {
  Emitter(body, context, module).emit(name);
}

}  // namespace xlite::backends::cpu
