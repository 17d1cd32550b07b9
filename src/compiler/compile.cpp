#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler/backend_registry.h"
#include "compiler/cache.h"
#include "compiler/pipeline.h"
#include "core/environment.h"
#include "core/runtime_context.h"
#include "xlite/device.h"
#include "xlite/error.h"

namespace xlite::compiler {
namespace {

struct Registry final : RuntimeState {
  mutable std::mutex mutex;
  std::map<std::string, BackendFactory> factories;
  std::map<std::string, std::unique_ptr<runtime::Backend>> made;
  std::string describe() const override {
    std::lock_guard lock(mutex);
    std::string text;
    for (const auto& [name, factory] : factories)
      text += (text.empty() ? "" : ", ") + name + (made.count(name) ? " (made)" : "");
    return text;
  }
};

Registry& storage() { return runtime_context::state<Registry>("backends"); }

// The registry, with the built-in backends in it. register_builtin_backends fills storage() directly, so
// that registering does not wait on this call_once.
Registry& registry() {
  static std::once_flag builtins;
  std::call_once(builtins, register_builtin_backends);
  return storage();
}

runtime::Backend& backend_named(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.made.find(name);
  if (it != r.made.end()) return *it->second;
  auto factory = r.factories.find(name);
  if (factory == r.factories.end()) {
    std::string known;
    for (const auto& [n, f] : r.factories) known += (known.empty() ? "" : ", ") + n;
    throw Error("[compile] unknown backend '" + name + "' (known: " + known + ")");
  }
  return *r.made.emplace(name, factory->second()).first->second;
}

const std::string& selected_name() {
  static const std::string name = env::settings().backend;
  return name;
}

class TargetBackend final : public runtime::Backend {
 public:
  explicit TargetBackend(std::unique_ptr<Target> target) : target_(std::move(target)) {}
  std::string name() const override { return target_->name(); }
  std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) override {
    return compile_for_target(graph, *target_);
  }

 private:
  std::unique_ptr<Target> target_;
};

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  Registry& r = storage();
  std::lock_guard lock(r.mutex);
  if (!r.factories.emplace(name, std::move(factory)).second)
    throw Error("[compile] a backend named '" + name + "' is registered already");
}

std::unique_ptr<runtime::Backend> backend_for_target(std::unique_ptr<Target> target) {
  return std::make_unique<TargetBackend>(std::move(target));
}

std::string backend_name() { return backend_named(selected_name()).name(); }

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : r.factories) names.push_back(name);
  return names;
}

std::shared_ptr<runtime::Executable> compile_with(const ir::Graph& graph, const std::string& backend) {
  ir::verify(graph);
  // Text IR may name any device; this process has XLITE_NUM_CPU_DEVICES of them.
  for (size_t i = 0; i < graph.instrs.size(); ++i)
    if (graph.instrs[i].device.index >= device_count())
      throw Error("[compile] %" + std::to_string(i) + " is on " + graph.instrs[i].device.str() + ", but there are " +
                  std::to_string(device_count()) + " devices (XLITE_NUM_CPU_DEVICES sets how many)");
  return backend_named(backend).compile(graph);
}

std::shared_ptr<runtime::Executable> compile(const ir::Graph& graph) { return compile_with(graph, selected_name()); }

}  // namespace xlite::compiler
