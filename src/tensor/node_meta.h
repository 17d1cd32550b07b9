#pragma once
// What autograd attaches to a node that gradients flow through: the leaf tensor its gradient accumulates
// into, and the tensors whose values its gradient formula reads, each with the version it had when the
// node was built. IR values never change, but an in-place update may write the new value into the old
// buffer (donation), so backward refuses a saved tensor that was updated since, as PyTorch does.
#include <cstdint>
#include <memory>
#include <vector>

namespace xlite {

class TensorImpl;

struct SavedTensor {
  std::weak_ptr<TensorImpl> tensor;
  uint64_t version = 0;
  int32_t operand = -1;  // the operand it was, or -1 for the node's own result
};

// A custom function's gradient rule (autograd's, opaque here). It rides on its result's node, so it is freed
// with that node: a registry beside the nodes kept the graphs of dead results alive.
struct CustomGradientRule {
  virtual ~CustomGradientRule() = default;
};

struct NodeMeta {
  std::weak_ptr<TensorImpl> leaf;  // for a leaf's node: the tensor whose grad() this node's gradient feeds
  std::vector<SavedTensor> saved;
  std::shared_ptr<const CustomGradientRule> custom;  // for a custom function's result: its rule
};

}  // namespace xlite
