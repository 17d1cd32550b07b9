#include "core/check.h"

#include <algorithm>
#include <string_view>

#include "xlite/error.h"

namespace xlite::detail {

void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  // The path from the source root: the build's absolute path says nothing to a reader of the report.
  std::string_view path(file);
  size_t root = std::string_view::npos;
  for (std::string_view top : {"/src/", "/tests/", "/testing/", "/tools/", "/fuzz/", "/bench/"})
    root = std::min(root, path.find(top));
  if (root != std::string_view::npos) path.remove_prefix(root + 1);
  std::string text = std::string(path) + ":" + std::to_string(line) + ": " + message;
  if (condition) text += std::string(" (check '") + condition + "' failed)";
  throw InternalError(text);
}

}  // namespace xlite::detail
