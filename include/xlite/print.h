#pragma once
// How tensors print (std::cout << t), as PyTorch prints them: aligned columns, "1." for whole floats,
// fixed or scientific notation chosen from the values, "nan" and "inf", and large tensors summarised with
// "..." (torch.set_printoptions). Printing reads the values: it syncs.
#include <cstdint>
#include <string>

#include "xlite/tensor.h"

namespace xlite {

struct PrintOptions {
  int precision = 4;         // digits after the point
  int64_t threshold = 1000;  // more elements than this are summarised
  int64_t edgeitems = 3;     // elements kept at each end of a summarised dim
  int64_t linewidth = 80;    // characters per line before a row wraps
  int sci_mode = -1;         // -1: chosen from the values; 0: never; 1: always
};

void set_printoptions(const PrintOptions& options);  // process-wide, like torch.set_printoptions
PrintOptions get_printoptions();

// "tensor([...])" with ", dtype=f64" unless the dtype is f32, i64 or bool, and the device unless it is the
// current default one.
std::string to_string(const Tensor& t);

}  // namespace xlite
