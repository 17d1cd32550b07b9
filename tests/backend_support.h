// Runs the pending graph of some tensors on a named backend in this process (XLITE_BACKEND picks one per
// process; compiler::compile_with takes any), so that one test checks the cpu backend and the reference.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "lazy/graph_builder.h"
#include "runtime/allocator.h"

namespace xlite_test {

// A buffer holding values, as a backend's argument.
template <class T>
xlite::BufferPtr Upload(const std::vector<T>& values) {
  xlite::BufferPtr buffer = xlite::runtime::allocator(xlite::Device{}).allocate(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(buffer->data(), values.data(), values.size() * sizeof(T));
  return buffer;
}

inline const std::vector<std::string>& Backends() {
  static const std::vector<std::string> names = {"cpu", "reference"};
  return names;
}

struct BackendRun {
  std::string error;  // the xlite::Error message, or "" when it ran
  std::vector<xlite::BufferPtr> outputs;
};

inline BackendRun RunOn(const std::vector<xlite::Tensor>& roots, const std::string& backend) {
  std::vector<xlite::ir::NodePtr> nodes;
  for (const xlite::Tensor& t : roots) nodes.push_back(t.impl()->node());
  BackendRun run;
  try {
    xlite::lazy::BuiltGraph built = xlite::lazy::build_graph(nodes);
    std::vector<xlite::BufferPtr> outputs = xlite::compiler::compile_with(built.graph, backend)->run(built.arguments);
    for (int32_t position : built.root_outputs) run.outputs.push_back(outputs[position]);
  } catch (const xlite::Error& e) {
    run.error = e.what();
  }
  return run;
}

// The values of t computed by the backend (an xlite::Error fails the test).
template <class T>
std::vector<T> ValuesOn(const xlite::Tensor& t, const std::string& backend) {
  BackendRun run = RunOn({t}, backend);
  EXPECT_EQ(run.error, "") << "on " << backend;
  if (!run.error.empty()) return {};
  const T* data = run.outputs[0]->as<T>();
  return std::vector<T>(data, data + t.numel());
}

}  // namespace xlite_test
