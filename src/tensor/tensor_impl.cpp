#include "tensor/tensor_impl.h"

#include <algorithm>

#include "core/check.h"
#include "core/step_recording.h"
#include "tensor/grad_mode.h"
#include "tensor/live_tensors.h"
#include "xlite/metrics.h"

namespace xlite {
namespace {
std::atomic<uint64_t> next_tensor_id{1};

// Every tensor is counted, so the counters are looked up once.
const metrics::Counter& created_counter() {
  static const metrics::Counter counter("CreateTensor");
  return counter;
}
const metrics::Counter& destroyed_counter() {
  static const metrics::Counter counter("DestroyTensor");
  return counter;
}
}  // namespace

TensorImpl::TensorImpl(ir::NodePtr pending)
    : shape_(pending->shape),
      dtype_(pending->dtype),
      device_(pending->device),
      id_(next_tensor_id++),
      pending_(std::move(pending)) {
  if (pending_->requires_grad) grad_node_ = pending_;
  created_counter().increment();
  live_tensors::add(this);
}

TensorImpl::TensorImpl(BufferPtr data, Shape shape, DType dtype, Device device)
    : shape_(std::move(shape)), dtype_(dtype), device_(device), id_(next_tensor_id++), data_(std::move(data)) {
  created_counter().increment();
}

TensorImpl::~TensorImpl() {
  live_tensors::remove(this);
  destroyed_counter().increment();
}

uint64_t TensorImpl::next_id() { return next_tensor_id.load(); }

void TensorImpl::note_data_read() {
  if (StepRecording* recording = StepRecording::active(); recording && data_ && id_ < recording->first_tensor_id) {
    recording->note_read(data_.get(), weak_from_this());
    // backward through this read adds to the gradient the leaf has, or makes a new one when it has none
    if (requires_grad_) recording->note_grad(this, weak_from_this(), grad_.get(), false);
  }
}

void TensorImpl::note_state_read() {
  if (StepRecording* recording = StepRecording::active(); recording && id_ < recording->first_tensor_id) {
    recording->observed.push_back(weak_from_this());
    recording->note_grad(this, weak_from_this(), grad_.get(), false);
  }
}

void TensorImpl::reset_grad() {
  if (StepRecording* recording = StepRecording::active(); recording && id_ < recording->first_tensor_id)
    recording->note_grad(this, weak_from_this(), grad_.get(), true);
  grad_.reset();
}

std::shared_ptr<const NodeMeta> TensorImpl::leaf_meta() {
  auto meta = std::make_shared<NodeMeta>();
  meta->leaf = weak_from_this();
  return meta;
}

ir::NodePtr TensorImpl::data_leaf() {
  while (leaf_lock_.test_and_set(std::memory_order_acquire)) {
  }
  if (!data_leaf_) {
    std::shared_ptr<ir::Node> leaf = ir::make_parameter(data_, shape_, dtype_, requires_grad_);
    if (requires_grad_) leaf->autograd = leaf_meta();
    data_leaf_ = std::move(leaf);
  }
  ir::NodePtr leaf = data_leaf_;
  leaf_lock_.clear(std::memory_order_release);
  return leaf;
}

std::shared_ptr<TensorImpl> TensorImpl::share_data() {
  note_data_read();
  return std::make_shared<TensorImpl>(data_, shape_, dtype_, device_);
}

ir::NodePtr TensorImpl::node() {
  if (pending_) return pending_;
  ir::NodePtr leaf = data_leaf();
  note_data_read();
  return leaf;
}

ir::NodePtr TensorImpl::autograd_node() {
  if (pending_ || requires_grad_ || !grad_node_) return node();
  note_data_read();  // a graph reads this value through the node that made it (which holds the computed buffer)
  return grad_node_;
}

namespace {
struct InPlaceLog {
  bool active = false;
  std::vector<std::pair<std::weak_ptr<TensorImpl>, BufferPtr>> saved;
};
thread_local InPlaceLog log;
}  // namespace

namespace in_place_log {
void begin() {
  log.active = true;
  log.saved.clear();
}
void end() {
  log.active = false;
  log.saved.clear();
}
std::vector<std::pair<std::weak_ptr<TensorImpl>, const Buffer*>> updated() {
  std::vector<std::pair<std::weak_ptr<TensorImpl>, const Buffer*>> out;
  out.reserve(log.saved.size());
  for (const auto& [weak, data] : log.saved) out.emplace_back(weak, data.get());
  return out;
}
void rollback() {
  for (auto& [weak, data] : log.saved)
    if (auto impl = weak.lock()) impl->set_data(data);
  end();
}
}  // namespace in_place_log

void TensorImpl::set_pending(ir::NodePtr node) { bind_pending(std::move(node), true); }

void TensorImpl::bind_pending(ir::NodePtr node, bool in_place) {
  XLITE_CHECK(node->device == device_, "a tensor on " + device_.str() + " rebound to a value on " + node->device.str());
  if (in_place) {
    note_data_read();  // its state at entry
    if (data_ && log.active) log.saved.emplace_back(weak_from_this(), data_);
    if (data_) donor_ = data_.get();
  }
  grad_node_ = node->requires_grad && !requires_grad_ ? node : nullptr;
  if (requires_grad_ && !node->requires_grad) {
    // A leaf updated in place (an optimizer step) stays a leaf that gradients flow to.
    std::shared_ptr<ir::Node> identity = ir::make_identity(std::move(node), "requires_grad_", true);
    identity->autograd = leaf_meta();
    node = std::move(identity);
  }
  ++version_;
  live_tensors::add(this);  // also when pending already: the updating thread's sync computes it
  pending_ = std::move(node);
  data_.reset();
  data_leaf_.reset();
}

void TensorImpl::set_data(BufferPtr data) {
  XLITE_CHECK(!data || data->device() == device_,
              "a tensor on " + device_.str() + " given data on " + data->device().str());
  if (pending_) live_tensors::remove(this);
  pending_.reset();
  data_ = std::move(data);
  data_leaf_.reset();
  donor_ = nullptr;
}

void TensorImpl::set_computed(BufferPtr data, long sync_holders) {
  if (pending_ && pending_.use_count() > 1 + sync_holders) {
    // Something else holds the node (autograd, another handle, a pending consumer): later graphs read
    // the value through it instead of recomputing it.
    pending_->computed = data;
    set_data(std::move(data));
    return;
  }
  if (!pending_ || requires_grad_ || pending_->requires_grad) {
    set_data(std::move(data));  // the node dies with this binding
    return;
  }
  live_tensors::remove(this);
  ir::NodePtr leaf = std::move(pending_);
  data_ = std::move(data);
  donor_ = nullptr;
  // Nothing else can see this node (the count above), so changing it cannot change another graph.
  auto& node = const_cast<ir::Node&>(*leaf);
  node.operands.clear();
  node.computed = data_;
  data_leaf_ = std::move(leaf);
}

bool TensorImpl::data_is_private(long other_holders) const {
  if (!data_ || data_->borrowed()) return false;
  long holders = 1 + other_holders;
  if (data_leaf_) {
    if (data_leaf_.use_count() != 1) return false;  // IR outside this tensor may still read the buffer
    ++holders;
  }
  return data_.use_count() == holders;
}

void TensorImpl::assign_data(BufferPtr data, ir::NodePtr grad_node) {
  set_data(std::move(data));
  grad_node_ = requires_grad_ ? nullptr : std::move(grad_node);
  ++version_;
}

void TensorImpl::replace_value(const Tensor& value) {
  TensorImpl& made = *value.impl();
  const bool retyped = made.shape() != shape_ || made.dtype() != dtype_ || made.device() != device_;
  if (retyped) {
    shape_ = made.shape();
    dtype_ = made.dtype();
    device_ = made.device();
    grad_.reset();
  }
  // The old buffer is not offered for the new value when its size may differ.
  if (made.is_pending())
    bind_pending(made.pending(), !retyped);
  else
    assign_data(made.data(), nullptr);
}

void TensorImpl::make_view(ViewLink link) {
  XLITE_CHECK(link.base && !link.base->view_, "a view's base must not be a view itself");
  view_ = std::make_unique<ViewLink>(std::move(link));
}

bool TensorImpl::view_is_stale() const { return view_ && view_->base_version != view_->base->version(); }

bool TensorImpl::read_through_base_in_trace() const {
  const StepRecording* recording = StepRecording::active();
  return recording && data_ && id_ < recording->first_tensor_id &&
         std::find(recording->arguments.begin(), recording->arguments.end(), this) == recording->arguments.end();
}

void TensorImpl::refresh_stale_view() {
  // The view's value is made with the grad mode it was made with, wherever it is read again.
  struct GradModeAs {
    bool before = autograd::is_grad_enabled();
    explicit GradModeAs(bool on) { autograd::set_grad_enabled(on); }
    ~GradModeAs() { autograd::set_grad_enabled(before); }
  } grad_mode(view_->grad_flows);
  Tensor value(view_->base);
  for (const ViewStep& step : view_->chain->steps) value = step.apply(value);
  bind_view_value(value);
}

void TensorImpl::bind_view_value(const Tensor& value) {
  TensorImpl& made = *value.impl();
  if (made.is_pending()) {
    bind_pending(made.pending(), false);
  } else {
    assign_data(made.data(), made.requires_grad() ? made.autograd_node() : nullptr);
  }
  view_->base_version = view_->base->version();
}

void TensorImpl::rebind_data(BufferPtr data) {
  set_data(std::move(data));
  ++version_;
}

}  // namespace xlite
