#pragma once
// A value an op cannot take, found by generated code while it runs: it is reported (through the target's
// status word) instead of being used, and the code goes on with a harmless stand-in. Generated code
// stores these numbers.
#include <cstdint>

namespace xlite::backends::codegen {

enum class ElementFailure : int64_t {
  none = 0,
  index_out_of_range = 1,  // value: the index, size: the size of the dim it indexed
  negative_power = 2,      // value: the exponent
  division_by_zero = 3,
};

}  // namespace xlite::backends::codegen
