// Reference kernels for leaves, conversions, random draws and elementwise ops.
#include <cmath>
#include <cstring>

#include "backends/reference/kernels.h"
#include "core/check.h"
#include "core/philox.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::BinaryOp;
using ir::CompareOp;
using ir::LogicalOp;
using ir::OpId;
using ir::PredicateOp;
using ir::UnaryFloatOp;
using ir::UnaryOp;

bool is_float_value(const Value& v) { return is_floating(v.dtype); }

void constant(const ir::Instr& instr, std::span<const Value* const>, Value& out) {
  double value = ir::ConstantAttrs::of(instr.attrs).value;
  if (is_floating(out.dtype))
    store_f(out, 0, value);
  else
    store_i(out, 0, static_cast<int64_t>(value));
}

void iota(const ir::Instr& instr, std::span<const Value* const>, Value& out) {
  int64_t dim = ir::IotaAttrs::of(instr.attrs).dim;
  std::vector<int64_t> index;
  for (int64_t i = 0; i < out.numel; ++i) {
    unravel(i, out.shape, index);
    store_i(out, i, index[dim]);
  }
}

void rng(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  uint64_t seed = static_cast<uint64_t>(load_i(*in[0], 0));
  uint64_t offset = static_cast<uint64_t>(load_i(*in[1], 0));
  for (int64_t i = 0; i < out.numel; ++i) {
    if (instr.op == OpId::rng_normal) {
      store_f(out, i, philox::normal(philox::block(seed, offset, i)));
    } else if (out.dtype == DType::f64) {
      philox::Block b = philox::block(seed, offset, i / 2);
      store_f(out, i, philox::uniform_f64(b[(i % 2) * 2], b[(i % 2) * 2 + 1]));
    } else {
      store_f(out, i, philox::uniform_f32(philox::block(seed, offset, i / 4)[i % 4]));
    }
  }
}

void convert(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  for (int64_t i = 0; i < out.numel; ++i) {
    if (is_float_value(x))
      store_f(out, i, load_f(x, i));
    else
      store_i(out, i, load_i(x, i));
  }
}

[[noreturn]] void no_case(OpId op) {
  XLITE_FAIL("[reference] no scalar semantics for " + std::string(ir::op_name(op)));
}

// Ops of class Unary apply to every dtype, UnaryFloat ones to floating dtypes only.
double unary_float(OpId op, double x) {
  if (ir::op_info(op).cls == ir::OpClass::Unary) {
    switch (ir::unary_op(op)) {
      case UnaryOp::neg: return -x;
      case UnaryOp::abs: return std::fabs(x);
      case UnaryOp::relu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
      case UnaryOp::sign: return std::isnan(x) ? x : static_cast<double>((0.0 < x) - (x < 0.0));
    }
    no_case(op);
  }
  switch (ir::unary_float_op(op)) {
    case UnaryFloatOp::exp: return std::exp(x);
    case UnaryFloatOp::expm1: return std::expm1(x);
    case UnaryFloatOp::log: return std::log(x);
    case UnaryFloatOp::log1p: return std::log1p(x);
    case UnaryFloatOp::sqrt: return std::sqrt(x);
    case UnaryFloatOp::rsqrt: return 1.0 / std::sqrt(x);
    case UnaryFloatOp::sin: return std::sin(x);
    case UnaryFloatOp::cos: return std::cos(x);
    case UnaryFloatOp::tan: return std::tan(x);
    case UnaryFloatOp::atan: return std::atan(x);
    case UnaryFloatOp::tanh: return std::tanh(x);
    case UnaryFloatOp::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryFloatOp::gelu: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752));
    case UnaryFloatOp::gelu_tanh: return 0.5 * x * (1.0 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case UnaryFloatOp::silu: return x / (1.0 + std::exp(-x));
    case UnaryFloatOp::erf: return std::erf(x);
    case UnaryFloatOp::floor: return std::floor(x);
    case UnaryFloatOp::ceil: return std::ceil(x);
    case UnaryFloatOp::round: return std::nearbyint(x);  // the default rounding mode: half to even
    case UnaryFloatOp::reciprocal: return 1.0 / x;
  }
  no_case(op);
}

int64_t unary_int(OpId op, int64_t x) {
  // Unsigned arithmetic wraps instead of overflowing.
  switch (ir::unary_op(op)) {
    case UnaryOp::neg: return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    case UnaryOp::abs: return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
    case UnaryOp::relu: return x > 0 ? x : 0;
    case UnaryOp::sign: return (0 < x) - (x < 0);
  }
  no_case(op);
}

void unary(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  for (int64_t i = 0; i < out.numel; ++i) {
    if (is_float_value(x))
      store_f(out, i, unary_float(instr.op, load_f(x, i)));
    else
      store_i(out, i, unary_int(instr.op, load_i(x, i)));
  }
}

void predicate(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  for (int64_t i = 0; i < out.numel; ++i) {
    bool r = false;
    switch (ir::predicate_op(instr.op)) {
      case PredicateOp::logical_not: r = is_float_value(x) ? load_f(x, i) == 0 : load_i(x, i) == 0; break;
      case PredicateOp::isnan: r = is_float_value(x) && std::isnan(load_f(x, i)); break;
      case PredicateOp::isinf: r = is_float_value(x) && std::isinf(load_f(x, i)); break;
    }
    store_i(out, i, r);
  }
}

