#include "ir/node.h"

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

std::shared_ptr<Node> make_node(OpId op, std::vector<NodePtr> operands, Attrs attrs, const char* origin,
                                bool requires_grad) {
  // Reused: every op types a node, and infer_type never builds another one.
  thread_local std::vector<OperandType> types;
  types.clear();
  for (const auto& operand : operands) types.push_back({operand->shape, operand->dtype});
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
  node->origin = origin;
  node->requires_grad = requires_grad;
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
  node->data = std::move(data);
  return node;
}

}  // namespace xlite::ir
