#include "ir/op.h"

#include <array>

namespace xlite::ir {
namespace {
constexpr std::array<OpInfo, kNumOps> kOps = {{
#define XLITE_OP_INFO(id, name, arity, cls) {name, arity, OpClass::cls},
    XLITE_IR_OPS(XLITE_OP_INFO)
#undef XLITE_OP_INFO
}};
}  // namespace

const OpInfo& op_info(OpId op) { return kOps[static_cast<size_t>(op)]; }

bool op_from_name(std::string_view name, OpId* op) {
  for (int i = 0; i < kNumOps; ++i) {
    if (kOps[i].name == name) {
      *op = static_cast<OpId>(i);
      return true;
    }
  }
  return false;
}

}  // namespace xlite::ir
