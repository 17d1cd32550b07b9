// Recording a compiled step's program from its trace, and confirming it with a second trace.
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/elements.h"
#include "core/random_state.h"
#include "lazy/step_program.h"
#include "runtime/transfer.h"

namespace xlite::detail {
namespace {

constexpr size_t kProgramsPerSignature = 8;

std::string value_text(const BufferPtr& buffer, const std::pair<Shape, DType>& type) {
  const auto& [shape, dtype] = type;
  if (numel(shape) != 1) return type_text(dtype, shape);
  std::vector<std::byte> host(dtype_size(dtype));
  runtime::to_host(*buffer, host);
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", read_element_f64(host.data(), dtype, 0));
  return text;
}

bool same_bytes(const Buffer& a, const Buffer& b) {
  if (a.bytes() != b.bytes()) return false;
  std::vector<std::byte> host_a(a.bytes()), host_b(b.bytes());
  runtime::to_host(a, host_a);
  runtime::to_host(b, host_b);
  return host_a == host_b;
}

}  // namespace

std::string type_text(DType dtype, const Shape& shape) { return std::string(dtype_name(dtype)) + shape_str(shape); }

std::string record_program(const TraceFacts& trace, const std::vector<StepInput>& inputs, const StepValues* results,
                           const lazy::SyncRecord& synced, Program& p) {
  const StepRecording& recording = trace.recording;
  if (!recording.ran_mid_trace.empty())
    return "fn " + recording.ran_mid_trace +
           " while tracing, so what it traced may depend on the data; it "
           "traces on every call (move that out of fn, or pass the value as an argument)";
  if (random_state::current().seed != trace.entry_seed) return "fn reseeded the random generator";
  if (!results)
    return "fn's result is not made of tensors (void, Tensor, std::vector<Tensor>, or a pair or tuple of them)";

  const uint64_t first_id = recording.first_tensor_id;
  std::unordered_map<const TensorImpl*, int32_t> output_of;
  for (size_t i = 0; i < synced.computed.size(); ++i) output_of[synced.computed[i]] = synced.outputs[i];
  std::unordered_map<const TensorImpl*, int64_t> argument_of;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].kind == StepInput::Kind::tensor && inputs[i].tensor.defined())
      argument_of.try_emplace(inputs[i].tensor.impl().get(), static_cast<int64_t>(i));

  std::unordered_set<const TensorImpl*> guarded;
  auto existing = [&](const std::shared_ptr<TensorImpl>& impl) {
    Existing e;
    if (auto it = argument_of.find(impl.get()); it != argument_of.end())
      e.argument = it->second;
    else
      e.captured = impl;
    if (guarded.insert(impl.get()).second) {
      StateGuard g{e, e.argument >= 0 ? "argument " + std::to_string(e.argument)
                                      : "a captured " + type_text(impl->dtype(), impl->shape()) + " tensor"};
      g.grad_leaf = impl->is_grad_leaf();
      if (auto it = recording.grads.find(impl.get()); it != recording.grads.end()) {
        g.grad = it->second.grad;
        g.any_grad = it->second.reset_first;
      } else {
        g.grad = impl->grad().get();
      }
      g.had_grad = g.grad != nullptr;
      p.guards.push_back(std::move(g));
    }
    return e;
  };

  p.hash = synced.hash;
  p.executable = synced.executable;
  p.feed_types = synced.argument_types;
  p.output_types.resize(synced.computed.size() ? synced.outputs.size() : 0);
  for (size_t i = 0; i < synced.computed.size(); ++i) {
    const TensorImpl* impl = synced.computed[i];
    int32_t o = synced.outputs[i];
    if (static_cast<size_t>(o) >= p.output_types.size()) p.output_types.resize(o + 1);
    p.output_types[o] = {impl->shape(), impl->dtype(), impl->device()};
  }
  const random_state::Position now = random_state::current();
  p.rng_blocks = now.offset - recording.entry_rng_offset;

  // Gradients backward created for existing leaves, and those fn reset and left undefined: a replay repeats
  // both. The guards see the gradient as fn first met it.
  std::unordered_set<const TensorImpl*> grad_slots;
  for (const auto& [key, state] : recording.grads) {
    std::shared_ptr<TensorImpl> leaf = state.tensor.lock();
    if (!leaf) continue;
    if (!leaf->grad()) {
      if (state.reset) p.grad_resets.push_back(existing(leaf));
      continue;
    }
    // After a reset the gradient is new even at the old one's address: the reset may have freed that one.
    if (!leaf->is_grad_leaf() || (!state.reset && leaf->grad().get() == state.grad)) continue;
    auto it = output_of.find(leaf->grad().get());
    if (it == output_of.end()) return "fn set a gradient to data that was not computed by the step";
    p.grads.push_back({existing(leaf), it->second});
    grad_slots.insert(leaf->grad().get());
  }

  for (size_t a = 0; a < synced.arguments.size(); ++a) {
    const Buffer* buffer = synced.arguments[a].get();
    Feed feed;
    for (size_t i = 0; i < trace.input_buffers.size(); ++i)
      if (trace.input_buffers[i] == buffer) feed.sources.push_back(Existing{static_cast<int64_t>(i), {}});
    if (auto reads = recording.reads.find(buffer); reads != recording.reads.end()) {
      for (const auto& read : reads->second) {
        std::shared_ptr<TensorImpl> impl = read.impl.lock();
        if (!impl || argument_of.count(impl.get())) continue;
        feed.sources.push_back(existing(impl));
      }
    }
    if (feed.sources.empty()) {
      for (const auto& draw : recording.draws) {
        feed.device = buffer->device();
        if (draw.seed == buffer) feed.kind = Feed::Kind::rng_seed;
        if (draw.offset == buffer) {
          feed.kind = Feed::Kind::rng_offset;
          feed.offset_from_entry = draw.offset_from_entry;
        }
      }
      if (feed.kind == Feed::Kind::existing) {
        if (buffer->serial() < recording.first_buffer_serial)
          return "fn reads a tensor made before the call that no argument or live tensor holds (for example "
                 "the autograd history of an earlier result)";
        feed.kind = Feed::Kind::frozen;
        feed.frozen = synced.arguments[a];
      }
    }
    p.feeds.push_back(std::move(feed));
  }

  for (const auto& [weak, entry] : trace.updated) {
    std::shared_ptr<TensorImpl> impl = weak.lock();
    if (!impl || impl->id() >= first_id) continue;
    auto it = output_of.find(impl.get());
    if (it == output_of.end()) return "an existing tensor fn updated in place was not computed by the step";
    int32_t entry_argument = -1;
    for (size_t a = 0; a < synced.arguments.size(); ++a)
      if (synced.arguments[a].get() == entry) entry_argument = static_cast<int32_t>(a);
    p.rebinds.push_back({existing(impl), it->second, entry_argument});
  }

  std::unordered_set<const TensorImpl*> returned;
  p.result_sizes = results->sizes;
  for (const Tensor& t : results->tensors) {
    ResultSlot slot;
    if (t.defined()) {
      const std::shared_ptr<TensorImpl>& impl = t.impl();
      returned.insert(impl.get());
      if (impl->id() < first_id) {
        slot.kind = ResultSlot::Kind::existing;
        slot.existing = existing(impl);
      } else if (auto it = output_of.find(impl.get()); it != output_of.end()) {
        slot.kind = ResultSlot::Kind::output;
        slot.output = it->second;
      } else if (impl->data() && impl->data()->serial() >= recording.first_buffer_serial) {
        slot = {ResultSlot::Kind::frozen, -1, {}, impl->data(), impl->shape(), impl->dtype(), impl->device()};
      } else {
        return "fn returns a new handle to data from before the call";
      }
    }
    p.results.push_back(std::move(slot));
  }

  for (const TensorImpl* impl : synced.computed)
    if (impl->id() >= first_id && !returned.count(impl) && !grad_slots.count(impl))
      return "fn kept a new " + type_text(impl->dtype(), impl->shape()) +
             " tensor that is not among its results (stored in a variable that outlives the call?); a replay "
             "cannot repeat that assignment";

  for (const std::weak_ptr<TensorImpl>& weak : recording.observed)
    if (std::shared_ptr<TensorImpl> impl = weak.lock(); impl && impl->id() < first_id) existing(impl);
  for (const StepRecording::FlagRead& read : recording.flags)
    if (std::shared_ptr<const detail::FlagCell> cell = read.cell.lock())
      p.flags.push_back({cell, read.value, cell->what});

  // Results are left out: whether the caller keeps them varies from call to call.
  for (StateGuard& g : p.guards) {
    std::shared_ptr<TensorImpl> impl = g.who.captured.lock();
    if (g.who.argument < 0 && impl && !returned.count(impl.get())) g.holders = impl.use_count() - 1;
  }
  return "";
}

