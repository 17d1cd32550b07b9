#pragma once
// What the layers' constructors share: initial parameter values, and sizes checked when a layer is made, so
// that a bad size names the layer rather than failing in an op at the first forward.
#include <cstdint>
#include <optional>
#include <vector>

#include "xlite/tensor.h"

namespace xlite::nn {

// U(-bound, bound) from the global generator, PyTorch's default for weights and biases.
Tensor uniform(const Shape& shape, double bound);
// The tensor with its value computed, so that a new parameter holds data rather than a pending graph.
Tensor materialized(Tensor t);
// A layer's bias as the ops take it: none when the layer was made without one.
inline std::optional<Tensor> optional_bias(const Tensor& bias) {
  return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
}

// (height, width) from one value (both) or two; anything else, or a value below `least`, raises
// "[module] what must be one or two values >= least, got [..]".
std::vector<int64_t> height_width(const char* module, const char* what, std::vector<int64_t> values, int64_t least);

}  // namespace xlite::nn
