#include "xlite/traced_flag.h"

#include "core/step_recording.h"

namespace xlite {

TracedFlag::TracedFlag(bool value, std::string what) : cell_(std::make_shared<detail::FlagCell>()) {
  cell_->value = value;
  cell_->what = std::move(what);
}

TracedFlag::TracedFlag(const TracedFlag& other) : TracedFlag(other.cell_->value.load(), other.cell_->what) {}

TracedFlag& TracedFlag::operator=(const TracedFlag& other) {
  set(other.cell_->value.load());
  return *this;
}

TracedFlag::~TracedFlag() = default;

bool TracedFlag::get() const {
  const bool value = cell_->value.load();
  if (StepRecording* recording = StepRecording::active()) recording->note_flag(cell_, value);
  return value;
}

void TracedFlag::set(bool value) { cell_->value = value; }

}  // namespace xlite
