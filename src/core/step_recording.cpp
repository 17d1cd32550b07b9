#include "core/step_recording.h"

namespace xlite {
namespace {
thread_local StepRecording* active_recording = nullptr;
}

void StepRecording::note_read(const Buffer* data, std::weak_ptr<TensorImpl> impl, bool grad_leaf,
                              const TensorImpl* grad) {
  std::vector<Read>& readers = reads[data];
  for (const Read& read : readers)
    if (!read.impl.owner_before(impl) && !impl.owner_before(read.impl)) return;  // the same tensor
  readers.push_back({std::move(impl), grad_leaf, grad});
}

StepRecording* StepRecording::active() { return active_recording; }
void StepRecording::set_active(StepRecording* recording) { active_recording = recording; }

}  // namespace xlite
