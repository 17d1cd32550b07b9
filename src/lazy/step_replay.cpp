// Replaying a compiled step's program: guards, arguments, donation and the rebinding of results.
#include <cstring>

#include "core/random_state.h"
#include "lazy/step_program.h"
#include "runtime/transfer.h"

namespace xlite::detail {
namespace {

std::shared_ptr<TensorImpl> resolve(const Existing& e, const std::vector<StepInput>& inputs) {
  if (e.argument >= 0) return inputs[e.argument].tensor.impl();
  return e.captured.lock();
}

// Fills why and returns false when a guard fails.
bool guards_hold(const Program& p, const std::vector<StepInput>& inputs, std::string& why) {
  for (const FlagGuard& flag : p.flags) {
    std::shared_ptr<const detail::FlagCell> cell = flag.cell.lock();
    if (!cell) {
      why = flag.what + " that fn read no longer exists";
      return false;
    }
    if (cell->value.load() != flag.value) {
      why = flag.what + std::string(" changed from ") + (flag.value ? "true" : "false") + " to " +
            (flag.value ? "false" : "true");
      return false;
    }
  }
  for (const StateGuard& g : p.guards) {
    std::shared_ptr<TensorImpl> impl = resolve(g.who, inputs);
    if (!impl) {
      why = g.what + " no longer exists";
      return false;
    }
    if (impl.use_count() - 1 < g.holders) {
      why = g.what + " has fewer handles than when traced: a variable fn reads may now hold another tensor";
      return false;
    }
    if (impl->is_grad_leaf() != g.grad_leaf) {
      why = "requires_grad of " + g.what + " changed";
      return false;
    }
    if (!g.grad_leaf || g.any_grad) continue;
    const TensorImpl* grad = impl->grad().get();
    if (g.who.argument >= 0 ? (grad != nullptr) != g.had_grad : grad != g.grad) {
      why = "the gradient of " + g.what + (grad ? " was created or replaced" : " was removed");
      return false;
    }
  }
  return true;
}

}  // namespace

bool replay_program(Program& p, const std::vector<StepInput>& inputs, StepValues& out, std::string& why) {
  if (!guards_hold(p, inputs, why)) return false;
  random_state::Position position = random_state::current();
  std::vector<BufferPtr> arguments(p.feeds.size());
  for (size_t a = 0; a < p.feeds.size(); ++a) {
    const Feed& feed = p.feeds[a];
    switch (feed.kind) {
      case Feed::Kind::frozen: arguments[a] = feed.frozen; break;
      case Feed::Kind::rng_seed:
      case Feed::Kind::rng_offset: {
        const uint64_t v = feed.kind == Feed::Kind::rng_seed ? position.seed : position.offset + feed.offset_from_entry;
        arguments[a] = runtime::from_host(std::as_bytes(std::span(&v, 1)), feed.device);
        break;
      }
      case Feed::Kind::existing:
        for (const Existing& source : feed.sources) {
          const std::shared_ptr<TensorImpl> impl = resolve(source, inputs);
          if (impl->view_is_stale()) {
            why = "a view fn reads is out of date: its base was updated in place since the trace";
            return false;
          }
          const BufferPtr& data = impl->data();
          if (!arguments[a]) {
            arguments[a] = data;
          } else if (arguments[a] != data) {
            why = "tensors that shared storage when traced (graph argument " + std::to_string(a) + ") no longer do";
            return false;
          }
        }
        break;
    }
  }
  std::vector<std::shared_ptr<TensorImpl>> targets;
  std::vector<runtime::Donation> donations;
  targets.reserve(p.rebinds.size());
  for (const Rebind& r : p.rebinds) {
    targets.push_back(resolve(r.target, inputs));
    if (r.entry_argument >= 0 && arguments[r.entry_argument] == targets.back()->data() &&
        targets.back()->data_is_private(1))
      donations.push_back({r.output, r.entry_argument});
  }

  std::vector<BufferPtr> buffers;
  if (p.executable) buffers = lazy::run_again(*p.executable, p.hash, arguments, donations);
  arguments.clear();
  random_state::advance(p.rng_blocks);

  std::vector<std::shared_ptr<TensorImpl>> made(buffers.size());
  auto output_tensor = [&](int32_t o) {
    if (!made[o]) {
      const OutputType& type = p.output_types[o];
      made[o] = std::make_shared<TensorImpl>(buffers[o], type.shape, type.dtype, type.device);
    }
    return made[o];
  };
  for (size_t i = 0; i < p.rebinds.size(); ++i) targets[i]->rebind_data(buffers[p.rebinds[i].output]);
  for (const GradSlot& slot : p.grads) resolve(slot.leaf, inputs)->grad() = output_tensor(slot.output);
  for (const Existing& leaf : p.grad_resets) resolve(leaf, inputs)->grad().reset();
  out.sizes = p.result_sizes;
  out.tensors.clear();
  for (const ResultSlot& r : p.results) {
    switch (r.kind) {
      case ResultSlot::Kind::undefined: out.tensors.emplace_back(); break;
      case ResultSlot::Kind::output: out.tensors.emplace_back(output_tensor(r.output)); break;
      case ResultSlot::Kind::existing: out.tensors.emplace_back(resolve(r.existing, inputs)); break;
      case ResultSlot::Kind::frozen:
        out.tensors.emplace_back(std::make_shared<TensorImpl>(r.frozen, r.shape, r.dtype, r.device));
        break;
    }
  }
  return true;
}

}  // namespace xlite::detail
