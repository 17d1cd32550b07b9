#include "backends/codegen/element_generator.h"

#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "ir/op_attrs.h"

namespace xlite::backends::codegen {
namespace {
using ir::BinaryOp;
using ir::CompareOp;
using ir::Instr;
using ir::OpClass;
using ir::OpId;
using ir::PredicateOp;
using ir::UnaryFloatOp;
using ir::UnaryOp;
}  // namespace

bool is_unsigned(DType d) { return d == DType::u8 || d == DType::bool_; }

llvm::Type* ElementGenerator::value_type(DType d) {
  switch (d) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: return b_.getFloatTy();
    case DType::f64: return b_.getDoubleTy();
    case DType::i32: return b_.getInt32Ty();
    case DType::i64: return b_.getInt64Ty();
    case DType::u8: return b_.getInt8Ty();
    case DType::bool_: return b_.getInt1Ty();
  }
  return nullptr;
}

llvm::Type* ElementGenerator::storage_type(DType d) {
  switch (d) {
    case DType::f16: return b_.getHalfTy();
    case DType::bf16: return b_.getInt16Ty();
    case DType::bool_: return b_.getInt8Ty();
    default: return value_type(d);
  }
}

llvm::Value* ElementGenerator::from_storage(llvm::Value* v, DType d) {
  switch (d) {
    case DType::f16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::bf16: return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
    case DType::bool_: return b_.CreateICmpNE(v, b_.getInt8(0));
    default: return v;
  }
}

llvm::Value* ElementGenerator::to_storage(llvm::Value* v, DType d) {
  switch (d) {
    case DType::f16: return b_.CreateFPTrunc(v, b_.getHalfTy());
    case DType::bf16: {
      // Round to nearest even on the bits; NaN stays a quiet NaN.
      llvm::Value* u = b_.CreateBitCast(v, b_.getInt32Ty());
      llvm::Value* rounded =
          b_.CreateAdd(u, b_.CreateAdd(b_.getInt32(0x7fff), b_.CreateAnd(b_.CreateLShr(u, 16), b_.getInt32(1))));
      llvm::Value* nan = b_.CreateOr(b_.CreateLShr(u, 16), b_.getInt32(0x40));
      llvm::Value* bits = b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, b_.CreateLShr(rounded, 16));
      return b_.CreateTrunc(bits, b_.getInt16Ty());
    }
    case DType::bool_: return b_.CreateZExt(v, b_.getInt8Ty());
    default: return v;
  }
}

// 16-bit floats are computed in f32 but every value is rounded to its storage type, like the oracle.
llvm::Value* ElementGenerator::rounded(llvm::Value* v, DType d) {
  return is_16_bit_float(d) ? from_storage(to_storage(v, d), d) : v;
}

llvm::Value* ElementGenerator::observed(int32_t id, Index* idx) {
  llvm::Value* v = gen(id, idx);
  const Instr& instr = g_.instrs[id];
  if (!excess_precision_ || instr.op == OpId::parameter || instr.op == OpId::constant) return v;
  return rounded(v, instr.dtype);
}

llvm::Value* ElementGenerator::constant(DType d, double v) {
  return is_floating(d) ? fconst(d, v) : d == DType::bool_ ? b_.getInt1(v != 0) : iconst(d, static_cast<int64_t>(v));
}

llvm::Value* ElementGenerator::gen(int32_t id, Index* idx) {
  auto key = std::make_pair(id, idx);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  llvm::Value* v = reused_value(id, idx);
  if (!v) v = gen_uncached(id, idx);
  memo_[key] = v;
  return v;
}

llvm::Value* ElementGenerator::load(int64_t param, DType d, llvm::Value* at) {
  llvm::Value* p = b_.CreateGEP(storage_type(d), buffers_[param], at);
  return from_storage(b_.CreateLoad(storage_type(d), p), d);
}

