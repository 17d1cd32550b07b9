#include "ir/node.h"

#include "ir/hash.h"

namespace xlite::ir {
namespace {
uint64_t type_hash(uint64_t h, const Shape& shape, DType dtype) {
  h = hash_mix(h, static_cast<uint64_t>(dtype));
  h = hash_mix(h, shape.size());
  for (int64_t d : shape) h = hash_mix(h, static_cast<uint64_t>(d));
  return h;
}
}  // namespace

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

NodePtr make_node(OpId op, std::vector<NodePtr> operands, Attrs attrs, const char* origin, bool requires_grad) {
  std::vector<TypedShape> types;
  types.reserve(operands.size());
  for (const auto& operand : operands) types.push_back({operand->shape, operand->dtype});
  TypedShape result = infer_type(op, types, attrs);

  uint64_t h = hash_mix(static_cast<uint64_t>(op), attrs.hash());
  for (const auto& operand : operands) h = hash_mix(h, operand->hash);
  h = type_hash(h, result.shape, result.dtype);
  auto node = std::make_shared<Node>();
  node->op = op;
  node->operands = std::move(operands);
  node->attrs = std::move(attrs);
  node->shape = std::move(result.shape);
  node->dtype = result.dtype;
  node->hash = h;
  node->origin = origin;
  node->requires_grad = requires_grad;
  return node;
}

NodePtr make_identity(NodePtr value, const char* origin, bool requires_grad) {
  Attrs attrs;
  attrs.set_dtype(AttrKey::dtype, value->dtype);
  return make_node(OpId::convert, {std::move(value)}, std::move(attrs), origin, requires_grad);
}

NodePtr make_parameter(BufferPtr data, Shape shape, DType dtype, bool requires_grad) {
  auto node = std::make_shared<Node>();
  node->requires_grad = requires_grad;
  node->op = OpId::parameter;
  node->hash = type_hash(static_cast<uint64_t>(OpId::parameter), shape, dtype);
  node->shape = std::move(shape);
  node->dtype = dtype;
  node->data = std::move(data);
  return node;
}

}  // namespace xlite::ir
