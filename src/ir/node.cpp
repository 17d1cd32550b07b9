#include "ir/node.h"

#include "core/check.h"
#include "core/debug_output.h"
#include "ir/op_attrs.h"
#include "xlite/error.h"

namespace xlite::ir {

Node::~Node() {
  std::vector<NodePtr> orphans = std::move(operands);
  while (!orphans.empty()) {
    NodePtr node = std::move(orphans.back());
    orphans.pop_back();
    if (node.use_count() == 1) {
      auto& inner = const_cast<Node&>(*node).operands;  // we hold the last reference
      for (auto& operand : inner) orphans.push_back(std::move(operand));
      inner.clear();
    }
  }
}

namespace {
[[noreturn]] void fail_mixed_devices(OpId op, std::span<const NodePtr> operands, const char* origin) {
  const Device first = operands[0]->device;
  for (const NodePtr& operand : operands)
    if (operand->device != first)
      throw Error(blame_message(origin, op,
                                "operands are on different devices, " + first.str() + " and " + operand->device.str() +
                                    " (move one with .to(device))"));
  XLITE_FAIL("mixed devices that are not mixed");
}

}  // namespace

std::shared_ptr<Node> make_node(OpId op, std::vector<NodePtr> operands, Attrs attrs, const char* origin,
                                bool requires_grad, std::optional<Device> device) {
  // Reused: every op types a node, and infer_type never builds another one.
  thread_local std::vector<OperandType> types;
  types.clear();
  bool one_device = true;
  for (const auto& operand : operands) {
    types.push_back({operand->shape, operand->dtype});
    one_device = one_device && operand->device == operands[0]->device;
  }
  if (!one_device) [[unlikely]]
    fail_mixed_devices(op, operands, origin);
  // A transfer's destination, a leaf's own device, else the one its operands share.
  Device placed;
  if (op == OpId::transfer || operands.empty()) {
    XLITE_CHECK(op != OpId::transfer || device.has_value(), "a transfer node needs its destination device");
    placed = device.value_or(Device{});
  } else {
    placed = operands[0]->device;
    XLITE_CHECK(!device || *device == placed, "a node of " + std::string(op_name(op)) + " placed on " + device->str() +
                                                  " reads values on " + placed.str());
  }
  TypedShape result = [&] {
    try {
      return infer_type(op, types, attrs);
    } catch (const Error& e) {
      // The shape rule named the IR op; name the public op the user called.
      const std::string prefix = "[" + std::string(op_name(op)) + "] ";
      std::string_view message = e.what();
      if (message.substr(0, prefix.size()) != prefix) throw;
      throw Error(blame_message(origin, op, message.substr(prefix.size())));
    }
  }();
  auto node = std::make_shared<Node>();
  node->op = op;
  node->operands = std::move(operands);
  node->attrs = std::move(attrs);
  node->shape = std::move(result.shape);
  node->dtype = result.dtype;
  node->device = placed;
  node->origin = origin;
  node->requires_grad = requires_grad;
  if (debug_output::level() >= 1) [[unlikely]]
    node->site = std::make_shared<const call_site::Stack>(call_site::Stack::capture());
  return node;
}

std::shared_ptr<Node> make_identity(NodePtr value, const char* origin, bool requires_grad) {
  const DType dtype = value->dtype;
  return make_node(OpId::convert, {std::move(value)}, ConvertAttrs{.dtype = dtype}.to_attrs(), origin, requires_grad);
}

std::shared_ptr<Node> make_parameter(BufferPtr data, Shape shape, DType dtype, bool requires_grad) {
  auto node = std::make_shared<Node>();
  node->requires_grad = requires_grad;
  node->op = OpId::parameter;
  node->shape = std::move(shape);
  node->dtype = dtype;
  node->device = data ? data->device() : Device{};
  node->data = std::move(data);
  return node;
}

}  // namespace xlite::ir
