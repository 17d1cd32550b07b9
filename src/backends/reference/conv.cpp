// Reference 2-D convolution: the textbook seven nested loops.
#include "backends/reference/kernels.h"
#include "ir/op_attrs.h"

namespace xlite::backends::reference {
namespace {
using ir::AttrKey;

void conv2d(const ir::Instr& instr, std::span<const Value* const> in, Value& out) {
  const Value& x = *in[0];
  const Value& w = *in[1];
  const auto& stride = ir::ConvAttrs::of(instr.attrs).stride;
  const auto& pad = ir::ConvAttrs::of(instr.attrs).lo;
  const auto& dilation = ir::ConvAttrs::of(instr.attrs).dilation;
  const int64_t groups = ir::ConvAttrs::of(instr.attrs).groups;
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t oh = out.shape[2], ow = out.shape[3], og = o / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = 0;
          int64_t g = oc / og;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t yi = y * stride[0] - pad[0] + i * dilation[0];
                int64_t xi = xo * stride[1] - pad[1] + j * dilation[1];
                if (yi < 0 || yi >= h || xi < 0 || xi >= wd) continue;
                acc += load_f(x, ((b * c + g * cg + ic) * h + yi) * wd + xi) *
                       load_f(w, ((oc * cg + ic) * kh + i) * kw + j);
              }
          store_f(out, ((b * o + oc) * oh + y) * ow + xo, acc);
        }
}
}  // namespace

void register_conv_kernels(KernelTable& table) { table[static_cast<int>(ir::OpId::conv2d)] = conv2d; }

}  // namespace xlite::backends::reference
