#pragma once
// The shared state behind Tensor handles: a pending IR node, or device data, never both.
#include <atomic>
#include <memory>
#include <vector>

#include "core/buffer.h"
#include "tensor/live_tensors.h"
#include "tensor/node_meta.h"
#include "tensor/view_link.h"
#include "ir/node.h"
#include "xlite/device.h"
#include "xlite/dtype.h"

namespace xlite {

class TensorImpl;

// While a compiled step runs, the data that in-place ops replace is remembered so that a step that
// throws can be undone. One log per thread; begin/end bracket the step.
namespace in_place_log {
void begin();
void end();       // forget the saved data (the step succeeded)
void rollback();  // give every updated tensor its data back
// The tensors updated since begin, each with the data it held before its first update.
std::vector<std::pair<std::weak_ptr<TensorImpl>, const Buffer*>> updated();
}  // namespace in_place_log

class TensorImpl : public std::enable_shared_from_this<TensorImpl> {
 public:
  explicit TensorImpl(ir::NodePtr pending);  // on the node's device
  TensorImpl(BufferPtr data, Shape shape, DType dtype, Device device);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  // Creation order; a sync lists its outputs in this order so that the same code gives the same graph.
  uint64_t id() const { return id_; }
  static uint64_t next_id();  // the id the next tensor will get

  bool is_pending() const { return pending_ != nullptr; }
  const ir::NodePtr& pending() const { return pending_; }
  const BufferPtr& data() const { return data_; }
  // The value as an IR node: the pending node, or a parameter leaf standing for the data. Several threads
  // may call this at once on a tensor that holds data (shared weights read by serving threads).
  ir::NodePtr node();

  // Autograd: a leaf that requires grad, its accumulated gradient, and for results of ops on such
  // tensors the node that made them, kept after a sync so that backward can still walk the graph.
  bool requires_grad() const { return requires_grad_ || (grad_node_ != nullptr); }
  bool is_grad_leaf() const { return requires_grad_; }
  void set_requires_grad(bool requires_grad);
  std::shared_ptr<TensorImpl>& grad() { return grad_; }
  // Drops the gradient (Tensor::reset_grad); inside compile(fn)'s recording, notes that fn did.
  void reset_grad();
  // The node gradients flow through: the pending node, the node that made the value, or the data leaf.
  ir::NodePtr autograd_node();

  // Counts in-place updates, so that backward can refuse a saved value that was updated since (PyTorch's
  // version counter).
  uint64_t version() const { return version_; }

  // A new tensor over the same data (a handle that an in-place op rebinds without touching this one). Inside
  // compile(fn)'s recording the read is noted for this tensor, which a replay then feeds.
  std::shared_ptr<TensorImpl> share_data();

  // Tensor::set_data: rebinds to a value that may have another shape and dtype.
  void replace_value(const Tensor& value);

  // Rebinds to a new value of the same type (an in-place op).
  void set_pending(ir::NodePtr node);
  // The buffer this tensor held before an in-place op made it pending: the next sync may write the new
  // value into it (donation). Never dereferenced; compared with graph arguments.
  const Buffer* donor() const { return donor_; }
  void set_data(BufferPtr data);
  // A pending tensor's value, computed by a sync that holds `sync_holders` references to its node. When
  // something else holds that node, the node keeps the value for the graphs that read it. When nothing
  // does and no gradient flows through it, the node becomes this tensor's data leaf: its operands (the
  // history) are dropped and it keeps the buffer as its computed value, so the next op that reads this
  // tensor needs no new leaf (an eager loop made one per op).
  void set_computed(BufferPtr data, long sync_holders);
  // True when nothing but this tensor and `other_holders` known references can read its data, so a
  // program may write a new value into the buffer.
  bool data_is_private(long other_holders) const;
  // An in-place op whose value already ran (eager mode): the data and the node that made it.
  void assign_data(BufferPtr data, ir::NodePtr grad_node);
  // A replayed compiled step's in-place update: the new data, and a new version.
  void rebind_data(BufferPtr data);

  // Views (tensor/view_link.h). A view made stale by an update of its base takes the base's current value
  // through its chain when an op or a value read next needs it.
  const ViewLink* view() const { return view_.get(); }
  void make_view(ViewLink link);
  bool view_is_stale() const;
  void refresh_view() {
    if (view_ && (view_is_stale() || read_through_base_in_trace())) refresh_stale_view();
  }
  // Binds a view's value that follows from its base's current one. It is not an update of state of its own
  // (the base holds that), so a compiled step neither logs nor donates it.
  void bind_view_value(const Tensor& value);

  // Inside compile(fn)'s recording, notes that the step asked for this pre-existing tensor's
  // requires_grad() or grad(), which a replay must then find unchanged.
  void note_state_read();

  // For the registry of pending tensors only.
  live_tensors::Link& registry_link() { return registry_link_; }

 private:
  // Inside compile(fn)'s recording, notes that the step read this pre-existing tensor's data.
  void note_data_read();
  // The parameter leaf standing for the data, made on first use under leaf_lock_.
  ir::NodePtr data_leaf();
  // set_pending's work; an in-place update is also logged for the compiled step and offers its buffer.
  void bind_pending(ir::NodePtr node, bool in_place);
  void refresh_stale_view();
  // Inside compile(fn)'s recording, a view that existed before the step and is no argument is computed from
  // its base, which the replay then feeds (its own data would be fed stale once the base is updated).
  bool read_through_base_in_trace() const;
  // A leaf that requires grad marks its nodes with itself, so backward finds whose grad() to feed.
  std::shared_ptr<const NodeMeta> leaf_meta();

  Shape shape_;
  DType dtype_;
  Device device_;
  uint64_t id_;
  ir::NodePtr pending_;
  BufferPtr data_;
  ir::NodePtr data_leaf_;
  std::atomic_flag leaf_lock_ = ATOMIC_FLAG_INIT;
  const Buffer* donor_ = nullptr;
  uint64_t version_ = 0;
  bool requires_grad_ = false;
  std::shared_ptr<TensorImpl> grad_;
  ir::NodePtr grad_node_;
  live_tensors::Link registry_link_;
  std::unique_ptr<ViewLink> view_;
  friend class Tensor;  // made once per data binding, so every use shares one graph parameter
};

}  // namespace xlite
