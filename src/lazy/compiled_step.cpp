// compile(fn): the signature of a call, and the choice between replaying a recorded program and tracing.
#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "tensor/live_tensors.h"
#include "core/random_state.h"
#include "core/debug_output.h"
#include "lazy/step_program.h"
#include "xlite/math_mode.h"
#include "xlite/autocast.h"
#include "xlite/autograd.h"
#include "xlite/error.h"
#include "xlite/lazy.h"
#include "xlite/metrics.h"

namespace xlite::detail {
namespace {

std::string input_text(const StepInput& input) {
  switch (input.kind) {
    case StepInput::Kind::value: return input.value;
    case StepInput::Kind::unguardable: return "a value compile() cannot guard";
    case StepInput::Kind::tensor: {
      const Tensor& t = input.tensor;
      if (!t.defined()) return "an undefined tensor";
      std::string text = type_text(t.dtype(), t.shape()) + " on " + t.device().str();
      if (t.requires_grad()) text += " requiring grad";
      return text;
    }
  }
  return "";
}

}  // namespace

std::string step_value_text(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

struct StepRunner::State {
  std::mutex call_mutex;
  std::atomic<std::thread::id> caller{};
  CompileOptions options;
  std::map<std::vector<std::string>, std::vector<Program>> programs;  // by signature
  std::map<std::vector<std::string>, uint64_t> last_hash;             // of each signature's last trace
  std::set<uint64_t> graphs;                                          // every graph traced
  std::vector<std::string> last_signature;
  StepCallInfo last;

  // The trace in progress.
  bool previous_eager = false;
  StepRecording recording;
  StepRecording* outer_recording = nullptr;
  bool replay_tried = false;
  std::vector<std::string> signature;
  std::vector<StepInput> trace_inputs;
  std::vector<const Buffer*> input_buffers;  // tensor inputs' data at entry
  uint64_t entry_seed = 0;

  // The arguments, then the modes a trace depends on: an autocast scope around the call changes the dtypes
  // fn's products compute in, as grad mode changes what it records.
  static constexpr size_t kModes = 4;
  std::vector<std::string> signature_of(const std::vector<StepInput>& inputs) const {
    std::vector<std::string> signature;
    signature.reserve(inputs.size() + kModes);
    for (const StepInput& input : inputs) signature.push_back(input_text(input));
    signature.push_back(is_grad_enabled() ? "grad mode on" : "grad mode off");
    signature.push_back(is_fast_math() ? "fast math on" : "fast math off");
    signature.push_back(is_excess_precision() ? "excess precision on" : "excess precision off");
    signature.push_back(is_autocast_enabled() ? "autocast " + std::string(dtype_name(get_autocast_dtype()))
                                              : "autocast off");
    return signature;
  }

  std::string signature_change(const std::vector<std::string>& now) const {
    if (last_signature.empty()) return "first call";
    if (now.size() != last_signature.size())
      return "the number of arguments changed from " + std::to_string(last_signature.size() - kModes) + " to " +
             std::to_string(now.size() - kModes);
    for (size_t i = 0; i < now.size(); ++i) {
      if (now[i] == last_signature[i]) continue;
      if (i + kModes >= now.size()) return now[i] + " (was " + last_signature[i] + ")";
      return "argument " + std::to_string(i) + " changed from " + last_signature[i] + " to " + now[i];
    }
    return "new signature";
  }
};

StepRunner::CallGuard::CallGuard(StepRunner& runner) : runner_(runner) {
  State& s = *runner.state_;
  if (s.caller.load() == std::this_thread::get_id())
    throw Error("[compile] fn calls its own compiled function while it runs");
  s.call_mutex.lock();
  s.caller = std::this_thread::get_id();
}

StepRunner::CallGuard::~CallGuard() {
  State& s = *runner_.state_;
  s.caller = std::thread::id{};
  s.call_mutex.unlock();
}

StepRunner::StepRunner(CompileOptions options) : state_(std::make_unique<State>()) { state_->options = options; }
StepRunner::~StepRunner() = default;

bool StepRunner::replay(const std::vector<StepInput>& inputs, StepValues& results) {
  State& s = *state_;
  s.last = {};
  s.replay_tried = true;
  if (s.options.force_retrace) {
    s.last.trace_reason = "force_retrace is set";
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].kind == StepInput::Kind::unguardable) {
      s.last.trace_reason = "argument " + std::to_string(i) + " has a type compile() cannot guard";
      return false;
    }
  }
  sync();  // earlier pending work is not part of the step
  std::vector<std::string> signature = s.signature_of(inputs);
  auto found = s.programs.find(signature);
  if (found == s.programs.end()) {
    s.last.trace_reason = s.signature_change(signature);
    return false;
  }
  std::vector<Program>& list = found->second;
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    std::string why;
    if (!it->confirmed) {
      if (s.last.trace_reason.empty()) s.last.trace_reason = it->unconfirmed;
      continue;
    }
    s.last.replayed = true;  // also when the program raises while it runs
    if (replay_program(*it, inputs, results, why)) {
      metrics::increment_counter("CompiledStepReplay");
      s.last_signature = std::move(signature);
      if (it != list.rbegin()) std::swap(*it, list.back());  // the most recently used is tried first
      return true;
    }
    s.last.replayed = false;
    if (s.last.trace_reason.empty()) s.last.trace_reason = why;
  }
  return false;
}

