#include "lazy/graph_builder.h"

#include <array>
#include <unordered_map>
#include <utility>

namespace xlite::lazy {
namespace {
// A map to int32_t for the few keys of an eager op's graph: the first kInline entries live inside the
// map and are found by a linear search, so a small graph costs no allocation per key; past them (whole
// training steps have thousands of nodes) entries go to a hash map.
template <class Key>
class SmallMap {
 public:
  const int32_t* find(Key key) const {
    for (size_t i = 0; i < inline_count_; ++i)
      if (inline_[i].first == key) return &inline_[i].second;
    auto it = spill_.find(key);
    return it == spill_.end() ? nullptr : &it->second;
  }
  void insert(Key key, int32_t value) {
    if (inline_count_ < kInline) inline_[inline_count_++] = {key, value};
    else spill_.emplace(key, value);
  }

 private:
  static constexpr size_t kInline = 16;
  std::array<std::pair<Key, int32_t>, kInline> inline_{};
  size_t inline_count_ = 0;
  std::unordered_map<Key, int32_t> spill_;
};
}  // namespace

BuiltGraph build_graph(const std::vector<ir::NodePtr>& roots) {
  BuiltGraph built;
  SmallMap<const ir::Node*> position;
  SmallMap<const Buffer*> parameter_of_buffer;
  SmallMap<int32_t> output_slot;  // instruction -> position in outputs

  // Iterative post-order walk: deep chains (long training loops) must not overflow the stack.
  struct Frame {
    const ir::Node* node;
    size_t next_operand;
  };
  std::vector<Frame> stack;
  // Room for a one-op graph without growing (an eager op's graph has a few instructions).
  stack.reserve(8);
  built.graph.instrs.reserve(8);
  built.arguments.reserve(4);
  built.leaves_per_argument.reserve(4);
  built.root_outputs.reserve(roots.size());
  auto emit = [&](const ir::Node* node) {
    const BufferPtr& data = node->op == ir::OpId::parameter ? node->data : node->computed;
    if (data) {
      if (const int32_t* existing = parameter_of_buffer.find(data.get())) {
        position.insert(node, *existing);
        ++built.leaves_per_argument[built.graph.instrs[*existing].attrs.get_int(ir::AttrKey::index)];
        return;
      }
      ir::Instr instr{ir::OpId::parameter, {}, {}, node->shape, node->dtype};
      instr.attrs.set_int(ir::AttrKey::index, static_cast<int64_t>(built.arguments.size()));
      built.arguments.push_back(data);
      built.leaves_per_argument.push_back(1);
      const auto at = static_cast<int32_t>(built.graph.instrs.size());
      parameter_of_buffer.insert(data.get(), at);
      position.insert(node, at);
      built.graph.instrs.push_back(std::move(instr));
      return;
    }
    ir::Instr instr{node->op, {}, node->attrs, node->shape, node->dtype, node->origin};
    instr.operands.reserve(node->operands.size());
    for (const auto& operand : node->operands) instr.operands.push_back(*position.find(operand.get()));
    position.insert(node, static_cast<int32_t>(built.graph.instrs.size()));
    built.graph.instrs.push_back(std::move(instr));
  };

  for (const auto& root : roots) {
    if (!position.find(root.get())) {
      stack.push_back({root.get(), 0});
      while (!stack.empty()) {
        Frame& frame = stack.back();
        if (!frame.node->computed && frame.next_operand < frame.node->operands.size()) {
          const ir::Node* operand = frame.node->operands[frame.next_operand++].get();
          if (!position.find(operand)) stack.push_back({operand, 0});
        } else {
          emit(frame.node);
          stack.pop_back();
        }
      }
    }
    const int32_t out = *position.find(root.get());
    const int32_t* slot = output_slot.find(out);
    if (!slot) {
      output_slot.insert(out, static_cast<int32_t>(built.graph.outputs.size()));
      built.graph.outputs.push_back(out);
      slot = output_slot.find(out);
    }
    built.root_outputs.push_back(*slot);
  }
  built.graph.num_parameters = static_cast<int64_t>(built.arguments.size());
  return built;
}

}  // namespace xlite::lazy