double binary_float(OpId op, double a, double b) {
  switch (ir::binary_op(op)) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::pow: return std::pow(a, b);
    case BinaryOp::maximum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
    case BinaryOp::minimum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
    case BinaryOp::remainder: {
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
  no_case(op);
}

int64_t int_pow(const ir::Instr& instr, int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return exponent % 2 == 0 ? 1 : -1;
    kernel_error(instr,
                 "integers to negative integer powers are not allowed (exponent " + std::to_string(exponent) + ")");
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return static_cast<int64_t>(result);
}

int64_t binary_int(const ir::Instr& instr, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (ir::binary_op(instr.op)) {
    case BinaryOp::add: return static_cast<int64_t>(ua + ub);
    case BinaryOp::sub: return static_cast<int64_t>(ua - ub);
    case BinaryOp::mul: return static_cast<int64_t>(ua * ub);
    case BinaryOp::pow: return int_pow(instr, a, b);
    case BinaryOp::maximum: return a > b ? a : b;
    case BinaryOp::minimum: return a < b ? a : b;
    case BinaryOp::div:
    case BinaryOp::remainder: {
      if (b == 0) kernel_error(instr, "integer division by zero");
      if (b == -1) return instr.op == OpId::div ? static_cast<int64_t>(0 - ua) : 0;
      if (instr.op == OpId::div) return a / b;  // truncates, like C
      int64_t r = a % b;
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
  }
  no_case(instr.op);
}

void binary(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& a = *in[0];
  const Value& b = *in[1];
  for (int64_t i = 0; i < out.numel; ++i) {
    if (is_float_value(a))
      store_f(out, i, binary_float(instr.op, load_f(a, i), load_f(b, i)));
    else
      store_i(out, i, binary_int(instr, load_i(a, i), load_i(b, i)));
  }
}

template <class T>
bool compare_values(OpId op, T a, T b) {
  switch (ir::compare_op(op)) {
    case CompareOp::eq: return a == b;
    case CompareOp::ne: return a != b;
    case CompareOp::lt: return a < b;
    case CompareOp::le: return a <= b;
    case CompareOp::gt: return a > b;
    case CompareOp::ge: return a >= b;
  }
  no_case(op);
}

void compare(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& a = *in[0];
  const Value& b = *in[1];
  for (int64_t i = 0; i < out.numel; ++i) {
    bool r = is_float_value(a) ? compare_values(instr.op, load_f(a, i), load_f(b, i))
                               : compare_values(instr.op, load_i(a, i), load_i(b, i));
    store_i(out, i, r);
  }
}

void logical(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const LogicalOp view = ir::logical_op(instr.op);
  for (int64_t i = 0; i < out.numel; ++i) {
    bool a = load_i(*in[0], i) != 0, b = load_i(*in[1], i) != 0;
    bool r = false;
    switch (view) {
      case LogicalOp::logical_and: r = a && b; break;
      case LogicalOp::logical_or: r = a || b; break;
      case LogicalOp::logical_xor: r = a != b; break;
    }
    store_i(out, i, r);
  }
}

void select(const ir::Instr&, std::span<const Value* const> in, Value& out) {
  int64_t size = dtype_size(out.dtype);
  for (int64_t i = 0; i < out.numel; ++i) {
    const Value& chosen = load_i(*in[0], i) ? *in[1] : *in[2];
    std::memcpy(out.buffer->as<char>() + i * size, chosen.buffer->as<char>() + i * size, size);
  }
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  for (int i = 0; i < ir::kNumOps; ++i) {
    switch (ir::op_info(static_cast<OpId>(i)).cls) {
      case ir::OpClass::Unary:
      case ir::OpClass::UnaryFloat: table[i] = unary; break;
      case ir::OpClass::Predicate: table[i] = predicate; break;
      case ir::OpClass::Binary: table[i] = binary; break;
      case ir::OpClass::Compare: table[i] = compare; break;
      case ir::OpClass::Logical: table[i] = logical; break;
      case ir::OpClass::Select: table[i] = select; break;
      case ir::OpClass::Random: table[i] = rng; break;
      case ir::OpClass::Convert: table[i] = convert; break;
      case ir::OpClass::Leaf:  // constant and iota below; parameters are bound, not computed
      case ir::OpClass::Reduce:
      case ir::OpClass::ArgReduce:
      case ir::OpClass::Scan:
      case ir::OpClass::Sort:
      case ir::OpClass::Reshape:
      case ir::OpClass::Transpose:
      case ir::OpClass::Broadcast:
      case ir::OpClass::Slice:
      case ir::OpClass::Concat:
      case ir::OpClass::Pad:
      case ir::OpClass::Flip:
      case ir::OpClass::Gather:
      case ir::OpClass::IndexSelect:
      case ir::OpClass::ScatterAdd:
      case ir::OpClass::Dot:
      case ir::OpClass::Conv:
      case ir::OpClass::Transfer:
      case ir::OpClass::Barrier:
      case ir::OpClass::CustomCall:
      case ir::OpClass::CustomOutput: break;  // registered by their own files
    }
  }
  table[static_cast<int>(OpId::constant)] = constant;
  table[static_cast<int>(OpId::iota)] = iota;
}

}  // namespace xlite::backends::reference
