#include <cstdlib>
#include <memory>
#include <string>

#include "backends/reference/backend.h"
#include "compiler/cache.h"
#include "xlite/error.h"

namespace xlite::compiler {
namespace {
runtime::Backend& selected_backend() {
  static std::unique_ptr<runtime::Backend> backend = [] {
    const char* env = std::getenv("XLITE_BACKEND");
    std::string name = env && *env ? env : "reference";
    if (name == "reference") return backends::reference::make_backend();
    throw Error("[compile] unknown backend XLITE_BACKEND=" + name + " (known: reference)");
  }();
  return *backend;
}
}  // namespace

std::string backend_name() { return selected_backend().name(); }

std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) {
  ir::verify(graph);
  return selected_backend().compile(graph);
}

}  // namespace xlite::compiler
