#include "lazy/graph_builder.h"

#include <unordered_map>

namespace xlite::lazy {

BuiltGraph build_graph(const std::vector<ir::NodePtr>& roots) {
  BuiltGraph built;
  std::unordered_map<const ir::Node*, int32_t> position;
  std::unordered_map<const Buffer*, int32_t> parameter_of_buffer;
  std::unordered_map<int32_t, int32_t> output_slot;  // instruction -> position in outputs

  // Iterative post-order walk: deep chains (long training loops) must not overflow the stack.
  struct Frame {
    const ir::Node* node;
    size_t next_operand;
  };
  std::vector<Frame> stack;
  auto emit = [&](const ir::Node* node) {
    const BufferPtr& data = node->op == ir::OpId::parameter ? node->data : node->computed;
    if (data) {
      auto [it, inserted] = parameter_of_buffer.try_emplace(data.get(), 0);
      if (!inserted) {
        position[node] = it->second;
        ++built.leaves_per_argument[built.graph.instrs[it->second].attrs.get_int(ir::AttrKey::index)];
        return;
      }
      ir::Instr instr{ir::OpId::parameter, {}, {}, node->shape, node->dtype};
      instr.attrs.set_int(ir::AttrKey::index, static_cast<int64_t>(built.arguments.size()));
      built.arguments.push_back(data);
      built.leaves_per_argument.push_back(1);
      it->second = static_cast<int32_t>(built.graph.instrs.size());
      position[node] = it->second;
      built.graph.instrs.push_back(std::move(instr));
      return;
    }
    ir::Instr instr{node->op, {}, node->attrs, node->shape, node->dtype, node->origin};
    instr.operands.reserve(node->operands.size());
    for (const auto& operand : node->operands) instr.operands.push_back(position.at(operand.get()));
    position[node] = static_cast<int32_t>(built.graph.instrs.size());
    built.graph.instrs.push_back(std::move(instr));
  };

  for (const auto& root : roots) {
    if (!position.count(root.get())) {
      stack.push_back({root.get(), 0});
      while (!stack.empty()) {
        Frame& frame = stack.back();
        if (!frame.node->computed && frame.next_operand < frame.node->operands.size()) {
          const ir::Node* operand = frame.node->operands[frame.next_operand++].get();
          if (!position.count(operand)) stack.push_back({operand, 0});
        } else {
          emit(frame.node);
          stack.pop_back();
        }
      }
    }
    int32_t out = position.at(root.get());
    auto [slot, inserted] = output_slot.try_emplace(out, static_cast<int32_t>(built.graph.outputs.size()));
    if (inserted) built.graph.outputs.push_back(out);
    built.root_outputs.push_back(slot->second);
  }
  built.graph.num_parameters = static_cast<int64_t>(built.arguments.size());
  return built;
}

}  // namespace xlite::lazy