llvm::Value* ElementGenerator::unary(OpId op, DType d, llvm::Value* x) {
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
        llvm::Value* s =
            b_.CreateSelect(b_.CreateFCmpOGT(x, fconst(d, 0)), fconst(d, 1),
                            b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(d, 0)), fconst(d, -1), fconst(d, 0)));
        return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, s);
      }
    }
    XLITE_FAIL("[codegen] no code for unary " + std::string(ir::op_name(op)));
  }
  switch (ir::unary_float_op(op)) {
    case UnaryFloatOp::exp: return math(MathFn::exp, d, x);
    case UnaryFloatOp::expm1: return math(MathFn::expm1, d, x);
    case UnaryFloatOp::log: return math(MathFn::log, d, x);
    case UnaryFloatOp::log1p: return math(MathFn::log1p, d, x);
    case UnaryFloatOp::sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case UnaryFloatOp::rsqrt: return b_.CreateFDiv(fconst(d, 1), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case UnaryFloatOp::sin: return math(MathFn::sin, d, x);
    case UnaryFloatOp::cos: return math(MathFn::cos, d, x);
    case UnaryFloatOp::tan: return math(MathFn::tan, d, x);
    case UnaryFloatOp::atan: return math(MathFn::atan, d, x);
    case UnaryFloatOp::tanh: return math(MathFn::tanh, d, x);
    case UnaryFloatOp::erf: return math(MathFn::erf, d, x);
    case UnaryFloatOp::sigmoid: return math_.sigmoid(b_, module_, d, x);
    case UnaryFloatOp::silu: return b_.CreateFMul(x, math_.sigmoid(b_, module_, d, x));
    case UnaryFloatOp::gelu: {
      llvm::Value* e = math(MathFn::erf, d, b_.CreateFMul(x, fconst(d, 0.70710678118654752)));
      return b_.CreateFMul(b_.CreateFMul(fconst(d, 0.5), x), b_.CreateFAdd(fconst(d, 1), e));
    }
    case UnaryFloatOp::gelu_tanh: {
      llvm::Value* cube = b_.CreateFMul(b_.CreateFMul(x, x), x);
      llvm::Value* inner =
          b_.CreateFMul(fconst(d, 0.79788456080286536), b_.CreateFAdd(x, b_.CreateFMul(fconst(d, 0.044715), cube)));
      return b_.CreateFMul(b_.CreateFMul(fconst(d, 0.5), x), b_.CreateFAdd(fconst(d, 1), math(MathFn::tanh, d, inner)));
    }
    case UnaryFloatOp::floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case UnaryFloatOp::ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case UnaryFloatOp::round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    case UnaryFloatOp::reciprocal: return b_.CreateFDiv(fconst(d, 1), x);
  }
  XLITE_FAIL("[codegen] no code for unary " + std::string(ir::op_name(op)));
}

llvm::Value* ElementGenerator::predicate(OpId op, DType d, llvm::Value* x) {
  const bool fp = is_floating(d);
  switch (ir::predicate_op(op)) {
    case PredicateOp::logical_not: return fp ? b_.CreateFCmpOEQ(x, fconst(d, 0)) : b_.CreateICmpEQ(x, constant(d, 0));
    case PredicateOp::isnan: return fp ? b_.CreateFCmpUNO(x, x) : b_.getFalse();
    case PredicateOp::isinf:
      return fp ? b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), fconst(d, INFINITY))
                : b_.getFalse();
  }
  XLITE_FAIL("[codegen] no code for predicate " + std::string(ir::op_name(op)));
}

llvm::Value* ElementGenerator::binary(int32_t id, OpId op, DType d, llvm::Value* a, llvm::Value* c) {
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
        llvm::Value* fix =
            b_.CreateAnd(b_.CreateFCmpONE(r, fconst(d, 0)),
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
        llvm::Value* wa = u ? b_.CreateZExt(a, b_.getInt64Ty()) : b_.CreateSExt(a, b_.getInt64Ty());
        llvm::Value* wc = u ? b_.CreateZExt(c, b_.getInt64Ty()) : b_.CreateSExt(c, b_.getInt64Ty());
        // Only 1 and -1 have integer powers of a negative exponent.
        llvm::Value* unit_base = b_.CreateOr(b_.CreateICmpEQ(wa, i64c(1)), b_.CreateICmpEQ(wa, i64c(-1)));
        llvm::Value* bad = b_.CreateAnd(b_.CreateICmpSLT(wc, i64c(0)), b_.CreateNot(unit_base));
        flag_failure(bad, ElementFailure::negative_power, wc, i64c(0), id);
        llvm::Value* r = math_.integer_pow(b_, wa, b_.CreateSelect(bad, i64c(0), wc));
        return b_.CreateTrunc(r, value_type(d));
      }
      case BinaryOp::div:
      case BinaryOp::remainder: {
        llvm::Value* zero = b_.CreateICmpEQ(c, iconst(d, 0));
        flag_failure(zero, ElementFailure::division_by_zero, i64c(0), i64c(0), id);
        llvm::Value* minus_one = u ? b_.getFalse() : b_.CreateICmpEQ(c, iconst(d, -1));
        llvm::Value* safe = b_.CreateSelect(b_.CreateOr(zero, minus_one), iconst(d, 1), c);
        if (op == OpId::div) {
          llvm::Value* q = u ? b_.CreateUDiv(a, safe) : b_.CreateSDiv(a, safe);
          return b_.CreateSelect(minus_one, b_.CreateSub(iconst(d, 0), a), q);
        }
        if (u) return b_.CreateURem(a, safe);
        llvm::Value* r = b_.CreateSRem(a, safe);
        llvm::Value* fix =
            b_.CreateAnd(b_.CreateICmpNE(r, iconst(d, 0)),
                         b_.CreateXor(b_.CreateICmpSLT(r, iconst(d, 0)), b_.CreateICmpSLT(safe, iconst(d, 0))));
        return b_.CreateSelect(minus_one, iconst(d, 0), b_.CreateSelect(fix, b_.CreateAdd(r, safe), r));
      }
    }
  }
  XLITE_FAIL("[codegen] no code for binary " + std::string(ir::op_name(op)));
}

