#pragma once
// Turns the pending IR of some roots into a flat graph plus the device data its parameters stand for.
#include <vector>

#include "core/buffer.h"
#include "ir/graph.h"
#include "ir/node.h"

namespace xlite::lazy {

struct BuiltGraph {
  ir::Graph graph;
  std::vector<BufferPtr> arguments;   // in parameter order
  std::vector<int> leaves_per_argument;  // distinct IR leaves standing for each argument
  std::vector<int32_t> root_outputs;  // for each root, its position in graph.outputs
};

// Parameters are numbered in the order a post-order walk from the roots first meets them, and one
// buffer is one parameter however many leaves stand for it.
BuiltGraph build_graph(const std::vector<ir::NodePtr>& roots);

}  // namespace xlite::lazy
