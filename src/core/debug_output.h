#pragma once
// Where XLITE_DEBUG's reports go: appended to XLITE_DEBUG_FILE when it is set, else to stderr. Each report
// is written whole under one lock, so reports from several threads do not interleave.
#include <string_view>

namespace xlite::debug_output {

int read_level();
// XLITE_DEBUG_LEVEL (XLITE_DEBUG=1 alone is 2); 0 when debug output is off. Inline: every node asks.
inline int level() {
  static const int debug = read_level();
  return debug;
}
void write(std::string_view report);

}  // namespace xlite::debug_output
