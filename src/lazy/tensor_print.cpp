// Tensors as PyTorch prints them (torch/_tensor_str.py's rules): one format for every element, chosen from
// the values; nested brackets with aligned columns; dims longer than 2 * edgeitems summarised with "..."
// once the tensor has more than `threshold` elements.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "lazy/tensor_print.h"

#include "core/runtime_context.h"
#include "xlite/error.h"
#include "xlite/print.h"

namespace xlite {
namespace {
struct PrintSettings final : RuntimeState {
  std::mutex mutex;
  PrintOptions options;
  std::string describe() const override { return "precision, threshold, edgeitems, linewidth"; }
};
PrintSettings& settings() { return runtime_context::state<PrintSettings>("print options"); }

// The positions printed along each dim (-1 stands for the "..." of a summarised dim).
std::vector<int64_t> shown(int64_t n, bool summarise, int64_t edge) {
  std::vector<int64_t> at;
  if (summarise && n > 2 * edge) {
    for (int64_t i = 0; i < edge; ++i) at.push_back(i);
    at.push_back(-1);
    for (int64_t i = n - edge; i < n; ++i) at.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) at.push_back(i);
  }
  return at;
}

std::string printf_string(const char* format, int precision, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, precision, v);
  return buffer;
}

// One element format for the whole tensor, chosen from the values printed.
class Formatter {
 public:
  Formatter(const HostValues& values, const std::vector<int64_t>& printed, DType dtype, const PrintOptions& options)
      : values_(values), dtype_(dtype), precision_(options.precision) {
    if (is_floating(dtype)) {
      double lo = INFINITY, hi = 0;
      bool whole = true;
      for (int64_t i : printed) {
        const double v = values.floats[i];
        if (!std::isfinite(v) || v == 0) continue;
        lo = std::min(lo, std::fabs(v));
        hi = std::max(hi, std::fabs(v));
        whole = whole && std::ceil(v) == v;
      }
      const bool any = hi > 0;
      if (options.sci_mode >= 0) {
        sci_ = options.sci_mode == 1;
      } else if (any) {
        sci_ = hi / lo > 1000 || hi > 1e8 || (!whole && lo < 1e-4);
      }
      whole_ = whole && !sci_;
    }
    // As PyTorch: a float column is as wide as its widest finite non-zero value; nan, inf and 0 do not widen it.
    for (int64_t i : printed) {
      if (is_floating(dtype) && (!std::isfinite(values.floats[i]) || values.floats[i] == 0)) continue;
      width_ = std::max(width_, format(i).size());
    }
  }

  // Element i, right-aligned to the column's width (a wider one, such as -inf, as it is).
  std::string padded(int64_t i) const {
    std::string s = format(i);
    return s.size() >= width_ ? s : std::string(width_ - s.size(), ' ') + s;
  }
  size_t width() const { return width_; }

 private:
  std::string format(int64_t i) const {
    if (dtype_ == DType::bool_) return values_.integers[i] != 0 ? "True" : "False";
    if (!is_floating(dtype_)) return std::to_string(values_.integers[i]);
    const double v = values_.floats[i];
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_) return printf_string("%.*e", precision_, v);
    if (whole_) return printf_string("%.*f", 0, v) + ".";
    return printf_string("%.*f", precision_, v);
  }

  const HostValues& values_;
  DType dtype_;
  int precision_;
  bool sci_ = false, whole_ = false;
  size_t width_ = 1;
};

struct Printer {
  const Shape& shape;
  const PrintOptions& options;
  bool summarise;
  const Formatter* formatter = nullptr;

  // The flat positions of the elements printed, in order.
  void collect(size_t dim, int64_t base, std::vector<int64_t>& out) const {
    if (dim == shape.size()) {
      out.push_back(base);
      return;
    }
    int64_t stride = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
    for (int64_t i : shown(shape[dim], summarise, options.edgeitems))
      if (i >= 0) collect(dim + 1, base + i * stride, out);
  }

  std::string print(size_t dim, int64_t base, size_t indent) const {
    if (dim == shape.size()) return formatter->padded(base);
    int64_t stride = 1;
    for (size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
    const std::vector<int64_t> at = shown(shape[dim], summarise, options.edgeitems);
    std::string s = "[";
    if (dim + 1 == shape.size()) {
      // The last dim: elements wrapped to the line width.
      const int64_t room = options.linewidth - static_cast<int64_t>(indent);
      const size_t per_line =
          static_cast<size_t>(std::max<int64_t>(1, room / static_cast<int64_t>(formatter->width() + 2)));
      for (size_t k = 0; k < at.size(); ++k) {
        if (k > 0) s += k % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
        s += at[k] < 0 ? " ..." : formatter->padded(base + at[k] * stride);
      }
      return s + "]";
    }
    const std::string separator = "," + std::string(shape.size() - dim - 1, '\n') + std::string(indent + 1, ' ');
    for (size_t k = 0; k < at.size(); ++k) {
      if (k > 0) s += separator;
      s += at[k] < 0 ? "..." : print(dim + 1, base + at[k] * stride, indent + 1);
    }
    return s + "]";
  }
};
}  // namespace

void set_printoptions(const PrintOptions& options) {
  if (options.precision < 0 || options.threshold < 0 || options.edgeitems < 1 || options.linewidth < 1 ||
      options.sci_mode < -1 || options.sci_mode > 1)
    throw Error(
        "[set_printoptions] precision and threshold must be >= 0, edgeitems and linewidth >= 1, sci_mode -1, "
        "0 or 1");
  std::lock_guard lock(settings().mutex);
  settings().options = options;
}

PrintOptions get_printoptions() {
  std::lock_guard lock(settings().mutex);
  return settings().options;
}

std::string format_tensor(const HostValues& values, const Shape& shape, DType dtype, Device device) {
  const PrintOptions options = get_printoptions();
  const int64_t count = numel(shape);
  Printer printer{shape, options, count > options.threshold};
  std::vector<int64_t> printed;
  printer.collect(0, 0, printed);
  const Formatter formatter(values, printed, dtype, options);
  printer.formatter = &formatter;
  std::string s = "tensor(" + printer.print(0, 0, 7);
  if (count == 0 && shape.size() != 1) s += ", size=" + shape_str(shape);
  if (dtype != DType::f32 && dtype != DType::i64 && dtype != DType::bool_)
    s += ", dtype=" + std::string(dtype_name(dtype));
  if (device != xlite::device()) s += ", device=" + device.str();
  return s + ")";
}

}  // namespace xlite
