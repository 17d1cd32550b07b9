#include "tensor/tensor_impl.h"
#include "compiler/fusion.h"
#include "compiler/graph_dot.h"
#include "compiler/optimize.h"
#include "ir/graph.h"
#include "ir/stablehlo.h"
#include "lazy/graph_builder.h"
#include "lazy/sync.h"
#include "xlite/debug.h"
#include "xlite/error.h"

namespace xlite::debug {
namespace {
lazy::BuiltGraph pending_graph(const std::vector<Tensor>& tensors) {
  std::vector<ir::NodePtr> roots;
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw Error("[graph_text] a tensor is undefined");
    roots.push_back(t.impl()->node());
  }
  return lazy::build_graph(roots);
}
}  // namespace

std::string graph_text(const std::vector<Tensor>& tensors) { return ir::to_text(pending_graph(tensors).graph); }

std::string optimized_text(const std::vector<Tensor>& tensors) {
  const ir::Graph graph = compiler::optimize(pending_graph(tensors).graph);
  return ir::to_text(graph) + "fusion:\n" + compiler::describe(compiler::plan_fusion(graph));
}

std::string stablehlo(const std::vector<Tensor>& tensors) { return ir::to_stablehlo(pending_graph(tensors).graph); }

std::string graph_dot(const std::vector<Tensor>& tensors) { return compiler::fused_dot(pending_graph(tensors).graph); }
uint64_t graph_hash(const std::vector<Tensor>& tensors) { return pending_graph(tensors).graph.hash(); }

namespace {
std::vector<TensorImpl*> impls_of(const std::vector<Tensor>& tensors, const char* op) {
  std::vector<TensorImpl*> impls;
  for (const Tensor& t : tensors) {
    if (!t.defined()) throw Error(std::string("[") + op + "] a tensor is undefined");
    impls.push_back(t.impl().get());
  }
  return impls;
}
}  // namespace

MemoryStats memory_stats(const std::vector<Tensor>& tensors) {
  return lazy::planned_memory(impls_of(tensors, "memory_stats"));
}

std::vector<MemoryStep> memory_timeline(const std::vector<Tensor>& tensors) {
  return lazy::planned_program(impls_of(tensors, "memory_timeline"))->memory_timeline();
}

}  // namespace xlite::debug
