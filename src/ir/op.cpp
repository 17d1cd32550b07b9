#include "ir/op.h"

#include <array>
#include <charconv>

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

std::string blame_message(const char* origin, OpId op, std::string_view message) {
  const std::string_view ir_name = op_name(op);
  const std::string_view name = origin && *origin ? std::string_view(origin) : ir_name;
  std::string text = "[";
  text.append(name).append("] ").append(message);
  if (name != ir_name) text.append(" (in ").append(ir_name).append(")");
  return text;
}

std::string number_text(double v) {
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::string(text, end);
}

}  // namespace xlite::ir
