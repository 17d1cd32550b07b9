#pragma once
// Where user code called into xlite. A stack is captured cheaply as return addresses and symbolised only
// when printed, with elfutils' libdw: function, file and line from the DWARF of each module, inlined calls
// unfolded into frames of their own. xlite's own frames (its sources and public headers), system headers
// and code without line information are left out, so the first frame is the user's line.
#include <cstdint>
#include <string>
#include <vector>

namespace xlite::call_site {

struct Frame {
  std::string function;
  std::string file;
  int line = 0;
  bool operator==(const Frame&) const = default;
};

class Stack {
 public:
  // The calling thread's stack below this call (about a microsecond: no symbols are read).
  static Stack capture();
  // Up to `max` of its user frames, innermost first.
  std::vector<Frame> user_frames(size_t max) const;
  bool empty() const { return pcs_.empty(); }

 private:
  std::vector<uintptr_t> pcs_;
};

// "file:line (function)".
std::string describe(const Frame& frame);
// One frame a line, each after `indent`; "(no user frame with line information: build with -g)" when none.
std::string describe(const std::vector<Frame>& frames, const std::string& indent);

}  // namespace xlite::call_site
