#include "ops/op_support.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "tensor/grad_mode.h"
#include "ops/saved_values.h"
#include "core/clock.h"
#include "core/step_recording.h"
#include "ir/op_attrs.h"
#include "lazy/sync.h"
#include "core/check.h"
#include "runtime/transfer.h"
#include "xlite/metrics.h"
#include "xlite/ops.h"

namespace xlite::ops {
namespace {
thread_local int op_depth = 0;
thread_local const char* op_name_now = "";
thread_local const TensorImpl* in_place_target = nullptr;

int category(DType d) { return d == DType::bool_ ? 0 : is_floating(d) ? 2 : 1; }
int float_rank(DType d) { return d == DType::f64 ? 2 : d == DType::f32 ? 1 : 0; }
int int_rank(DType d) { return d == DType::i64 ? 2 : d == DType::i32 ? 1 : 0; }

DType scalar_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::boolean: return DType::bool_;
    case Scalar::Kind::integer: return DType::i64;
    case Scalar::Kind::floating: return default_float();
  }
  return DType::f32;
}

// Promotes within one priority class; `has` stays false while the class is empty.
struct Partial {
  bool has = false;
  DType dtype = DType::bool_;
  void add(DType d) {
    dtype = has ? promote_types(dtype, d) : d;
    has = true;
  }
};

// Combines a higher-priority class with a lower one (torch's combine_categories).
Partial combine(Partial higher, Partial lower) {
  if (!higher.has) return lower;
  if (!lower.has) return higher;
  if (is_floating(higher.dtype)) return higher;
  if (higher.dtype == DType::bool_ || is_floating(lower.dtype)) return {true, promote_types(higher.dtype, lower.dtype)};
  return higher;
}
}  // namespace

OpScope::OpScope(const char* name) : outermost_(op_depth == 0), start_ns_(0) {
  if (outermost_) {
    op_name_now = name;
    // Only tracing time is measured from here; an eager op's time is its sync's. A clock read costs about
    // as much as the rest of an eager op's bookkeeping.
    if (!lazy::eager()) start_ns_ = now_ns();
  }
  ++op_depth;
}

OpScope::~OpScope() {
  --op_depth;
  if (outermost_) op_name_now = "";
}

Tensor OpScope::finish(Tensor result) {
  if (!outermost_) return result;
  if (lazy::eager()) {
    note_mid_trace_run(op_name_now, "ran an op eagerly");
    TensorImpl* impl = result.impl().get();
    lazy::sync_tensors({&impl, 1}, lazy::SyncCause::eager_op);
  } else if (start_ns_ != 0) {
    lazy::add_tracing_time(static_cast<double>(now_ns() - start_ns_));
  }
  return result;
}

ValuesIndices OpScope::finish(ValuesIndices results) {
  std::vector<Tensor> both = finish(std::vector<Tensor>{results.values, results.indices});
  return {both[0], both[1]};
}

std::vector<Tensor> OpScope::finish(std::vector<Tensor> results) {
  if (!outermost_) return results;
  if (lazy::eager()) {
    note_mid_trace_run(op_name_now, "ran an op eagerly");
    std::vector<TensorImpl*> impls;
    for (const Tensor& t : results) impls.push_back(t.impl().get());
    lazy::sync_tensors(impls, lazy::SyncCause::eager_op);
  } else if (start_ns_ != 0) {
    lazy::add_tracing_time(static_cast<double>(now_ns() - start_ns_));
  }
  return results;
}

InPlaceScope::InPlaceScope(const TensorImpl* target) : previous_(in_place_target) { in_place_target = target; }
InPlaceScope::~InPlaceScope() { in_place_target = previous_; }

const char* current_op() { return op_name_now; }
bool in_user_call() { return op_depth == 1; }

void fail(const std::string& message) { throw Error("[" + std::string(op_name_now) + "] " + message); }

const TensorImpl& impl_of(const Tensor& t) {
  if (!t.defined()) fail("an operand is an undefined tensor");
  t.impl()->refresh_view();
  return *t.impl();
}

ir::NodePtr node_of(const Tensor& t) {
  impl_of(t);
  return t.impl()->node();
}

Tensor wrap(ir::NodePtr node) { return Tensor(std::make_shared<TensorImpl>(std::move(node))); }

Tensor fresh_handle(const Tensor& t) {
  const TensorImpl& impl = impl_of(t);
  if (impl.is_pending()) return wrap(impl.pending());
  // Gradients must keep flowing through the new handle.
  if (impl.requires_grad() && autograd::is_grad_enabled()) return wrap(t.impl()->autograd_node());
  return Tensor(t.impl()->share_data());
}

Tensor make(ir::OpId op, std::span<const Tensor> operands, ir::Attrs attrs, std::optional<Device> device) {
  std::vector<ir::NodePtr> nodes;
  nodes.reserve(operands.size());
  bool requires_grad = false;
  for (const Tensor& t : operands) {
    impl_of(t);
    // After a sync a result keeps the node that made it, so gradients can still flow through it.
    nodes.push_back(t.impl()->requires_grad() && autograd::is_grad_enabled() ? t.impl()->autograd_node()
                                                                             : t.impl()->node());
    requires_grad = requires_grad || nodes.back()->requires_grad;
  }
  requires_grad = requires_grad && autograd::is_grad_enabled() && ir::is_differentiable(op);
  std::array<bool, 3> needs_grad{};
  for (size_t k = 0; k < nodes.size() && k < needs_grad.size(); ++k) needs_grad[k] = nodes[k]->requires_grad;
  std::shared_ptr<ir::Node> node =
      ir::make_node(op, std::move(nodes), std::move(attrs), op_name_now, requires_grad, device);
  Tensor result = wrap(node);
  if (!requires_grad) return result;
  const autograd::SavedValues saved = autograd::saved_values(op, needs_grad);
  if (saved.operands == 0 && !saved.result) return result;
  auto meta = std::make_shared<NodeMeta>();
  auto save = [&](const std::shared_ptr<TensorImpl>& impl, int32_t operand) {
    meta->saved.push_back({impl, impl->version() + (impl.get() == in_place_target ? 1 : 0), operand});
  };
  for (size_t k = 0; k < operands.size() && k < 32; ++k)
    if (saved.operands & (1u << k)) save(operands[k].impl(), static_cast<int32_t>(k));
  if (saved.result) save(result.impl(), -1);
  node->autograd = std::move(meta);  // not shared yet: only the result holds the node
  return result;
}

