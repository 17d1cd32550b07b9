// xlite-checkpoint-interop: the C++ half of the checkpoint interop test with Python's safetensors package
// and PyTorch (tests/python/safetensors_interop.py runs it).
//
//   xlite-checkpoint-interop write PATH [--without DTYPE]...   xlite::save of the known tensors
//   xlite-checkpoint-interop check PATH                        xlite::load of a file written by Python,
//                                                              every name, dtype, shape and value exact
//
// The known tensors: for each dtype xlite has, "<dtype>" (a few dims), "<dtype>_scalar" (0-dim),
// "<dtype>_empty" (a zero dim) and "<dtype>_special" (infinities, NaN, -0, subnormals, extremes).
// Element i (row-major) of a tensor holds value(dtype, start + i), start being 4 for the scalar and 0
// otherwise; "_special" tensors hold the listed values. The Python script defines the very same values
// the same way: change both together.
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "xlite/xlite.h"

namespace {
using xlite::DType;
using xlite::Shape;

// ---- The known values (mirrored in tests/python/safetensors_interop.py) ----

struct DTypeCase {
  const char* name;  // safetensors: F32 F64 F16 BF16 I32 I64 U8 BOOL
  DType dtype;
  Shape shape;        // of "<name>"
  Shape empty_shape;  // of "<name>_empty"
};

const std::vector<DTypeCase>& dtype_cases() {
  static const std::vector<DTypeCase> cases = {
      {"f32", DType::f32, {2, 3, 4}, {0}}, {"f64", DType::f64, {5}, {2, 0}},
      {"f16", DType::f16, {4, 4}, {0, 3}}, {"bf16", DType::bf16, {3, 5}, {2, 0, 3}},
      {"i32", DType::i32, {7, 1}, {0}},    {"i64", DType::i64, {2, 3}, {1, 0}},
      {"u8", DType::u8, {4, 8}, {0, 4}},   {"bool", DType::bool_, {3, 3}, {0}},
  };
  return cases;
}

constexpr int64_t kScalarStart = 4;

bool floating(DType d) { return xlite::is_floating(d); }

// value(dtype, n) for the floating dtypes. f64 and f32 use every mantissa bit (f32 is the f64 value rounded
// to nearest); the f16 and bf16 values are exact in 16 bits, so no rounding rule is involved.
double float_value(DType d, int64_t n) {
  switch (d) {
    case DType::f64: return static_cast<double>(n - 10) * 0.1;
    case DType::f32: return static_cast<float>(static_cast<double>(n - 10) * 0.1);
    case DType::f16: return static_cast<double>(n - 10) * 0.125;
    case DType::bf16: return static_cast<double>(n - 10) * 0.375;
    default: break;
  }
  throw xlite::Error("[checkpoint-interop] no float values for " + std::string(xlite::dtype_name(d)));
}

// value(dtype, n) for the integer dtypes and bool (0 or 1). The i32 and i64 values reach near their limits.
int64_t int_value(DType d, int64_t n) {
  switch (d) {
    case DType::i64: return (n - 6) * 1537228672809129301LL;
    case DType::i32: return (n - 6) * 357913941LL;
    case DType::u8: return (n * 37 + 11) % 256;
    case DType::bool_: return n % 3 == 1 ? 1 : 0;
    default: break;
  }
  throw xlite::Error("[checkpoint-interop] no integer values for " + std::string(xlite::dtype_name(d)));
}

std::vector<double> float_specials(DType d) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  switch (d) {
    case DType::f64: return {inf, -inf, nan, -0.0, 0x1p-1074, 0x1.fffffffffffffp1023, 0x1p-1022};
    case DType::f32: return {inf, -inf, nan, -0.0, 0x1p-149, 0x1.fffffep127, 0x1p-126};
    case DType::f16: return {inf, -inf, nan, -0.0, 0x1p-24, 0x1.ffcp15, 0x1p-14};
    case DType::bf16: return {inf, -inf, nan, -0.0, 0x1p-133, 0x1.fep127, 0x1p-126};
    default: break;
  }
  throw xlite::Error("[checkpoint-interop] no float specials for " + std::string(xlite::dtype_name(d)));
}

std::vector<int64_t> int_specials(DType d) {
  switch (d) {
    case DType::i64: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0};
    case DType::i32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -1, 0};
    case DType::u8: return {0, 255, 128, 127};
    case DType::bool_: return {1, 0};
    default: break;
  }
  throw xlite::Error("[checkpoint-interop] no integer specials for " + std::string(xlite::dtype_name(d)));
}

// One expected tensor: its values as doubles (floating dtypes) or int64 (the others).
struct Expected {
  DType dtype;
  Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
};