llvm::Value* ElementGenerator::compare(OpId op, DType d, llvm::Value* a, llvm::Value* c) {
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
  XLITE_FAIL("[codegen] no code for compare " + std::string(ir::op_name(op)));
}

llvm::Value* ElementGenerator::convert(llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = value_type(to);
  if (to == DType::bool_)
    return is_floating(from) ? b_.CreateFCmpUNE(v, fconst(from, 0)) : b_.CreateICmpNE(v, iconst(from, 0));
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
llvm::Value* ElementGenerator::checked_index(int32_t id, llvm::Value* raw, DType index_dtype, int64_t size) {
  llvm::Value* v = b_.CreateSExt(raw, b_.getInt64Ty());
  if (index_dtype == DType::i64) v = raw;
  llvm::Value* bad = b_.CreateOr(b_.CreateICmpSLT(v, i64c(0)), b_.CreateICmpSGE(v, i64c(size)));
  flag_failure(bad, ElementFailure::index_out_of_range, v, i64c(size), id);
  return b_.CreateSelect(bad, i64c(0), v);
}

llvm::Value* ElementGenerator::philox_block(llvm::Value* seed, llvm::Value* counter) {
  auto* i32 = b_.getInt32Ty();
  auto* i64 = b_.getInt64Ty();
  llvm::Value* c[4] = {b_.CreateTrunc(counter, i32), b_.CreateTrunc(b_.CreateLShr(counter, 32), i32), b_.getInt32(0),
                       b_.getInt32(0)};
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

llvm::Value* ElementGenerator::lane(llvm::Value* packed, llvm::Value* which) {
  llvm::Value* shift = b_.CreateZExt(b_.CreateMul(which, i64c(32)), b_.getInt128Ty());
  return b_.CreateTrunc(b_.CreateLShr(packed, shift), b_.getInt32Ty());
}

llvm::Value* ElementGenerator::random(const Instr& instr, Index* idx) {
  Index* scalar = make_index({});
  llvm::Value* seed = gen(instr.operands[0], scalar);
  llvm::Value* offset = gen(instr.operands[1], scalar);
  llvm::Value* i = linear(idx);
  auto* dbl = b_.getDoubleTy();
  if (instr.op == OpId::rng_normal) {
    llvm::Value* block = philox_block(seed, b_.CreateAdd(offset, i));
    llvm::Value* u1 = b_.CreateFMul(
        b_.CreateFAdd(b_.CreateUIToFP(b_.CreateLShr(lane(block, i64c(0)), 8), dbl), llvm::ConstantFP::get(dbl, 1.0)),
        llvm::ConstantFP::get(dbl, 1.0 / 16777216.0));
    llvm::Value* u2 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(lane(block, i64c(1)), 8), dbl),
                                    llvm::ConstantFP::get(dbl, 1.0 / 16777216.0));
    llvm::Value* radius = b_.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt, b_.CreateFMul(llvm::ConstantFP::get(dbl, -2.0), math(MathFn::log, DType::f64, u1)));
    llvm::Value* z = b_.CreateFMul(
        radius, math(MathFn::cos, DType::f64, b_.CreateFMul(llvm::ConstantFP::get(dbl, 6.283185307179586), u2)));
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
  return b_.CreateFMul(b_.CreateUIToFP(bits, b_.getFloatTy()),
                       llvm::ConstantFP::get(b_.getFloatTy(), 1.0 / 16777216.0));
}

