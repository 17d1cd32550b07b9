#pragma once
// The lazy IR: an immutable DAG of nodes built as user code calls ops. Nodes are not hashed: a sync
// hashes the graph it walks from its roots (lazy::PendingGraph), where computed values are leaves.
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/buffer.h"
#include "core/call_site.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "xlite/device.h"
#include "xlite/dtype.h"

namespace xlite {
struct NodeMeta;  // autograd's (core/node_meta.h)
}

namespace xlite::ir {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct TypedShape {
  Shape shape;
  DType dtype;
  bool operator==(const TypedShape&) const = default;
};

// An operand's type as a shape rule reads it: a view of a shape that lives in a node or instruction, so
// typing a new node copies no shapes.
struct OperandType {
  const Shape& shape;
  DType dtype;
  bool operator==(const OperandType& other) const { return dtype == other.dtype && shape == other.shape; }
  operator TypedShape() const { return {shape, dtype}; }
};

struct Node {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Releases long operand chains iteratively: a loop that never syncs builds chains deeper than the stack.
  ~Node();

  OpId op;
  std::vector<NodePtr> operands;
  Attrs attrs;
  Shape shape;
  DType dtype;
  // Where the value is computed and kept: its operands' device, a leaf's own, a transfer's destination.
  Device device;
  BufferPtr data;  // parameters only: the device data this leaf stands for
  // The value a sync computed for this node. Graphs built later read it as an argument instead of
  // recomputing it: backward reaches forward values through their nodes (autograd keeps them after the
  // sync), and in eager mode every op's node would otherwise pull in the whole chain before it. Set under
  // the sync lock; not part of the structure.
  mutable BufferPtr computed;
  // The public op that built this node, for run-time error messages; not part of the structure.
  const char* origin = "";
  // Under XLITE_DEBUG, the stack that built it, so reports can name the user's line; not part of the structure.
  std::shared_ptr<const call_site::Stack> site;
  // Whether gradients flow through this value, and for such nodes what backward needs to know (autograd
  // metadata, set before the node is shared; not part of the structure).
  bool requires_grad = false;
  std::shared_ptr<const NodeMeta> autograd;
};

// Checks operand types against the op's shape rule and computes the result type, whose shape is
// addressable (ir/sizes.h); throws xlite::Error.
TypedShape infer_type(OpId op, std::span<const OperandType> operands, const Attrs& attrs);

// New nodes are not shared yet, so the caller may still attach autograd metadata. The node's device is its
// operands' (operands on two devices raise xlite::Error naming both); a leaf op and a transfer take
// `device` (a leaf defaults to cpu:0).
std::shared_ptr<Node> make_node(OpId op, std::vector<NodePtr> operands, Attrs attrs, const char* origin = "",
                                bool requires_grad = false, std::optional<Device> device = {});
// The same value under a node of its own (a convert to its own dtype, which the passes remove), to carry
// autograd metadata the original node must not get.
std::shared_ptr<Node> make_identity(NodePtr value, const char* origin, bool requires_grad);
// A leaf standing for device data of the given type, on the data's device.
std::shared_ptr<Node> make_parameter(BufferPtr data, Shape shape, DType dtype, bool requires_grad = false);

}  // namespace xlite::ir