std::map<std::string, Expected> expected_tensors() {
  std::map<std::string, Expected> out;
  for (const DTypeCase& c : dtype_cases()) {
    auto add = [&](const std::string& name, const Shape& shape, int64_t start) {
      Expected e{c.dtype, shape, {}, {}};
      for (int64_t i = 0; i < xlite::numel(shape); ++i) {
        if (floating(c.dtype))
          e.floats.push_back(float_value(c.dtype, start + i));
        else
          e.ints.push_back(int_value(c.dtype, start + i));
      }
      out.emplace(name, std::move(e));
    };
    add(c.name, c.shape, 0);
    add(std::string(c.name) + "_scalar", {}, kScalarStart);
    add(std::string(c.name) + "_empty", c.empty_shape, 0);
    Expected special{c.dtype, {}, {}, {}};
    if (floating(c.dtype))
      special.floats = float_specials(c.dtype);
    else
      special.ints = int_specials(c.dtype);
    special.shape = {static_cast<int64_t>(special.floats.size() + special.ints.size())};
    out.emplace(std::string(c.name) + "_special", std::move(special));
  }
  return out;
}

// ---- write ----

template <class T, class V>
std::vector<T> cast_all(const std::vector<V>& values) {
  std::vector<T> out;
  for (V v : values) out.push_back(static_cast<T>(v));
  return out;
}

xlite::Tensor make_tensor(const Expected& e) {
  switch (e.dtype) {
    case DType::f64: return xlite::tensor(e.floats, e.shape);
    case DType::f32: return xlite::tensor(cast_all<float>(e.floats), e.shape);
    // Every f16 and bf16 value is exact in f32 and in 16 bits, so the conversion cannot round.
    case DType::f16:
    case DType::bf16: return xlite::tensor(cast_all<float>(e.floats), e.shape).to(e.dtype);
    case DType::i64: return xlite::tensor(e.ints, e.shape);
    case DType::i32: return xlite::tensor(cast_all<int32_t>(e.ints), e.shape);
    case DType::u8: return xlite::tensor(cast_all<uint8_t>(e.ints), e.shape);
    case DType::bool_: return xlite::tensor(cast_all<bool>(e.ints), e.shape);
  }
  throw xlite::Error("[checkpoint-interop] unknown dtype");
}

int write(const std::string& path, const std::set<std::string>& without) {
  std::map<std::string, xlite::Tensor> tensors;
  for (const auto& [name, e] : expected_tensors())
    if (!without.count(std::string(xlite::dtype_name(e.dtype)))) tensors.emplace(name, make_tensor(e));
  xlite::save(tensors, path);
  std::cout << "wrote " << tensors.size() << " tensors to " << path << "\n";
  return 0;
}

// ---- check ----

std::string show(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v << " (bits 0x" << std::hex << std::bit_cast<uint64_t>(v) << ")";
  return os.str();
}

// Exact: the same bits as doubles (so -0 differs from 0), any NaN matching any NaN. Every value of every
// floating dtype converts to double exactly.
bool same_float(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

int check(const std::string& path) {
  const auto expected = expected_tensors();
  const auto loaded = xlite::load(path);
  std::vector<std::string> problems;
  for (const auto& [name, t] : loaded)
    if (!expected.count(name)) problems.push_back("unexpected tensor '" + name + "'");
  for (const auto& [name, e] : expected) {
    auto it = loaded.find(name);
    if (it == loaded.end()) {
      problems.push_back("missing tensor '" + name + "'");
      continue;
    }
    const xlite::Tensor& t = it->second;
    if (t.dtype() != e.dtype) {
      problems.push_back("'" + name + "': dtype " + std::string(xlite::dtype_name(t.dtype())) + ", expected " +
                         std::string(xlite::dtype_name(e.dtype)));
      continue;
    }
    if (t.shape() != e.shape) {
      problems.push_back("'" + name + "': shape " + xlite::shape_str(t.shape()) + ", expected " +
                         xlite::shape_str(e.shape));
      continue;
    }
    if (floating(e.dtype)) {
      auto values = t.to_vector<double>();
      for (size_t i = 0; i < values.size(); ++i)
        if (!same_float(values[i], e.floats[i]))
          problems.push_back("'" + name + "'[" + std::to_string(i) + "] = " + show(values[i]) + ", expected " +
                             show(e.floats[i]));
    } else {
      auto values = t.to_vector<int64_t>();
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i] != e.ints[i])
          problems.push_back("'" + name + "'[" + std::to_string(i) + "] = " + std::to_string(values[i]) +
                             ", expected " + std::to_string(e.ints[i]));
    }
  }
  if (problems.empty()) {
    std::cout << "checked " << expected.size() << " tensors in " << path << ": all exact\n";
    return 0;
  }
  std::cerr << "xlite-checkpoint-interop: " << path << ": " << problems.size() << " mismatches\n";
  for (size_t i = 0; i < problems.size() && i < 50; ++i) std::cerr << "  " << problems[i] << "\n";
  return 1;
}

int usage() {
  std::cerr << "usage: xlite-checkpoint-interop write PATH [--without DTYPE]...\n"
               "       xlite-checkpoint-interop check PATH\n";
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 2 && args[0] == "check") return check(args[1]);
    if (args.size() >= 2 && args[0] == "write") {
      std::set<std::string> without;
      for (size_t i = 2; i < args.size(); i += 2) {
        if (args[i] != "--without" || i + 1 >= args.size()) return usage();
        without.insert(std::string(xlite::dtype_name(xlite::dtype_from_name(args[i + 1]))));
      }
      return write(args[1], without);
    }
    return usage();
  } catch (const xlite::Error& e) {
    std::cerr << "xlite-checkpoint-interop: " << e.what() << "\n";
    return 1;
  }
}