void add_program(std::vector<Program>& list, Program p, uint64_t previous_hash) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->hash != p.hash || it->feeds.size() != p.feeds.size()) continue;
    p.confirmed = previous_hash == p.hash;
    if (!p.confirmed)
      p.unconfirmed =
          "the trace before this one made a different graph, so fn's graph may depend on host state "
          "it keeps to itself; the next call traces again to check";
    for (size_t a = 0; a < p.feeds.size() && p.confirmed; ++a) {
      const Feed& before = it->feeds[a];
      const Feed& now = p.feeds[a];
      if (before.kind != now.kind) {
        p.confirmed = false;
        p.unconfirmed = "graph argument " + std::to_string(a) + " comes from a different place than in the last trace";
      } else if (now.kind == Feed::Kind::frozen && !same_bytes(*before.frozen, *now.frozen)) {
        p.confirmed = false;
        p.unconfirmed = "a host value fed to the graph (argument " + std::to_string(a) +
                        ") changed between traces, from " + value_text(before.frozen, p.feed_types[a]) + " to " +
                        value_text(now.frozen, p.feed_types[a]) + ": pass it as an argument or keep it in a tensor";
      }
    }
    list.erase(it);
    break;
  }
  if (!p.confirmed && p.unconfirmed.empty())
    p.unconfirmed =
        "traced once for this signature; the next call traces again to check that fn feeds the "
        "same host values";
  list.push_back(std::move(p));
  if (list.size() > kProgramsPerSignature) list.erase(list.begin());
}

}  // namespace xlite::detail
