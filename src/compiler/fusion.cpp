#include "compiler/fusion.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/strided_view.h"
#include "ir/op_attrs.h"

namespace xlite::compiler {
namespace {
using ir::Instr;
using ir::OpClass;
using ir::OpId;

// A value is recomputed in at most this many regions before it is materialized instead.
constexpr size_t kMaxDuplication = 4;
// ... and only while the ops it is computed from (up to materialized values) are at most this many: a
// long chain of cheap ops (the transposes, pads and sums that assemble a qkv gradient from three head
// gradients) costs more to compute twice than to write once and read back.
constexpr size_t kMaxDuplicatedChain = 8;
// Chains of fused ops deeper than this are cut: compile time grows with the depth and code generation
// recurses along it.
constexpr int kMaxFusedDepth = 200;

std::string name(const ir::Graph& g, int32_t i) { return "%" + std::to_string(i) + " " + std::string(ir::op_name(g.instrs[i].op)); }

RegionKind kind_of(const Instr& instr, const FusionPolicy& policy = {}) {
  switch (ir::op_info(instr.op).cls) {
    case OpClass::Reduce:
    case OpClass::ArgReduce: return RegionKind::Reduce;
    case OpClass::Dot: return policy.library_takes(instr.dtype) ? RegionKind::Matmul : RegionKind::Fallback;
    case OpClass::Conv: return policy.library_takes(instr.dtype) ? RegionKind::Conv : RegionKind::Fallback;
    case OpClass::ScatterAdd: return RegionKind::Fallback;
    case OpClass::Leaf: case OpClass::Random: case OpClass::Convert: case OpClass::Unary: case OpClass::UnaryFloat:
    case OpClass::Predicate: case OpClass::Binary: case OpClass::Compare: case OpClass::Logical: case OpClass::Select:
    case OpClass::Reshape: case OpClass::Transpose: case OpClass::Broadcast: case OpClass::Slice: case OpClass::Concat:
    case OpClass::Pad: case OpClass::Flip: case OpClass::Gather: case OpClass::IndexSelect:
      return RegionKind::Loop;
  }
  return RegionKind::Loop;
}

bool same_rows(const Shape& a, const Shape& rows) {
  return a.size() == rows.size() + 1 && std::equal(rows.begin(), rows.end(), a.begin());
}

// Row fusion: a sum, max or min over the last dim whose result reaches one loop region only along its
// rows (a softmax's max and sum, a layernorm's mean and variance) is computed inside that loop, once
// per row, from the row the loop then reads again while it is still in cache: the data comes from
// memory once. This checks every path from the reduction `i` to the loop's root `r`: ops on the reduced
// rows, a broadcast back along the last dim, elementwise ops at the loop's own index, or the input of
// another row-fused reduction. Any other op on the way could read another row.
class RowFusion {
 public:
  RowFusion(const ir::Graph& graph, const std::vector<std::vector<int32_t>>& consumers, const std::vector<bool>& materialized)
      : graph_(graph), consumers_(consumers), materialized_(materialized), fused_(graph.instrs.size(), false) {}

  bool fused(int32_t i) const { return fused_[i]; }
  void set(int32_t i, bool fused) { fused_[i] = fused; }

  bool fits(int32_t i, int32_t r) const {
    const Instr& reduce = graph_.instrs[i];
    const Instr& root = graph_.instrs[r];
    if (reduce.op != OpId::reduce_sum && reduce.op != OpId::reduce_max && reduce.op != OpId::reduce_min) return false;
    if (kind_of(root) != RegionKind::Loop || root.op == OpId::parameter) return false;
    const Shape& s = root.shape;
    if (s.size() < 2 || s.back() <= 1) return false;  // the loop must run by rows
    const Shape rows(s.begin(), s.end() - 1);
    const Shape& input = graph_.instrs[reduce.operands[0]].shape;
    const auto& dims = reduce.attrs.get_ints(ir::AttrKey::dims);
    if (!same_rows(input, rows) || dims.size() != 1 || dims[0] != static_cast<int64_t>(rows.size())) return false;
    std::vector<bool> seen(graph_.instrs.size(), false);
    return paths_keep_rows(i, r, rows, seen);
  }