llvm::Value* ElementGenerator::gen_uncached(int32_t id, Index* idx) {
  const Instr& instr = g_.instrs[id];
  const DType d = instr.dtype;
  auto operand_type = [&](int k) -> const Instr& { return g_.instrs[instr.operands[k]]; };
  switch (ir::op_info(instr.op).cls) {
    case OpClass::Leaf:
      if (instr.op == OpId::parameter) return load(ir::ParameterAttrs::of(instr.attrs).index, d, linear(idx));
      if (instr.op == OpId::constant) return rounded(constant(d, ir::ConstantAttrs::of(instr.attrs).value), d);
      return convert(multi(idx)[ir::IotaAttrs::of(instr.attrs).dim], DType::i64, d);  // iota
    case OpClass::Random: return random(instr, idx);
    case OpClass::Convert: return convert(observed(instr.operands[0], idx), operand_type(0).dtype, d);
    case OpClass::Unary:
    case OpClass::UnaryFloat: return arithmetic_result(unary(instr.op, d, gen(instr.operands[0], idx)), d);
    case OpClass::Predicate: return predicate(instr.op, operand_type(0).dtype, observed(instr.operands[0], idx));
    case OpClass::Binary:
      return arithmetic_result(binary(id, instr.op, d, gen(instr.operands[0], idx), gen(instr.operands[1], idx)), d);
    case OpClass::Compare:
      return compare(instr.op, operand_type(0).dtype, observed(instr.operands[0], idx),
                     observed(instr.operands[1], idx));
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
    case OpClass::Reshape: return gen(instr.operands[0], reshaped_index(idx, operand_type(0).shape));
    case OpClass::Transpose: {
      const auto& perm = ir::TransposeAttrs::of(instr.attrs).perm;
      return gen(instr.operands[0], transposed_index(idx, perm, operand_type(0).shape));
    }
    case OpClass::Broadcast: {
      const auto& dims = ir::BroadcastAttrs::of(instr.attrs).dims;
      return gen(instr.operands[0], broadcast_index(idx, dims, operand_type(0).shape));
    }
    case OpClass::Slice: {
      const auto& attrs = ir::SliceAttrs::of(instr.attrs);
      return gen(instr.operands[0], sliced_index(idx, attrs.start, attrs.stride, operand_type(0).shape));
    }
    case OpClass::Flip: {
      const auto& dims = ir::FlipAttrs::of(instr.attrs).dims;
      std::vector<llvm::Value*> in = multi(idx);
      for (int64_t dim : dims) in[dim] = b_.CreateSub(i64c(instr.shape[dim] - 1), in[dim]);
      return gen(instr.operands[0], with_multi(instr.shape, in));
    }
    case OpClass::Pad: {
      const auto& attrs = ir::PadAttrs::of(instr.attrs);
      const Shape& in_shape = operand_type(0).shape;
      llvm::Value* value =
          constant(d, is_floating(d) ? attrs.value : static_cast<double>(static_cast<int64_t>(attrs.value)));
      if (numel(in_shape) == 0) return rounded(value, d);
      const BoundedIndex in = padded_index(idx, attrs.lo, in_shape);
      return b_.CreateSelect(in.inside, gen(instr.operands[0], in.index), rounded(value, d));
    }
    case OpClass::Concat: {
      int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
      llvm::Value* result = nullptr;
      int64_t base = 0;
      for (size_t k = 0; k < instr.operands.size(); ++k) {
        const Shape& s = operand_type(k).shape;
        if (numel(s) == 0) {  // contributes no element; generating it would read empty buffers
          base += s[dim];
          continue;
        }
        const BoundedIndex in = concat_part_index(idx, dim, base, s);
        llvm::Value* v = gen(instr.operands[k], in.index);
        result = result ? b_.CreateSelect(in.inside, v, result) : v;
        base += s[dim];
      }
      return result ? result : constant(d, 0);  // every operand empty: the loop never runs
    }
    case OpClass::Gather: {
      int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
      llvm::Value* raw = gen(instr.operands[1], idx);
      std::vector<llvm::Value*> in = multi(idx);
      in[dim] = checked_index(id, raw, operand_type(1).dtype, operand_type(0).shape[dim]);
      return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
    }
    case OpClass::IndexSelect: {
      int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
      std::vector<llvm::Value*> in = multi(idx);
      llvm::Value* raw = gen(instr.operands[1], with_multi(operand_type(1).shape, {in[dim]}));
      in[dim] = checked_index(id, raw, operand_type(1).dtype, operand_type(0).shape[dim]);
      return gen(instr.operands[0], with_multi(operand_type(0).shape, in));
    }
    case OpClass::Reduce:
      // A row reduction, computed before the row's elements (emit_elementwise_loop).
      if (llvm::Value* row_value = fused_reduction_value(id)) return row_value;
      XLITE_FAIL("[codegen] " + std::string(ir::op_name(instr.op)) +
                 " is fused into a loop that does not run by its rows");
    case OpClass::ArgReduce:
    case OpClass::Scan:
    case OpClass::Sort:
    case OpClass::ScatterAdd:
    case OpClass::Dot:
    case OpClass::Conv:
    case OpClass::Transfer:
    case OpClass::Barrier:
    case OpClass::CustomCall:
    case OpClass::CustomOutput: break;  // regions of their own (fusion.cpp)
  }
  XLITE_FAIL("[codegen] " + std::string(ir::op_name(instr.op)) + " cannot be fused into a loop");
}

}  // namespace xlite::backends::codegen
