// xlite-check-math: the largest relative error of a compiled f32 transcendental over every finite f32
// (or every STRIDE-th one), against the double-precision C library.
//
//   xlite-check-math OP [--stride S] [--limit L]
//
// OP is one of exp, log, tanh, sin, cos, tan, erf, sigmoid. Inputs go through the selected backend
// (XLITE_BACKEND, the cpu backend by default) in chunks of 16M elements. Exits 1 when the worst relative
// error is above L (default 1e-6, the bound the compiler issue sets), 2 on bad usage. With XLITE_FAST_MATH=1
// it checks fast math (xlite/math_mode.h; its bound is 4e-4), where values below the smallest normal float
// may be read as zero.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/math_error.h"
#include "xlite/xlite.h"

namespace xl = xlite;

namespace {
struct Op {
  std::function<xl::Tensor(const xl::Tensor&)> compiled;
  double (*reference)(double);
};

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table = {
      {"exp", {[](const xl::Tensor& x) { return xl::exp(x); }, [](double x) { return std::exp(x); }}},
      {"log", {[](const xl::Tensor& x) { return xl::log(x); }, [](double x) { return std::log(x); }}},
      {"tanh", {[](const xl::Tensor& x) { return xl::tanh(x); }, [](double x) { return std::tanh(x); }}},
      {"sin", {[](const xl::Tensor& x) { return xl::sin(x); }, [](double x) { return std::sin(x); }}},
      {"cos", {[](const xl::Tensor& x) { return xl::cos(x); }, [](double x) { return std::cos(x); }}},
      {"tan", {[](const xl::Tensor& x) { return xl::tan(x); }, [](double x) { return std::tan(x); }}},
      {"erf", {[](const xl::Tensor& x) { return xl::erf(x); }, [](double x) { return std::erf(x); }}},
      {"sigmoid",
       {[](const xl::Tensor& x) { return xl::sigmoid(x); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }}},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !ops().count(argv[1])) {
    std::cerr << "usage: xlite-check-math OP [--stride S] [--limit L]; OP: exp log tanh sin cos tan erf sigmoid\n";
    return 2;
  }
  const Op& op = ops().at(argv[1]);
  uint64_t stride = 1;
  double limit = 1e-6;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--stride")
      stride = std::max<uint64_t>(1, std::strtoull(argv[i + 1], nullptr, 10));
    else if (flag == "--limit")
      limit = std::atof(argv[i + 1]);
    else {
      std::cerr << "xlite-check-math: unknown option " << flag << "\n";
      return 2;
    }
  }
  const bool fast = xl::is_fast_math();  // XLITE_FAST_MATH=1: fast math's measure
  const size_t chunk = size_t{1} << 24;
  std::vector<float> xs;
  xs.reserve(chunk);
  double worst = 0;
  float worst_x = 0, worst_got = 0;
  uint64_t checked = 0;
  auto flush = [&] {
    if (xs.empty()) return;
    std::vector<float> got = op.compiled(xl::tensor(xs, {static_cast<int64_t>(xs.size())})).to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = op.reference(xs[i]);
      double err = fast ? xlite::backends::cpu::math::fast_math_error(xs[i], got[i], want,
                                                                      op.reference(std::copysign(0.0, xs[i])))
                        : xlite::backends::cpu::math::relative_error(got[i], want);
      if (err > worst) {
        worst = err;
        worst_x = xs[i];
        worst_got = got[i];
      }
    }
    checked += xs.size();
    xs.clear();
  };
  // Every sign and exponent, both infinities and a NaN: bit patterns 0 .. 0x7f800000 and their negatives.
  for (uint64_t bits = 0; bits <= 0x7f800000u; bits += stride) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      uint32_t pattern = static_cast<uint32_t>(bits) | sign;
      float x;
      std::memcpy(&x, &pattern, sizeof x);
      xs.push_back(x);
    }
    if (xs.size() >= chunk) flush();
  }
  xs.push_back(INFINITY);
  xs.push_back(-INFINITY);
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  flush();
  std::cout << argv[1] << ": " << checked << " inputs, worst relative error " << worst << " at x = " << worst_x
            << " (got " << worst_got << ", want " << op.reference(worst_x) << "), limit " << limit << "\n";
  return worst <= limit ? 0 : 1;
}
