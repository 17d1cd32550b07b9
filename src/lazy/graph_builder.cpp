#include "lazy/graph_builder.h"

#include <array>
#include <memory>
#include <span>
#include <unordered_map>

#include "ir/op_attrs.h"

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
      if (inline_[i].key == key) return &inline_[i].value;
    if (!spill_) return nullptr;
    auto it = spill_->find(key);
    return it == spill_->end() ? nullptr : &it->second;
  }
  void insert(Key key, int32_t value) {
    if (inline_count_ < kInline) {
      inline_[inline_count_++] = {key, value};
      return;
    }
    if (!spill_) spill_ = std::make_unique<std::unordered_map<Key, int32_t>>();
    spill_->emplace(key, value);
  }

 private:
  static constexpr size_t kInline = 16;
  struct Item {
    Key key;
    int32_t value;
  };
  std::array<Item, kInline> inline_;  // uninitialised past inline_count_: an eager op's walk fills few
  size_t inline_count_ = 0;
  // Made on first spill: an eager op's walk makes three maps, and an empty unordered_map is not free to
  // make and destroy.
  std::unique_ptr<std::unordered_map<Key, int32_t>> spill_;
};

// Element-wise equality by a plain loop: std::equal on integers becomes a call to memcmp, which costs more
// than the few dims and operands an eager op's graph compares.
template <class T>
bool same(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// What a parameter instruction's attributes are: its index alone.
bool is_parameter_numbered(const ir::Instr& instr, int32_t index) {
  return instr.op == ir::OpId::parameter && instr.attrs.items().size() == 1 && instr.attrs.has(ir::AttrKey::index) &&
         ir::ParameterAttrs::of(instr.attrs).index == index;
}
}  // namespace

void PendingGraph::walk(std::vector<ir::NodePtr>&& roots) {
  roots_.clear();
  roots_.swap(roots);
  entries_.clear();
  operands_.clear();
  outputs_.clear();
  root_outputs_.clear();
  arguments_.clear();
  leaves_per_argument_.clear();
  stack_.clear();
  SmallMap<const ir::Node*> position;
  SmallMap<const Buffer*> parameter_of_buffer;
  SmallMap<int32_t> output_slot;  // instruction -> position in outputs

  auto emit = [&](const ir::Node* node) {
    const BufferPtr& data = node->op == ir::OpId::parameter ? node->data : node->computed;
    const auto at = static_cast<int32_t>(entries_.size());
    if (data) {
      if (const int32_t* existing = parameter_of_buffer.find(data.get())) {
        position.insert(node, *existing);
        ++leaves_per_argument_[entries_[*existing].parameter];
        return;
      }
      entries_.push_back({node, static_cast<int32_t>(arguments_.size()), 0, 0});
      arguments_.push_back(data);
      leaves_per_argument_.push_back(1);
      parameter_of_buffer.insert(data.get(), at);
      position.insert(node, at);
      return;
    }
    entries_.push_back(
        {node, -1, static_cast<uint32_t>(operands_.size()), static_cast<uint32_t>(node->operands.size())});
    for (const auto& operand : node->operands) operands_.push_back(*position.find(operand.get()));
    position.insert(node, at);
  };

  // Iterative post-order walk: deep chains (long training loops) must not overflow the stack.
  for (const auto& root : roots_) {
    if (!position.find(root.get())) {
      stack_.push_back({root.get(), 0});
      while (!stack_.empty()) {
        Frame& frame = stack_.back();
        if (!frame.node->computed && frame.next_operand < frame.node->operands.size()) {
          const ir::Node* operand = frame.node->operands[frame.next_operand++].get();
          if (!position.find(operand)) stack_.push_back({operand, 0});
        } else {
          emit(frame.node);
          stack_.pop_back();
        }
      }
    }
    const int32_t out = *position.find(root.get());
    const int32_t* slot = output_slot.find(out);
    if (!slot) {
      output_slot.insert(out, static_cast<int32_t>(outputs_.size()));
      outputs_.push_back(out);
      slot = output_slot.find(out);
    }
    root_outputs_.push_back(*slot);
  }
}

void PendingGraph::release() {
  arguments_.clear();
  roots_.clear();
}

uint64_t PendingGraph::hash() const {
  uint64_t h = ir::hash_graph_begin(entries_.size(), static_cast<int64_t>(leaves_per_argument_.size()));
  for (const Entry& e : entries_) {
    if (e.parameter >= 0)
      h = ir::hash_graph_instr(h, ir::OpId::parameter, ir::Attrs::hash_of_int(ir::AttrKey::index, e.parameter),
                               e.node->dtype, e.node->shape, {}, e.node->device);
    else
      h = ir::hash_graph_instr(h, e.node->op, e.node->attrs.hash(), e.node->dtype, e.node->shape, operands_of(e),
                               e.node->device);
  }
  return ir::hash_graph_end(h, outputs_);
}

bool PendingGraph::matches(const ir::Graph& graph) const {
  if (graph.instrs.size() != entries_.size() ||
      graph.num_parameters != static_cast<int64_t>(leaves_per_argument_.size()) ||
      !same<int32_t>(graph.outputs, outputs_))
    return false;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const ir::Instr& instr = graph.instrs[i];
    if (instr.dtype != e.node->dtype || !same<int64_t>(instr.shape, e.node->shape) || instr.device != e.node->device)
      return false;
    if (e.parameter >= 0) {
      if (!is_parameter_numbered(instr, e.parameter)) return false;
      continue;
    }
    std::span<const int32_t> operands = operands_of(e);
    if (instr.op != e.node->op || !same<int32_t>(instr.operands, operands) || !(instr.attrs == e.node->attrs))
      return false;
  }
  return true;
}

ir::Graph PendingGraph::build() const {
  ir::Graph graph;
  graph.instrs.reserve(entries_.size());
  for (const Entry& e : entries_) {
    if (e.parameter >= 0) {
      graph.instrs.push_back({ir::OpId::parameter,
                              {},
                              ir::ParameterAttrs{.index = e.parameter}.to_attrs(),
                              e.node->shape,
                              e.node->dtype,
                              "",
                              e.node->device});
    } else {
      std::span<const int32_t> operands = operands_of(e);
      graph.instrs.push_back(ir::Instr{e.node->op,
                                       {operands.begin(), operands.end()},
                                       e.node->attrs,
                                       e.node->shape,
                                       e.node->dtype,
                                       e.node->origin,
                                       e.node->device,
                                       e.node->site});
    }
  }
  graph.outputs = outputs_;
  graph.num_parameters = static_cast<int64_t>(leaves_per_argument_.size());
  return graph;
}

std::vector<std::pair<Shape, DType>> PendingGraph::argument_types() const {
  std::vector<std::pair<Shape, DType>> types(leaves_per_argument_.size());
  for (const Entry& e : entries_)
    if (e.parameter >= 0) types[e.parameter] = {e.node->shape, e.node->dtype};
  return types;
}

BuiltGraph build_graph(const std::vector<ir::NodePtr>& roots) {
  PendingGraph pending;
  pending.walk(std::vector<ir::NodePtr>(roots));
  return BuiltGraph{
      pending.build(), std::move(pending.arguments()), {pending.root_outputs().begin(), pending.root_outputs().end()}};
}

}  // namespace xlite::lazy
