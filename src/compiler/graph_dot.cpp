#include "compiler/graph_dot.h"

#include <sstream>

#include "compiler/optimize.h"
#include "ir/op_attrs.h"

namespace xlite::compiler {
namespace {

std::string node_label(const ir::Graph& graph, size_t i) {
  const ir::Instr& instr = graph.instrs[i];
  std::string label = "%" + std::to_string(i) + " " + std::string(ir::op_name(instr.op));
  if (instr.op == ir::OpId::parameter) label += " " + std::to_string(ir::ParameterAttrs::of(instr.attrs).index);
  label += "\\n" + std::string(dtype_name(instr.dtype)) + shape_str(instr.shape);
  if (instr.device != Device{}) label += " @" + instr.device.str();
  return label;
}

}  // namespace

std::string to_dot(const ir::Graph& graph, const FusionPlan& plan) {
  std::ostringstream out;
  out << "digraph xlite {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  // A value recomputed in several regions is drawn once, in the first.
  std::vector<bool> drawn(graph.instrs.size(), false);
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const Region& region = plan.regions[r];
    out << "  subgraph cluster_" << r << " {\n    label=\"" << region_kind_name(region.kind) << " %" << region.root
        << " " << ir::op_name(graph.instrs[region.root].op) << ": " << region.members.size() << " ops\";\n"
        << "    style=rounded;\n";
    for (int32_t v : region.members) {
      if (drawn[v]) continue;
      drawn[v] = true;
      out << "    v" << v << " [label=\"" << node_label(graph, v) << "\"" << (v == region.root ? ", penwidth=2" : "")
          << "];\n";
    }
    out << "  }\n";
  }
  for (size_t i = 0; i < graph.instrs.size(); ++i)
    if (!drawn[i])
      out << "  v" << i << " [label=\"" << node_label(graph, i) << "\""
          << (graph.instrs[i].op == ir::OpId::parameter ? ", shape=ellipse" : "") << "];\n";
  for (size_t i = 0; i < graph.instrs.size(); ++i)
    for (int32_t o : graph.instrs[i].operands) out << "  v" << o << " -> v" << i << ";\n";
  for (size_t k = 0; k < graph.outputs.size(); ++k)
    out << "  out" << k << " [label=\"output " << k << "\", shape=plaintext];\n  v" << graph.outputs[k] << " -> out"
        << k << ";\n";
  out << "}\n";
  return out.str();
}

std::string fused_dot(const ir::Graph& traced) {
  const ir::Graph graph = optimize(traced);
  return to_dot(graph, plan_fusion(graph));
}

}  // namespace xlite::compiler
