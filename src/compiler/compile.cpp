#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/cpu/backend.h"
#include "backends/reference/backend.h"
#include "compiler/cache.h"
#include "core/environment.h"
#include "xlite/error.h"

namespace xlite::compiler {
namespace {
using BackendFactory = std::unique_ptr<runtime::Backend> (*)();

const std::map<std::string, BackendFactory>& factories() {
  static const std::map<std::string, BackendFactory> all = {
      {"cpu", &backends::cpu::make_backend},
      {"reference", &backends::reference::make_backend},
  };
  return all;
}

runtime::Backend& backend_named(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<runtime::Backend>> made;
  std::lock_guard lock(mutex);
  auto it = made.find(name);
  if (it != made.end()) return *it->second;
  auto factory = factories().find(name);
  if (factory == factories().end()) {
    std::string known;
    for (const auto& [n, f] : factories()) known += (known.empty() ? "" : ", ") + n;
    throw Error("[compile] unknown backend '" + name + "' (known: " + known + ")");
  }
  return *made.emplace(name, factory->second()).first->second;
}

const std::string& selected_name() {
  static const std::string name = env::settings().backend;
  return name;
}
}  // namespace

std::string backend_name() { return backend_named(selected_name()).name(); }

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

std::shared_ptr<runtime::Executable> compile_with(const ir::Graph& graph, const std::string& backend) {
  ir::verify(graph);
  return backend_named(backend).compile(graph);
}

std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) { return compile_with(graph, selected_name()); }

}  // namespace xlite::compiler
