// Reference kernels for leaves, conversions, random draws and elementwise ops.
#include <cmath>
#include <cstring>

#include "backends/reference/kernels.h"
#include "core/philox.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;
using ir::OpId;

bool is_float_value(const Value& v) { return is_floating(v.dtype); }

void constant(const ir::Instr& instr, std::span<const Value* const>, Value& out) {
  double value = instr.attrs.get_float(AttrKey::value);
  if (is_floating(out.dtype)) store_f(out, 0, value);
  else store_i(out, 0, static_cast<int64_t>(value));
}

void iota(const ir::Instr& instr, std::span<const Value* const>, Value& out) {
  int64_t dim = instr.attrs.get_int(AttrKey::dim);
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
    if (is_float_value(x)) store_f(out, i, load_f(x, i));
    else store_i(out, i, load_i(x, i));
  }
}

double unary_float(OpId op, double x) {
  switch (op) {
    case OpId::neg: return -x;
    case OpId::abs: return std::fabs(x);
    case OpId::exp: return std::exp(x);
    case OpId::expm1: return std::expm1(x);
    case OpId::log: return std::log(x);
    case OpId::log1p: return std::log1p(x);
    case OpId::sqrt: return std::sqrt(x);
    case OpId::rsqrt: return 1.0 / std::sqrt(x);
    case OpId::sin: return std::sin(x);
    case OpId::cos: return std::cos(x);
    case OpId::tan: return std::tan(x);
    case OpId::tanh: return std::tanh(x);
    case OpId::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case OpId::relu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
    case OpId::gelu: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752));
    case OpId::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case OpId::silu: return x / (1.0 + std::exp(-x));
    case OpId::erf: return std::erf(x);
    case OpId::floor: return std::floor(x);
    case OpId::ceil: return std::ceil(x);
    case OpId::round: return std::nearbyint(x);  // the default rounding mode: half to even
    case OpId::sign: return std::isnan(x) ? x : static_cast<double>((0.0 < x) - (x < 0.0));
    case OpId::reciprocal: return 1.0 / x;
    default: return 0;
  }
}

int64_t unary_int(OpId op, int64_t x) {
  // Unsigned arithmetic wraps instead of overflowing.
  switch (op) {
    case OpId::neg: return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    case OpId::abs: return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
    case OpId::relu: return x > 0 ? x : 0;
    case OpId::sign: return (0 < x) - (x < 0);
    default: return 0;
  }
}

void unary(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  for (int64_t i = 0; i < out.numel; ++i) {
    if (is_float_value(x)) store_f(out, i, unary_float(instr.op, load_f(x, i)));
    else store_i(out, i, unary_int(instr.op, load_i(x, i)));
  }
}

void predicate(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  for (int64_t i = 0; i < out.numel; ++i) {
    bool r = false;
    if (instr.op == OpId::logical_not) r = is_float_value(x) ? load_f(x, i) == 0 : load_i(x, i) == 0;
    else if (is_float_value(x)) r = instr.op == OpId::isnan ? std::isnan(load_f(x, i)) : std::isinf(load_f(x, i));
    store_i(out, i, r);
  }
}

double binary_float(OpId op, double a, double b) {
  switch (op) {
    case OpId::add: return a + b;
    case OpId::sub: return a - b;
    case OpId::mul: return a * b;
    case OpId::div: return a / b;
    case OpId::pow: return std::pow(a, b);
    case OpId::maximum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
    case OpId::minimum: return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
    case OpId::remainder: {
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    default: return 0;
  }
}

int64_t int_pow(const ir::Instr& instr, int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return exponent % 2 == 0 ? 1 : -1;
    kernel_error(instr, "integers to negative integer powers are not allowed (exponent " +
                            std::to_string(exponent) + ")");
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return static_cast<int64_t>(result);
}

int64_t binary_int(const ir::Instr& instr, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (instr.op) {
    case OpId::add: return static_cast<int64_t>(ua + ub);
    case OpId::sub: return static_cast<int64_t>(ua - ub);
    case OpId::mul: return static_cast<int64_t>(ua * ub);
    case OpId::pow: return int_pow(instr, a, b);
    case OpId::maximum: return a > b ? a : b;
    case OpId::minimum: return a < b ? a : b;
    case OpId::div:
    case OpId::remainder: {
      if (b == 0) kernel_error(instr, "integer division by zero");
      if (b == -1) return instr.op == OpId::div ? static_cast<int64_t>(0 - ua) : 0;
      if (instr.op == OpId::div) return a / b;  // truncates, like C
      int64_t r = a % b;
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    default: return 0;
  }
}

void binary(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& a = *in[0];
  const Value& b = *in[1];
  for (int64_t i = 0; i < out.numel; ++i) {
    if (is_float_value(a)) store_f(out, i, binary_float(instr.op, load_f(a, i), load_f(b, i)));
    else store_i(out, i, binary_int(instr, load_i(a, i), load_i(b, i)));
  }
}

template <class T>
bool compare_values(OpId op, T a, T b) {
  switch (op) {
    case OpId::eq: return a == b;
    case OpId::ne: return a != b;
    case OpId::lt: return a < b;
    case OpId::le: return a <= b;
    case OpId::gt: return a > b;
    case OpId::ge: return a >= b;
    default: return false;
  }
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
  for (int64_t i = 0; i < out.numel; ++i) {
    bool a = load_i(*in[0], i) != 0, b = load_i(*in[1], i) != 0;
    bool r = instr.op == OpId::logical_and ? (a && b) : instr.op == OpId::logical_or ? (a || b) : (a != b);
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
      default: break;
    }
  }
  table[static_cast<int>(OpId::constant)] = constant;
  table[static_cast<int>(OpId::iota)] = iota;
}

}  // namespace xlite::backends::reference
