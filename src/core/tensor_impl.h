#pragma once
// The shared state behind Tensor handles: a pending IR node, or device data, never both.
#include <atomic>
#include <memory>

#include "core/buffer.h"
#include "ir/node.h"
#include "xlite/device.h"
#include "xlite/dtype.h"

namespace xlite {

class TensorImpl {
 public:
  TensorImpl(ir::NodePtr pending, Device device);
  TensorImpl(BufferPtr data, Shape shape, DType dtype, Device device);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  // Creation order; a sync lists its outputs in this order so that the same code gives the same graph.
  uint64_t id() const { return id_; }

  bool is_pending() const { return pending_ != nullptr; }
  const ir::NodePtr& pending() const { return pending_; }
  const BufferPtr& data() const { return data_; }
  // The value as an IR node: the pending node, or a parameter leaf standing for the data.
  ir::NodePtr node();

  // Rebinds to a new value of the same type (an in-place op).
  void set_pending(ir::NodePtr node);
  // The buffer this tensor held before an in-place op made it pending: the next sync may write the new
  // value into it (donation). Never dereferenced; compared with graph arguments.
  const Buffer* donor() const { return donor_; }
  void set_data(BufferPtr data);

 private:
  Shape shape_;
  DType dtype_;
  Device device_;
  uint64_t id_;
  ir::NodePtr pending_;
  BufferPtr data_;
  ir::NodePtr data_leaf_;
  const Buffer* donor_ = nullptr;  // made once per data binding, so every use shares one graph parameter
};

}  // namespace xlite
