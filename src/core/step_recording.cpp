#include "core/step_recording.h"

#include "xlite/error.h"

namespace xlite {
namespace {
thread_local StepRecording* active_recording = nullptr;
}

void StepRecording::note_read(const Buffer* data, std::weak_ptr<TensorImpl> impl) {
  std::vector<Read>& readers = reads[data];
  for (const Read& read : readers)
    if (!read.impl.owner_before(impl) && !impl.owner_before(read.impl)) return;  // the same tensor
  readers.push_back({std::move(impl)});
}

void StepRecording::note_grad(const TensorImpl* tensor, std::weak_ptr<TensorImpl> handle, const TensorImpl* grad,
                              bool reset) {
  auto [state, first] = grads.try_emplace(tensor, GradState{std::move(handle), grad});
  if (!reset) return;
  state->second.reset = true;
  if (first) state->second.reset_first = true;
}

void StepRecording::note_flag(const std::shared_ptr<const detail::FlagCell>& cell, bool value) {
  for (const FlagRead& read : flags)
    if (read.cell.lock() == cell) return;
  flags.push_back({cell, value});
}

StepRecording* StepRecording::active() { return active_recording; }
void StepRecording::set_active(StepRecording* recording) { active_recording = recording; }

void note_run_in_trace(StepRecording& recording, const char* op, const char* what) {
  if (recording.full_graph)
    throw Error(std::string("[") + op + "] compile(fn, {.full_graph = true}): fn " + what +
                " while tracing, which splits the step into several graphs and makes it depend on data; move "
                "it out of fn, or compile without full_graph");
  if (recording.ran_mid_trace.empty()) recording.ran_mid_trace = std::string(what) + " (" + op + ")";
}

}  // namespace xlite