 private:
  bool row_shaped(const Shape& shape, const Shape& rows) const {
    return shape == rows || (same_rows(shape, rows) && shape.back() == 1);
  }

  bool paths_keep_rows(int32_t v, int32_t r, const Shape& rows, std::vector<bool>& seen) const {
    for (int32_t c : consumers_[v]) {
      if (seen[c]) continue;
      seen[c] = true;
      if (materialized_[c] && c != r) return false;  // another region reads it
      const Instr& instr = graph_.instrs[c];
      bool keeps_rows;
      if (ir::op_info(instr.op).cls == OpClass::Reduce) {
        keeps_rows = fused_[c] && same_rows(graph_.instrs[instr.operands[0]].shape, rows);
        if (keeps_rows) continue;  // its own paths were checked when it was fused
      } else if (instr.op == OpId::broadcast) {
        // From the reduced rows back to full rows: leading dims map to themselves.
        const Shape& from = graph_.instrs[instr.operands[0]].shape;
        const auto& dims = instr.attrs.get_ints(ir::AttrKey::dims);
        keeps_rows = row_shaped(from, rows) && same_rows(instr.shape, rows);
        for (size_t k = 0; keeps_rows && k < dims.size(); ++k) keeps_rows = dims[k] == static_cast<int64_t>(k);
      } else {
        keeps_rows = elementwise(graph_, instr) && (row_shaped(instr.shape, rows) || same_rows(instr.shape, rows));
      }
      if (!keeps_rows) return false;
      if (c != r && !paths_keep_rows(c, r, rows, seen)) return false;
    }
    return true;
  }