void StepRunner::begin_trace(const std::vector<StepInput>& inputs) {
  State& s = *state_;
  s.previous_eager = is_eager_mode();
  for (const StepInput& input : inputs)
    if (input.kind == StepInput::Kind::tensor && input.tensor.defined()) input.tensor.impl()->refresh_view();
  sync();  // earlier pending work is not part of this step
  eager_mode(false);
  in_place_log::begin();
  metrics::increment_counter("CompiledStepTrace");
  if (debug_output::level() >= 1 && !s.last.trace_reason.empty())
    std::fprintf(stderr, "[xlite] compile(fn): tracing: %s\n", s.last.trace_reason.c_str());
  if (!s.replay_tried) s.last = {false, s.options.force_retrace ? "force_retrace is set" : ""};
  s.replay_tried = false;
  s.signature = s.signature_of(inputs);
  s.trace_inputs = inputs;
  s.input_buffers.clear();
  for (const StepInput& input : inputs)
    s.input_buffers.push_back(
        input.kind == StepInput::Kind::tensor && input.tensor.defined() ? input.tensor.impl()->data().get() : nullptr);
  s.recording = StepRecording{};
  s.recording.first_tensor_id = TensorImpl::next_id();
  for (const StepInput& input : inputs)
    if (input.kind == StepInput::Kind::tensor && input.tensor.defined())
      s.recording.arguments.push_back(input.tensor.impl().get());
  s.recording.first_buffer_serial = Buffer::serial_now();
  random_state::Position entry = random_state::current();
  s.recording.entry_rng_offset = entry.offset;
  s.entry_seed = entry.seed;
  s.recording.full_graph = s.options.full_graph;
  s.outer_recording = StepRecording::active();
  StepRecording::set_active(&s.recording);
}

void StepRunner::end_trace(const StepValues* results) {
  State& s = *state_;
  if (s.options.max_different_graphs > 0) {
    const uint64_t hash = lazy::hash_of_this_thread();
    if (!s.graphs.count(hash) && s.graphs.size() >= static_cast<size_t>(s.options.max_different_graphs)) {
      abandon_trace();
      throw Error("[compile] fn traced a graph different from the " + std::to_string(s.graphs.size()) +
                  " it made before, more than max_different_graphs = " +
                  std::to_string(s.options.max_different_graphs) + " allows; it traced because " +
                  (s.last.trace_reason.empty() ? "it had not traced yet" : s.last.trace_reason));
    }
    s.graphs.insert(hash);
  }
  std::vector<std::pair<std::weak_ptr<TensorImpl>, const Buffer*>> updated = in_place_log::updated();
  in_place_log::end();  // drop the saved buffers first: they would block donation
  StepRecording::set_active(s.outer_recording);
  lazy::SyncRecord synced;
  try {
    lazy::sync_this_thread(lazy::SyncCause::compiled_step, &synced);
  } catch (...) {
    eager_mode(s.previous_eager);
    throw;
  }
  eager_mode(s.previous_eager);
  std::vector<StepInput> inputs = std::move(s.trace_inputs);
  if (s.options.force_retrace) return;
  Program p;
  std::string why =
      record_program(TraceFacts{s.recording, s.entry_seed, s.input_buffers, updated}, inputs, results, synced, p);
  s.last_signature = s.signature;
  if (!why.empty()) {
    metrics::increment_counter("CompiledStepNotReplayable");
    s.last.trace_reason = why;
    if (debug_output::level() >= 1)
      std::fprintf(stderr, "[xlite] compile(fn): this trace cannot be replayed: %s\n", why.c_str());
    if (s.options.full_graph)
      throw Error("[compile] compile(fn, {.full_graph = true}): this trace cannot be replayed: " + why);
    return;
  }
  uint64_t& previous = s.last_hash[s.signature];
  const uint64_t hash = p.hash;
  add_program(s.programs[s.signature], std::move(p), previous);
  previous = hash;
}

void StepRunner::abandon_trace() {
  State& s = *state_;
  StepRecording::set_active(s.outer_recording);
  s.trace_inputs.clear();
  in_place_log::rollback();
  eager_mode(s.previous_eager);
}

StepCallInfo StepRunner::last_call() const { return state_->last; }

}  // namespace xlite::detail