Device existing_device(Device device) {
  if (device.index < 0 || device.index >= device_count())
    fail("no device " + device.str() + " (there are " + std::to_string(device_count()) +
         "; XLITE_NUM_CPU_DEVICES sets how many)");
  return device;
}

ir::NodePtr scalar_node(Scalar value, DType dtype, Device device) {
  existing_device(device);
  double v = value.to_double();
  bool zero_or_one = (v == 0.0 && !std::signbit(v)) || v == 1.0;
  if (value.kind() != Scalar::Kind::floating) zero_or_one = value.to_int() == 0 || value.to_int() == 1;
  if (zero_or_one) {
    return ir::make_node(ir::OpId::constant, {}, ir::ConstantAttrs{.value = v, .dtype = dtype}.to_attrs(), "", false,
                         device);
  }
  auto upload = [&](auto host_value, DType as) {
    metrics::increment_counter("TransferToDevice");
    return ir::make_parameter(runtime::from_host(std::as_bytes(std::span(&host_value, 1)), device), {}, as);
  };
  switch (dtype) {
    case DType::f32: return upload(static_cast<float>(v), dtype);
    case DType::f64: return upload(v, dtype);
    case DType::i32: return upload(static_cast<int32_t>(static_cast<uint32_t>(value.to_int())), dtype);
    case DType::i64: return upload(value.to_int(), dtype);
    case DType::u8: return upload(static_cast<uint8_t>(value.to_int()), dtype);
    case DType::bool_: return upload(static_cast<uint8_t>(v != 0), dtype);
    case DType::f16:
    case DType::bf16:
      // Upload as f32 and convert on the device, so that there is one rounding rule for 16-bit floats.
      return ir::make_node(ir::OpId::convert, {upload(static_cast<float>(v), DType::f32)},
                           ir::ConvertAttrs{.dtype = dtype}.to_attrs());
  }
  XLITE_FAIL("[scalar] unknown dtype");
}

Tensor scalar_tensor(Scalar value, DType dtype, Device device) { return wrap(scalar_node(value, dtype, device)); }

int64_t normalize_dim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);  // a 0-dim tensor accepts dim 0 and -1, like PyTorch
  if (dim < -r || dim >= r)
    fail("dim " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    int64_t n = normalize_dim(d, rank);
    if (std::find(out.begin(), out.end(), n) != out.end()) fail("dim " + std::to_string(d) + " appears more than once");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (rank == 0) out.clear();
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (a == b) return a;
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor transfer_to(const Tensor& t, Device device) {
  if (impl_of(t).device() == device) return t;
  existing_device(device);
  return make(ir::OpId::transfer, {t}, {}, device);
}

Tensor iota_along(const Shape& shape, int64_t dim, DType dtype, Device device) {
  existing_device(device);
  return make(ir::OpId::iota, {}, ir::IotaAttrs{.shape = shape, .dim = dim, .dtype = dtype}.to_attrs(), device);
}

Tensor convert_to(const Tensor& t, DType dtype) {
  if (impl_of(t).dtype() == dtype) return t;
  return make(ir::OpId::convert, {t}, ir::ConvertAttrs{.dtype = dtype}.to_attrs());
}

Tensor broadcast_to_shape(const Tensor& t, const Shape& shape) {
  const Shape& from = impl_of(t).shape();
  if (from == shape) return t;
  if (from.size() > shape.size()) fail("cannot broadcast " + shape_str(from) + " to " + shape_str(shape));
  size_t lead = shape.size() - from.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != shape[lead + i])
      fail("cannot broadcast " + shape_str(from) + " to " + shape_str(shape));
    dims.push_back(static_cast<int64_t>(lead + i));
  }
  return make(ir::OpId::broadcast, {t}, ir::BroadcastAttrs{.shape = shape, .dims = dims}.to_attrs());
}

DType default_float() { return get_default_dtype(); }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (float_rank(a) == 0 && float_rank(b) == 0) return DType::f32;  // f16 with bf16
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

DType result_type(std::span<const Tensor* const> tensors, std::span<const Scalar> scalars) {
  Partial dimensioned, zero_dim, wrapped;
  for (const Tensor* t : tensors) {
    const TensorImpl& impl = impl_of(*t);
    (impl.shape().empty() ? zero_dim : dimensioned).add(impl.dtype());
  }
  for (const Scalar& s : scalars) wrapped.add(scalar_dtype(s));
  Partial result = combine(dimensioned, combine(zero_dim, wrapped));
  return result.has ? result.dtype : default_float();
}

bool can_cast(DType from, DType to) {
  if (category(from) > category(to)) return false;
  return true;
}

}  // namespace xlite::ops

namespace xlite {
Tensor composite_op(const char* name, const std::function<Tensor()>& body) {
  ops::OpScope scope(name);
  return scope.finish(body());
}
}  // namespace xlite