  const ir::Graph& graph_;
  const std::vector<std::vector<int32_t>>& consumers_;
  const std::vector<bool>& materialized_;
  std::vector<bool> fused_;
};
}  // namespace

bool elementwise(const ir::Graph& graph, const Instr& instr) {
  if (!ir::is_elementwise_class(ir::op_info(instr.op).cls)) return false;
  for (int32_t o : instr.operands)
    if (graph.instrs[o].shape != instr.shape) return false;
  return true;
}

FusionPlan plan_fusion(const ir::Graph& graph, const FusionPolicy& policy) {
  FusionPlan plan;
  const size_t n = graph.instrs.size();
  std::vector<bool> materialized(n, false);
  std::vector<std::string> why(n);
  auto materialize = [&](int32_t i, std::string reason) {
    if (!materialized[i]) why[i] = std::move(reason);
    materialized[i] = true;
  };
  auto materialize_root = [&](int32_t i) { materialize(i, "region root (" + std::string(ir::op_name(graph.instrs[i].op)) + ")"); };

  for (int32_t o : graph.outputs) materialize(o, "graph output");
  for (size_t i = 0; i < n; ++i) {
    const Instr& instr = graph.instrs[i];
    if (instr.op == OpId::parameter) materialize(i, "parameter");
    RegionKind kind = kind_of(instr, policy);
    // Reductions are decided below: a row reduction may be computed inside the loop that reads it.
    if (kind != RegionKind::Loop && kind != RegionKind::Reduce && instr.op != OpId::parameter)
      materialize_root(static_cast<int32_t>(i));
    if (kind == RegionKind::Matmul || kind == RegionKind::Conv || kind == RegionKind::Fallback) {
      for (int32_t o : instr.operands) {
        if (kind == RegionKind::Matmul && ir::is_matrix_transpose(graph.instrs[o])) {
          materialize(graph.instrs[o].operands[0], "operand of " + name(graph, static_cast<int32_t>(i)) + ", read transposed by the GEMM");
          continue;
        }
        materialize(o, "operand of " + name(graph, static_cast<int32_t>(i)) + ", which reads whole buffers");
      }
    }
  }

  // Walk consumers before producers: a fused value joins every region its consumers belong to.
  std::vector<std::vector<int32_t>> consumers(n);
  for (size_t i = 0; i < n; ++i)
    for (int32_t o : graph.instrs[i].operands) consumers[o].push_back(static_cast<int32_t>(i));
  std::vector<std::vector<int32_t>> regions_of(n);
  RowFusion rows(graph, consumers, materialized);
  for (size_t k = n; k-- > 0;) {
    const int32_t i = static_cast<int32_t>(k);
    if (materialized[i]) {
      regions_of[i] = {i};
      continue;
    }
    std::vector<int32_t> regions;
    for (int32_t c : consumers[i]) regions.insert(regions.end(), regions_of[c].begin(), regions_of[c].end());
    std::sort(regions.begin(), regions.end());
    regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
    if (kind_of(graph.instrs[i], policy) == RegionKind::Reduce) {
      if (regions.size() == 1 && rows.fits(i, regions[0])) {
        rows.set(i, true);
        regions_of[i] = std::move(regions);
      } else {
        materialize_root(i);
        regions_of[i] = {i};
      }
      continue;
    }
    const OpId op = graph.instrs[i].op;
    const bool leaf = op == OpId::constant || op == OpId::iota;
    // The ops that would be computed again in each extra region, counted up to one past the limit. A
    // reduction counts as one op: what it reads is computed once per row, not once per element.
    auto chain_length = [&] {
      std::vector<int32_t> stack = {i}, seen = {i};
      size_t count = 0;
      while (!stack.empty() && count <= kMaxDuplicatedChain) {
        const int32_t v = stack.back();
        stack.pop_back();
        ++count;
        if (kind_of(graph.instrs[v], policy) == RegionKind::Reduce) continue;
        for (int32_t o : graph.instrs[v].operands) {
          const OpId operand_op = graph.instrs[o].op;
          if (materialized[o] || operand_op == OpId::constant || operand_op == OpId::iota) continue;
          if (std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
          seen.push_back(o);
          stack.push_back(o);
        }
      }
      return count;
    };
    // Recomputing inside reductions costs arithmetic; writing the value and reading it back costs memory
    // traffic, which is what bounds these loops. So an expensive value may be recomputed by reductions
    // as long as at most one other region needs it.
    size_t elementwise_regions = 0;
    for (int32_t r : regions)
      if (kind_of(graph.instrs[r], policy) != RegionKind::Reduce) ++elementwise_regions;
    const bool expensive = ir::op_info(op).has(ir::kExpensive);
    if (regions.size() > 1 && expensive && elementwise_regions <= 1 && regions.size() <= kMaxDuplication) {
      plan.decisions.push_back("recompute " + name(graph, i) + " in " + std::to_string(regions.size()) +
                               " regions, all but " + std::to_string(elementwise_regions) + " of them reductions");
      regions_of[i] = std::move(regions);
    } else if (regions.size() > 1 && expensive) {
      materialize(i, std::string(ir::op_name(op)) + " is needed by " + std::to_string(regions.size()) +
                         " regions; computed once instead of duplicated");
      regions_of[i] = {i};
    } else if (regions.size() > kMaxDuplication && !leaf) {
      materialize(i, "needed by " + std::to_string(regions.size()) + " regions, more than " +
                         std::to_string(kMaxDuplication) + " copies");
      regions_of[i] = {i};
    } else if (regions.size() > 1 && !leaf && chain_length() > kMaxDuplicatedChain) {
      materialize(i, "needed by " + std::to_string(regions.size()) + " regions and computed from more than " +
                         std::to_string(kMaxDuplicatedChain) + " ops; computed once instead of duplicated");
      regions_of[i] = {i};
    } else {
      regions_of[i] = std::move(regions);
    }
  }

  std::vector<int> depth(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int deepest = 0;
    for (int32_t o : graph.instrs[i].operands)
      if (!materialized[o]) deepest = std::max(deepest, depth[o]);
    if (!materialized[i] && deepest + 1 > kMaxFusedDepth)
      materialize(static_cast<int32_t>(i), "fused chain deeper than " + std::to_string(kMaxFusedDepth) + " ops");
    depth[i] = materialized[i] ? 0 : deepest + 1;
  }

  // Cutting deep chains may have split a row-fused reduction from its loop: such a reduction becomes
  // a region of its own, until every one left reaches exactly one loop that fits it.
  std::vector<int32_t> row_loop(n, -1);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = n; k-- > 0;) {
      const int32_t i = static_cast<int32_t>(k);
      if (!rows.fused(i)) continue;
      std::vector<int32_t> roots;  // the materialized values its consumers lead to
      std::vector<bool> seen(n, false);
      std::vector<int32_t> stack = {i};
      while (!stack.empty()) {
        int32_t v = stack.back();
        stack.pop_back();
        for (int32_t c : consumers[v]) {
          if (seen[c]) continue;
          seen[c] = true;
          if (materialized[c]) roots.push_back(c);
          else stack.push_back(c);
        }
      }
      rows.set(i, false);  // fits() must not take it as already checked
      if (roots.size() == 1 && rows.fits(i, roots[0])) {
        rows.set(i, true);
        row_loop[i] = roots[0];
        continue;
      }
      materialize_root(i);
      changed = true;
    }
  }
  // A GEMM operand that is only a transpose, slice or reshape of a materialized value (the heads of an
  // attention split out of one qkv buffer) is read in place through strides instead of being copied
  // out first. Its ops join the GEMM's region as index arithmetic.
  std::vector<bool> gemm_view(n, false);
  auto read_only_by_gemms = [&](int32_t v) {
    for (int32_t c : consumers[v]) {
      if (kind_of(graph.instrs[c], policy) == RegionKind::Matmul) continue;
      if (!ir::is_matrix_transpose(graph.instrs[c]) || materialized[c]) return false;
      for (int32_t cc : consumers[c])
        if (kind_of(graph.instrs[cc], policy) != RegionKind::Matmul) return false;
    }
    return true;
  };
  std::vector<bool> in_place(n, false);  // values no longer copied out: their GEMMs read them through strides
  for (size_t i = 0; i < n; ++i) {
    if (kind_of(graph.instrs[i], policy) != RegionKind::Matmul) continue;
    for (int32_t o : graph.instrs[i].operands) {
      // The value materialized for this operand: itself, or the source of a transpose read by a flag.
      const int32_t copied = materialized[o] ? o : ir::is_matrix_transpose(graph.instrs[o]) ? graph.instrs[o].operands[0] : -1;
      if (copied < 0 || !materialized[copied] || why[copied].rfind("operand of ", 0) != 0 || !read_only_by_gemms(copied)) continue;
      auto view = strided_view(graph, copied, [&](int32_t v) { return v != copied && materialized[v]; });
      if (view && gemm_readable(graph.instrs[copied].shape, *view)) in_place[copied] = true;
    }
  }
  for (size_t v = 0; v < n; ++v)
    if (in_place[v]) materialized[v] = false;
  // Every GEMM operand must now be materialized or a view of materialized values; where one is not
  // (its chain ran through another value no longer copied), that value is copied out again.
  auto operand_view = [&](int32_t o) {
    auto view = strided_view(graph, o, [&](int32_t v) { return materialized[v]; });
    return view && gemm_readable(graph.instrs[o].shape, *view) ? view : std::nullopt;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n && !changed; ++i) {
      if (kind_of(graph.instrs[i], policy) != RegionKind::Matmul) continue;
      for (int32_t o : graph.instrs[i].operands) {
        if (operand_view(o)) continue;
        for (int32_t v = o;; v = graph.instrs[v].operands[0]) {
          if (in_place[v] && !materialized[v]) {
            materialized[v] = true;
            changed = true;
            break;
          }
          if (graph.instrs[v].operands.empty()) break;
        }
        if (changed) break;
      }
    }
  }
  std::vector<std::vector<std::optional<StridedView>>> operand_views(n);  // per GEMM, as its region reads them
  for (size_t i = 0; i < n; ++i) {
    if (kind_of(graph.instrs[i], policy) != RegionKind::Matmul) continue;
    for (int32_t o : graph.instrs[i].operands) {
      auto view = operand_view(o);
      operand_views[i].push_back(view);
      if (!view || view->base == o) continue;
      for (int32_t v = o; v != view->base; v = graph.instrs[v].operands[0]) gemm_view[v] = true;
      if (in_place[o] || (ir::is_matrix_transpose(graph.instrs[o]) && in_place[graph.instrs[o].operands[0]]))
        plan.decisions.push_back("read " + name(graph, o) + " in place from " + name(graph, view->base) +
                                 " through strides (" + name(graph, static_cast<int32_t>(i)) + "), no copy");
    }
  }

  for (size_t i = 0; i < n; ++i)
    if (rows.fused(static_cast<int32_t>(i)))
      plan.decisions.push_back("compute " + name(graph, static_cast<int32_t>(i)) + " row by row inside the loop of " +
                               name(graph, row_loop[i]) + ", from rows it reads again while they are in cache");

  for (size_t i = 0; i < n; ++i) {
    if (!materialized[i] || graph.instrs[i].op == OpId::parameter) continue;
    Region region{kind_of(graph.instrs[i], policy), static_cast<int32_t>(i), {}, {}, {}, std::move(operand_views[i])};
    // Members: everything reachable from the root without crossing a materialized value.
    std::vector<bool> in_region(n, false);
    std::vector<int32_t> stack = {region.root};
    in_region[i] = true;
    while (!stack.empty()) {
      int32_t v = stack.back();
      stack.pop_back();
      // Library calls read whole buffers: only a transpose the GEMM reads with a flag joins them.
      if (region.kind == RegionKind::Matmul || region.kind == RegionKind::Conv || region.kind == RegionKind::Fallback) {
        const bool gemm_reads = region.kind == RegionKind::Matmul && (ir::is_matrix_transpose(graph.instrs[v]) || gemm_view[v]);
        if (v != region.root && !gemm_reads) continue;
      }
      for (int32_t o : graph.instrs[v].operands) {
        if (in_region[o]) continue;
        in_region[o] = true;
        if (!materialized[o]) stack.push_back(o);
      }
    }
    std::unordered_map<int32_t, int32_t> local;
    for (size_t v = 0; v <= i; ++v) {
      if (!in_region[v]) continue;
      bool is_input = materialized[v] && static_cast<int32_t>(v) != region.root;
      if (is_input) {
        local[v] = static_cast<int32_t>(region.body.instrs.size());
        const ir::ParameterAttrs index{.index = static_cast<int64_t>(region.inputs.size())};
        Instr param{OpId::parameter, {}, index.to_attrs(), graph.instrs[v].shape, graph.instrs[v].dtype, graph.instrs[v].origin};
        region.inputs.push_back(static_cast<int32_t>(v));
        region.body.instrs.push_back(std::move(param));
      } else {
        region.members.push_back(static_cast<int32_t>(v));
        Instr copy = graph.instrs[v];
        for (int32_t& o : copy.operands) o = local.at(o);
        local[v] = static_cast<int32_t>(region.body.instrs.size());
        region.body.instrs.push_back(std::move(copy));
      }
    }
    region.body.num_parameters = static_cast<int64_t>(region.inputs.size());
    region.body.outputs = {local.at(region.root)};
    if (why[i] != "graph output" && why[i].rfind("region root", 0) != 0)
      plan.decisions.push_back("materialize " + name(graph, static_cast<int32_t>(i)) + ": " + why[i]);
    plan.decisions.push_back("region " + name(graph, static_cast<int32_t>(i)) + ": " + std::to_string(region.members.size()) +
                             " ops fused, " + std::to_string(region.inputs.size()) + " inputs");
    plan.regions.push_back(std::move(region));
  }
  return plan;
}

std::string describe(const FusionPlan& plan) {
  std::string out;
  for (const auto& line : plan.decisions) out += line + "\n";
  return out;
}

}  // namespace xlite::compiler
