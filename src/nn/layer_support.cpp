#include "nn/layer_support.h"

#include <string>

#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/lazy.h"
#include "xlite/ops.h"

namespace xlite::nn {

Tensor uniform(const Shape& shape, double bound) { return rand(shape) * (2 * bound) - bound; }

Tensor materialized(Tensor t) {
  sync({t});
  return t;
}

std::vector<int64_t> height_width(const char* module, const char* what, std::vector<int64_t> values, int64_t least) {
  const std::vector<int64_t> given = values;
  if (values.size() == 1) values.push_back(values[0]);
  if (values.size() != 2 || values[0] < least || values[1] < least)
    throw Error("[" + std::string(module) + "] " + what + " must be one or two values >= " + std::to_string(least) +
                ", got " + shape_str(given));
  return values;
}

}  // namespace xlite::nn
