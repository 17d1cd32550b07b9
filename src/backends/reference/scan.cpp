// Reference scans: the running sum, product, maximum or minimum along one dim. Floats accumulate in double
// (16-bit floats round only when stored); integers wrap like two's complement; a NaN stays in a running
// maximum or minimum from where it appears, like PyTorch's cummax.
#include <cmath>

#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {
using ir::ScanOp;

double step_float(ScanOp op, double acc, double v) {
  switch (op) {
    case ScanOp::cumsum: return acc + v;
    case ScanOp::cumprod: return acc * v;
    case ScanOp::cummax: return std::isnan(acc) || std::isnan(v) ? NAN : (v > acc ? v : acc);
    case ScanOp::cummin: return std::isnan(acc) || std::isnan(v) ? NAN : (v < acc ? v : acc);
  }
  return acc;
}

int64_t step_integer(ScanOp op, int64_t acc, int64_t v) {
  const auto ua = static_cast<uint64_t>(acc), uv = static_cast<uint64_t>(v);
  switch (op) {
    case ScanOp::cumsum: return static_cast<int64_t>(ua + uv);
    case ScanOp::cumprod: return static_cast<int64_t>(ua * uv);
    case ScanOp::cummax: return v > acc ? v : acc;
    case ScanOp::cummin: return v < acc ? v : acc;
  }
  return acc;
}

void scan(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const int64_t dim = ir::DimAttrs::of(instr.attrs).dim;
  const ScanOp op = ir::scan_op(instr.op);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
  for (size_t d = dim + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t n = x.shape[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      if (is_floating(x.dtype)) {
        double acc = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double v = load_f(x, base + k * inner);
          acc = k == 0 ? v : step_float(op, acc, v);
          store_f(out, base + k * inner, acc);
        }
      } else {
        int64_t acc = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t v = load_i(x, base + k * inner);
          acc = k == 0 ? v : step_integer(op, acc, v);
          store_i(out, base + k * inner, acc);
        }
      }
    }
  }
}

}  // namespace

void register_scan_kernels(KernelTable& table) {
  for (ir::OpId op : {ir::OpId::cumsum, ir::OpId::cumprod, ir::OpId::cummax, ir::OpId::cummin})
    table[static_cast<int>(op)] = scan;
}

}  // namespace xlite::backends::reference
