#pragma once
// Turns the pending IR of some roots into a flat graph plus the device data its parameters stand for.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace xlite::lazy {

// The pending IR under some roots, walked once into the order and wiring of the graph it stands for.
// That is enough to hash the graph and to recognise a compiled one, so a sync builds the ir::Graph only
// when it has to compile it: an eager op, whose program is nearly always cached, builds none.
// Parameters are numbered in the order a post-order walk from the roots first meets them, and one buffer
// is one parameter however many leaves stand for it. Reused across walks, keeping its storage.
class PendingGraph {
 public:
  // Replaces what an earlier walk found. Takes the roots, so the nodes it points into stay alive; the
  // vector passed in is left empty, with the storage of the previous walk's roots to reuse.
  void walk(std::vector<ir::NodePtr>&& roots);
  std::span<const ir::NodePtr> roots() const { return roots_; }
  // Drops the roots and the argument buffers, which would otherwise outlive the sync that walked them.
  // Only a new walk may use this object after it: the entries point into nodes it no longer holds.
  void release();

  uint64_t hash() const;                       // equals build().hash()
  bool matches(const ir::Graph& graph) const;  // build() == graph, without building
  ir::Graph build() const;

  std::vector<BufferPtr>& arguments() { return arguments_; }                         // in parameter order
  std::span<const int> leaves_per_argument() const { return leaves_per_argument_; }  // distinct IR leaves per argument
  std::span<const int32_t> root_outputs() const { return root_outputs_; }  // for each root, its position in the outputs
  std::vector<std::pair<Shape, DType>> argument_types() const;
  size_t num_instrs() const { return entries_.size(); }

 private:
  // One instruction of the graph: a leaf standing for a buffer (parameter >= 0), or an op of the node.
  struct Entry {
    const ir::Node* node;
    int32_t parameter;
    uint32_t first_operand;  // into operands_
    uint32_t num_operands;
  };
  std::span<const int32_t> operands_of(const Entry& e) const {
    return {operands_.data() + e.first_operand, e.num_operands};
  }

  std::vector<ir::NodePtr> roots_;
  std::vector<Entry> entries_;
  std::vector<int32_t> operands_;
  std::vector<int32_t> outputs_;
  std::vector<int32_t> root_outputs_;
  std::vector<BufferPtr> arguments_;
  std::vector<int> leaves_per_argument_;
  struct Frame {
    const ir::Node* node;
    size_t next_operand;
  };
  std::vector<Frame> stack_;
};

struct BuiltGraph {
  ir::Graph graph;
  std::vector<BufferPtr> arguments;   // in parameter order
  std::vector<int32_t> root_outputs;  // for each root, its position in graph.outputs
};

// The graph of these roots, built (for debug output and tests; a sync uses PendingGraph).
BuiltGraph build_graph(const std::vector<ir::NodePtr>& roots);

}  // namespace xlite::lazy
