#include "compiler/fusion.h"

#include <algorithm>
#include <optional>
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
// How many values per_row_input_of_reduction looks through for the row reduction a per-row value reads.
constexpr size_t kMaxRowSearch = 64;
// Masks of fewer elements are computed where they are read: a buffer this small costs little to keep.
constexpr int64_t kMinCompactMask = int64_t{1} << 16;
// A row reduction is computed again inside each of several loops only while its row stays in a core's
// cache between them (a quarter of a 1 MiB L2): then each loop reads its rows from memory once, where a
// reduction of its own would read them once more. Longer rows come from memory for each loop.
constexpr int64_t kMaxRecomputedRowBytes = int64_t{256} << 10;

std::string name(const ir::Graph& g, int32_t i) {
  return "%" + std::to_string(i) + " " + std::string(ir::op_name(g.instrs[i].op));
}

std::string names(const ir::Graph& g, const std::vector<int32_t>& values) {
  std::string out;
  for (size_t k = 0; k < values.size(); ++k)
    out += (k == 0 ? "" : k + 1 == values.size() ? " and " : ", ") + name(g, values[k]);
  return out;
}

RegionKind kind_of(const Instr& instr, const FusionPolicy& policy = {}) {
  switch (ir::op_info(instr.op).cls) {
    case OpClass::Reduce:
    case OpClass::ArgReduce: return RegionKind::Reduce;
    case OpClass::Dot: return policy.matmul_takes(instr.dtype) ? RegionKind::Matmul : RegionKind::Fallback;
    case OpClass::Conv: return policy.conv_takes(instr.dtype) ? RegionKind::Conv : RegionKind::Fallback;
    case OpClass::ScatterAdd:
    case OpClass::Scan:
    case OpClass::Sort:
    case OpClass::Barrier: return RegionKind::Fallback;
    case OpClass::Transfer: return RegionKind::Transfer;
    case OpClass::CustomCall:
    case OpClass::CustomOutput: return RegionKind::CustomCall;
    case OpClass::Leaf:
    case OpClass::Random:
    case OpClass::Convert:
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::Predicate:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Logical:
    case OpClass::Select:
    case OpClass::Reshape:
    case OpClass::Transpose:
    case OpClass::Broadcast:
    case OpClass::Slice:
    case OpClass::Concat:
    case OpClass::Pad:
    case OpClass::Flip:
    case OpClass::Gather:
    case OpClass::IndexSelect: return RegionKind::Loop;
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
// another row-fused reduction. Any other op on the way could read another row. A reduction that several
// loops read (a loss's max and sum, which its gradient reads too) is computed in each of them.
class RowFusion {
 public:
  RowFusion(const ir::Graph& graph, const std::vector<std::vector<int32_t>>& consumers,
            const std::vector<bool>& materialized)
      : graph_(graph), consumers_(consumers), materialized_(materialized), fused_(graph.instrs.size(), false) {}

  bool fused(int32_t i) const { return fused_[i]; }
  void set(int32_t i, bool fused) { fused_[i] = fused; }

  bool fits(int32_t i, const std::vector<int32_t>& loops) const {
    const Instr& reduce = graph_.instrs[i];
    if (!row_reduction(reduce) || loops.empty()) return false;
    const Instr& input = graph_.instrs[reduce.operands[0]];
    const Shape rows(input.shape.begin(), input.shape.end() - 1);
    if (loops.size() > 1 && input.shape.back() * dtype_size(input.dtype) > kMaxRecomputedRowBytes) return false;
    for (int32_t r : loops) {
      const Instr& root = graph_.instrs[r];
      if (kind_of(root) != RegionKind::Loop || root.op == OpId::parameter) return false;
      // The loop runs by these rows: over each row's elements (a softmax), or over the rows themselves, one
      // element per row (the per-row loss that a mean over the batch then reads).
      const bool by_elements = same_rows(root.shape, rows) && root.shape.back() > 1;
      if (!by_elements && !row_shaped(root.shape, rows)) return false;
    }
    std::vector<bool> seen(graph_.instrs.size(), false);
    return paths_keep_rows(i, loops, rows, seen);
  }

  // A sum, max or min over the last dim of an input with rows, which a loop over those rows can host.
  bool row_reduction(const Instr& reduce) const {
    if (reduce.op != OpId::reduce_sum && reduce.op != OpId::reduce_max && reduce.op != OpId::reduce_min) return false;
    const Shape& input = graph_.instrs[reduce.operands[0]].shape;
    const auto& dims = ir::ReduceAttrs::of(reduce.attrs).dims;
    return input.size() >= 2 && dims.size() == 1 && dims[0] == static_cast<int64_t>(input.size()) - 1;
  }

  // Whether `shape` holds one value per row of row reduction `reduce` (keepdim or not).
  bool per_row_of(const Shape& shape, const Instr& reduce) const {
    const Shape& input = graph_.instrs[reduce.operands[0]].shape;
    return row_shaped(shape, Shape(input.begin(), input.end() - 1));
  }

 private:
  static bool row_shaped(const Shape& shape, const Shape& rows) {
    return shape == rows || (same_rows(shape, rows) && shape.back() == 1);
  }

  // A gather along the last dim reads each output row from the same row of its operand.
  bool gathers_within_rows(const Instr& gather, const Shape& rows) const {
    const Shape& from = graph_.instrs[gather.operands[0]].shape;
    return ir::DimAttrs::of(gather.attrs).dim == static_cast<int64_t>(rows.size()) && same_rows(from, rows) &&
           same_rows(gather.shape, rows);
  }

  bool paths_keep_rows(int32_t v, const std::vector<int32_t>& loops, const Shape& rows, std::vector<bool>& seen) const {
    for (int32_t c : consumers_[v]) {
      if (seen[c]) continue;
      seen[c] = true;
      const bool loop_root = std::find(loops.begin(), loops.end(), c) != loops.end();
      if (materialized_[c] && !loop_root) return false;  // another region reads it
      const Instr& instr = graph_.instrs[c];
      bool keeps_rows;
      if (ir::op_info(instr.op).cls == OpClass::Reduce) {
        keeps_rows = fused_[c] && same_rows(graph_.instrs[instr.operands[0]].shape, rows);
        if (keeps_rows) continue;  // its own paths were checked when it was fused
      } else if (instr.op == OpId::broadcast) {
        // From the reduced rows back to full rows: leading dims map to themselves.
        const Shape& from = graph_.instrs[instr.operands[0]].shape;
        const auto& dims = ir::BroadcastAttrs::of(instr.attrs).dims;
        keeps_rows = row_shaped(from, rows) && same_rows(instr.shape, rows);
        for (size_t k = 0; keeps_rows && k < dims.size(); ++k) keeps_rows = dims[k] == static_cast<int64_t>(k);
      } else if (instr.op == OpId::gather) {
        keeps_rows = gathers_within_rows(instr, rows);
      } else if (instr.op == OpId::reshape) {
        keeps_rows = row_shaped(graph_.instrs[instr.operands[0]].shape, rows) && row_shaped(instr.shape, rows);
      } else {
        keeps_rows = elementwise(graph_, instr) && (row_shaped(instr.shape, rows) || same_rows(instr.shape, rows));
      }
      if (!keeps_rows) return false;
      if (!loop_root && !paths_keep_rows(c, loops, rows, seen)) return false;
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

namespace {

// A materialized value and why, as the planner decided it.
struct Materialization {
  MaterializeReason reason;
  std::string detail;  // the reason as text: "operand of %3 dot, which reads whole buffers"
};

// plan_fusion's state and its phases, in the order they run.
class FusionPlanner {
 public:
  FusionPlanner(const ir::Graph& graph, const FusionPolicy& policy)
      : graph_(graph),
        n_(graph.instrs.size()),
        kinds_(n_),
        materialized_(n_, false),
        why_(n_),
        consumers_(n_),
        regions_of_(n_),
        rows_(graph, consumers_, materialized_),
        row_loops_(n_),
        gemm_view_(n_, false),
        in_place_(n_, false),
        operand_views_(n_) {
    for (size_t i = 0; i < n_; ++i) {
      kinds_[i] = kind_of(graph.instrs[i], policy);
      for (int32_t o : graph.instrs[i].operands) consumers_[o].push_back(static_cast<int32_t>(i));
    }
  }

  FusionPlan run() {
    materialize_what_must_be_in_buffers();
    assign_values_to_regions();
    cut_deep_chains();
    settle_row_fused_reductions();
    read_gemm_operands_in_place();
    build_regions();
    return std::move(plan_);
  }

 private:
  void materialize(int32_t i, MaterializeReason reason, std::string detail) {
    if (!materialized_[i]) why_[i] = Materialization{reason, std::move(detail)};
    materialized_[i] = true;
  }
  void materialize_root(int32_t i) {
    materialize(i, MaterializeReason::region_root,
                "region root (" + std::string(ir::op_name(graph_.instrs[i].op)) + ")");
  }
  void decide(FusionChoice choice, int32_t value, std::string text,
              std::optional<MaterializeReason> reason = std::nullopt) {
    plan_.decisions.push_back({choice, value, reason, std::move(text)});
  }
  bool library_call(int32_t i) const {
    return kinds_[i] == RegionKind::Matmul || kinds_[i] == RegionKind::Conv || kinds_[i] == RegionKind::Fallback ||
           kinds_[i] == RegionKind::Transfer || kinds_[i] == RegionKind::CustomCall;
  }

  // Outputs, parameters and the results of library calls and fallbacks live in buffers, and so do the
  // operands those read whole (a transpose a GEMM reads through a flag leaves its source in the buffer).
  void materialize_what_must_be_in_buffers() {
    for (int32_t o : graph_.outputs) materialize(o, MaterializeReason::graph_output, "graph output");
    for (size_t k = 0; k < n_; ++k) {
      const auto i = static_cast<int32_t>(k);
      const Instr& instr = graph_.instrs[i];
      if (instr.op == OpId::parameter) {
        materialize(i, MaterializeReason::parameter, "parameter");
        continue;
      }
      // Reductions are decided later: a row reduction may be computed inside the loop that reads it.
      if (!library_call(i)) continue;
      materialize_root(i);
      for (int32_t o : instr.operands) {
        if (kinds_[i] == RegionKind::Matmul && ir::is_matrix_transpose(graph_.instrs[o])) {
          materialize(graph_.instrs[o].operands[0], MaterializeReason::transposed_library_operand,
                      "operand of " + name(graph_, i) + ", read transposed by the GEMM");
          continue;
        }
        materialize(o, MaterializeReason::library_operand,
                    "operand of " + name(graph_, i) + ", which reads whole buffers");
      }
    }
  }

  // The ops that would be computed again in each extra region, counted up to one past the limit. A
  // reduction counts as one op: what it reads is computed once per row, not once per element.
  size_t chain_length(int32_t i) const {
    std::vector<int32_t> stack = {i}, seen = {i};
    size_t count = 0;
    while (!stack.empty() && count <= kMaxDuplicatedChain) {
      const int32_t v = stack.back();
      stack.pop_back();
      ++count;
      if (kinds_[v] == RegionKind::Reduce) continue;
      for (int32_t o : graph_.instrs[v].operands) {
        const OpId operand_op = graph_.instrs[o].op;
        if (materialized_[o] || operand_op == OpId::constant || operand_op == OpId::iota) continue;
        if (std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
        seen.push_back(o);
        stack.push_back(o);
      }
    }
    return count;
  }

  // Consumers before producers: a value not materialized joins every region its consumers belong to,
  // unless duplicating it would cost more than a buffer (expensive, too many copies, a long chain).
  void assign_values_to_regions() {
    for (size_t k = n_; k-- > 0;) {
      const auto i = static_cast<int32_t>(k);
      if (materialized_[i]) {
        regions_of_[i] = {i};
        continue;
      }
      std::vector<int32_t> regions;
      for (int32_t c : consumers_[i]) regions.insert(regions.end(), regions_of_[c].begin(), regions_of_[c].end());
      std::sort(regions.begin(), regions.end());
      regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
      if (kinds_[i] == RegionKind::Reduce) {
        // In several loops, what the reduction reads is computed in each of them too: only a short chain,
        // or its values would be written out once for all of them (a buffer that lives until the last).
        const bool recomputable =
            regions.size() == 1 || chain_length(graph_.instrs[i].operands[0]) <= kMaxDuplicatedChain;
        if (recomputable && regions.size() <= kMaxDuplication && rows_.fits(i, regions)) {
          rows_.set(i, true);
          regions_of_[i] = std::move(regions);
        } else {
          materialize_root(i);
          regions_of_[i] = {i};
        }
        continue;
      }
      if (const std::optional<int32_t> compared = compared_buffer(i)) {
        materialize(i, MaterializeReason::compact_mask,
                    "a mask of " + name(graph_, *compared) + " at a byte per element, so that " +
                        name(graph_, *compared) + " may die before the mask is read");
        regions_of_[i] = {i};
        continue;
      }
      if (regions.size() == 1 && per_row_input_of_reduction(i, regions[0])) {
        materialize(
            i, MaterializeReason::per_row_input,
            "one value per row, computed from row reductions and reduced across rows by " + name(graph_, regions[0]));
        regions_of_[i] = {i};
        continue;
      }
      const OpId op = graph_.instrs[i].op;
      const bool leaf = op == OpId::constant || op == OpId::iota;
      // Recomputing inside reductions costs arithmetic; writing the value and reading it back costs memory
      // traffic, which is what bounds these loops. So an expensive value may be recomputed by reductions
      // as long as at most one other region needs it. A loop that reads it only through a row reduction
      // computed inside it (a loss per row) counts as a reduction.
      std::vector<int32_t> read_elementwise;
      for (int32_t c : consumers_[i])
        if (kinds_[c] != RegionKind::Reduce)
          for (int32_t r : regions_of_[c])
            if (kinds_[r] != RegionKind::Reduce) read_elementwise.push_back(r);
      std::sort(read_elementwise.begin(), read_elementwise.end());
      const auto elementwise_regions =
          static_cast<size_t>(std::unique(read_elementwise.begin(), read_elementwise.end()) - read_elementwise.begin());
      const bool expensive = ir::op_info(op).has(ir::kExpensive);
      if (regions.size() > 1 && expensive && elementwise_regions <= 1 && regions.size() <= kMaxDuplication) {
        decide(FusionChoice::recompute, i,
               "recompute " + name(graph_, i) + " in " + std::to_string(regions.size()) + " regions, all but " +
                   std::to_string(elementwise_regions) + " of them reductions");
        regions_of_[i] = std::move(regions);
      } else if (regions.size() > 1 && expensive) {
        materialize(i, MaterializeReason::shared_expensive,
                    std::string(ir::op_name(op)) + " is needed by " + std::to_string(regions.size()) +
                        " regions; computed once instead of duplicated");
        regions_of_[i] = {i};
      } else if (regions.size() > kMaxDuplication && !leaf) {
        materialize(i, MaterializeReason::too_many_copies,
                    "needed by " + std::to_string(regions.size()) + " regions, more than " +
                        std::to_string(kMaxDuplication) + " copies");
        regions_of_[i] = {i};
      } else if (regions.size() > 1 && !leaf && chain_length(i) > kMaxDuplicatedChain) {
        materialize(i, MaterializeReason::long_chain,
                    "needed by " + std::to_string(regions.size()) + " regions and computed from more than " +
                        std::to_string(kMaxDuplicatedChain) + " ops; computed once instead of duplicated");
        regions_of_[i] = {i};
      } else {
        regions_of_[i] = std::move(regions);
      }
    }
  }

  // The buffer that comparison `i` compares with a constant, when keeping the comparison instead may let the
  // buffer die early: a relu's gradient reads its output only through `output > 0`, while the output lives
  // in a buffer (a GEMM's operand) that other readers need, until the last of them. The mask takes a byte
  // per element where the buffer takes four or more; the schedule then runs its other readers early.
  std::optional<int32_t> compared_buffer(int32_t i) const {
    const Instr& instr = graph_.instrs[i];
    if (ir::op_info(instr.op).cls != OpClass::Compare || numel(instr.shape) < kMinCompactMask) return std::nullopt;
    auto constant = [&](int32_t v) {
      const Instr& operand = graph_.instrs[v];
      return operand.op == OpId::constant ||
             (operand.op == OpId::broadcast && graph_.instrs[operand.operands[0]].op == OpId::constant);
    };
    for (int k = 0; k < 2; ++k) {
      const int32_t buffer = instr.operands[k], other = instr.operands[1 - k];
      const Instr& value = graph_.instrs[buffer];
      if (!constant(other) || !materialized_[buffer] || value.op == OpId::parameter) continue;
      if (value.shape != instr.shape || dtype_size(value.dtype) < 4 || consumers_[buffer].size() < 2) continue;
      // A reader of the mask that reads the buffer too (a leaky relu's select) keeps the buffer alive anyway.
      const bool read_beside = std::any_of(consumers_[i].begin(), consumers_[i].end(), [&](int32_t c) {
        const std::vector<int32_t>& operands = graph_.instrs[c].operands;
        return std::find(operands.begin(), operands.end(), buffer) != operands.end();
      });
      if (read_beside) continue;
      return buffer;
    }
    return std::nullopt;
  }

  // The input of reduction `region` that holds one value per row of a row reduction it is computed from (a
  // loss per row, from a log-softmax's max and sum, that a mean then reads). Inside the reduction's loop,
  // which runs across the rows, the row reductions could only be regions of their own, each reading every
  // row from memory; in a loop of its own, over the rows, the value computes them row by row, reading each
  // row once, and the rows split across threads.
  bool per_row_input_of_reduction(int32_t i, int32_t region) const {
    if (kinds_[region] != RegionKind::Reduce || graph_.instrs[region].operands[0] != i) return false;
    const Shape& shape = graph_.instrs[i].shape;
    std::vector<int32_t> stack = {i}, seen = {i};
    while (!stack.empty() && seen.size() <= kMaxRowSearch) {
      const int32_t v = stack.back();
      stack.pop_back();
      for (int32_t o : graph_.instrs[v].operands) {
        if (materialized_[o] || std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
        seen.push_back(o);
        const Instr& operand = graph_.instrs[o];
        if (kinds_[o] == RegionKind::Reduce) {
          if (rows_.row_reduction(operand) && rows_.per_row_of(shape, operand)) return true;
          continue;
        }
        stack.push_back(o);
      }
    }
    return false;
  }

  // Compile time grows with the depth of a fused chain, and code generation recurses along it.
  void cut_deep_chains() {
    std::vector<int> depth(n_, 0);
    for (size_t i = 0; i < n_; ++i) {
      int deepest = 0;
      for (int32_t o : graph_.instrs[i].operands)
        if (!materialized_[o]) deepest = std::max(deepest, depth[o]);
      if (!materialized_[i] && deepest + 1 > kMaxFusedDepth)
        materialize(static_cast<int32_t>(i), MaterializeReason::deep_chain,
                    "fused chain deeper than " + std::to_string(kMaxFusedDepth) + " ops");
      depth[i] = materialized_[i] ? 0 : deepest + 1;
    }
  }

  // Cutting deep chains may have split a row-fused reduction from its loop: such a reduction becomes a
  // region of its own, until every one left reaches exactly one loop that fits it.
  void settle_row_fused_reductions() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = n_; k-- > 0;) {
        const auto i = static_cast<int32_t>(k);
        if (!rows_.fused(i)) continue;
        std::vector<int32_t> roots;  // the materialized values its consumers lead to
        std::vector<bool> seen(n_, false);
        std::vector<int32_t> stack = {i};
        while (!stack.empty()) {
          int32_t v = stack.back();
          stack.pop_back();
          for (int32_t c : consumers_[v]) {
            if (seen[c]) continue;
            seen[c] = true;
            if (materialized_[c])
              roots.push_back(c);
            else
              stack.push_back(c);
          }
        }
        rows_.set(i, false);  // fits() must not take it as already checked
        std::sort(roots.begin(), roots.end());
        if (roots.size() <= kMaxDuplication && rows_.fits(i, roots)) {
          rows_.set(i, true);
          row_loops_[i] = std::move(roots);
          continue;
        }
        materialize_root(i);
        changed = true;
      }
    }
  }

  bool read_only_by_gemms(int32_t v) const {
    for (int32_t c : consumers_[v]) {
      if (kinds_[c] == RegionKind::Matmul) continue;
      if (!ir::is_matrix_transpose(graph_.instrs[c]) || materialized_[c]) return false;
      for (int32_t cc : consumers_[c])
        if (kinds_[cc] != RegionKind::Matmul) return false;
    }
    return true;
  }

  std::optional<StridedView> operand_view(int32_t o) const {
    auto view = strided_view(graph_, o, [&](int32_t v) { return materialized_[v]; });
    return view && gemm_readable(graph_.instrs[o].shape, *view) ? view : std::nullopt;
  }

  // A GEMM operand that is only a transpose, slice or reshape of a materialized value (the heads of an
  // attention split out of one qkv buffer) is read in place through strides instead of being copied
  // out first. Its ops join the GEMM's region as index arithmetic.
  void read_gemm_operands_in_place() {
    for (size_t i = 0; i < n_; ++i) {
      if (kinds_[i] != RegionKind::Matmul) continue;
      for (int32_t o : graph_.instrs[i].operands) {
        // The value materialized for this operand: itself, or the source of a transpose read by a flag.
        const int32_t copied = materialized_[o]                            ? o
                               : ir::is_matrix_transpose(graph_.instrs[o]) ? graph_.instrs[o].operands[0]
                                                                           : -1;
        if (copied < 0 || !materialized_[copied] || !why_[copied] || !read_only_by_gemms(copied)) continue;
        const MaterializeReason reason = why_[copied]->reason;
        if (reason != MaterializeReason::library_operand && reason != MaterializeReason::transposed_library_operand)
          continue;
        auto view = strided_view(graph_, copied, [&](int32_t v) { return v != copied && materialized_[v]; });
        if (view && gemm_readable(graph_.instrs[copied].shape, *view)) in_place_[copied] = true;
      }
    }
    for (size_t v = 0; v < n_; ++v)
      if (in_place_[v]) materialized_[v] = false;
    // Every GEMM operand must now be materialized or a view of materialized values; where one is not
    // (its chain ran through another value no longer copied), that value is copied out again.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < n_ && !changed; ++i) {
        if (kinds_[i] != RegionKind::Matmul) continue;
        for (int32_t o : graph_.instrs[i].operands) {
          if (operand_view(o)) continue;
          for (int32_t v = o;; v = graph_.instrs[v].operands[0]) {
            if (in_place_[v] && !materialized_[v]) {
              materialized_[v] = true;
              changed = true;
              break;
            }
            if (graph_.instrs[v].operands.empty()) break;
          }
          if (changed) break;
        }
      }
    }
    for (size_t k = 0; k < n_; ++k) {
      const auto i = static_cast<int32_t>(k);
      if (kinds_[i] != RegionKind::Matmul) continue;
      for (int32_t o : graph_.instrs[i].operands) {
        auto view = operand_view(o);
        operand_views_[i].push_back(view);
        if (!view || view->base == o) continue;
        for (int32_t v = o; v != view->base; v = graph_.instrs[v].operands[0]) gemm_view_[v] = true;
        if (in_place_[o] || (ir::is_matrix_transpose(graph_.instrs[o]) && in_place_[graph_.instrs[o].operands[0]]))
          decide(FusionChoice::read_in_place, o,
                 "read " + name(graph_, o) + " in place from " + name(graph_, view->base) + " through strides (" +
                     name(graph_, i) + "), no copy");
      }
    }
    for (size_t k = 0; k < n_; ++k) {
      const auto i = static_cast<int32_t>(k);
      if (rows_.fused(i))
        decide(FusionChoice::compute_by_rows, i,
               "compute " + name(graph_, i) + " row by row inside the loop" + (row_loops_[i].size() > 1 ? "s" : "") +
                   " of " + names(graph_, row_loops_[i]) + ", from rows it reads again while they are in cache");
    }
  }

  // For a per-row input, whether its loop computes row reductions by rows: they may have become regions of
  // their own after it was materialized (read by other regions too, rows too long).
  std::string by_rows_note(int32_t i) const {
    if (!why_[i] || why_[i]->reason != MaterializeReason::per_row_input) return "";
    for (size_t j = 0; j < n_; ++j)
      if (rows_.fused(static_cast<int32_t>(j)) &&
          std::find(row_loops_[j].begin(), row_loops_[j].end(), i) != row_loops_[j].end())
        return "; its own loop computes them by rows";
    return "; its row reductions are regions of their own";
  }

  // One region per materialized value: its root and everything reachable from it without crossing another
  // materialized value, as a graph of its own whose parameters are the region's inputs.
  void build_regions() {
    for (size_t k = 0; k < n_; ++k) {
      const auto i = static_cast<int32_t>(k);
      if (!materialized_[i] || graph_.instrs[i].op == OpId::parameter) continue;
      Region region{kinds_[i], i, {}, {}, {}, std::move(operand_views_[i])};
      std::vector<bool> in_region(n_, false);
      std::vector<int32_t> stack = {region.root};
      in_region[i] = true;
      while (!stack.empty()) {
        int32_t v = stack.back();
        stack.pop_back();
        // Library calls read whole buffers: only a transpose the GEMM reads with a flag joins them.
        if (library_call(i)) {
          const bool gemm_reads =
              region.kind == RegionKind::Matmul && (ir::is_matrix_transpose(graph_.instrs[v]) || gemm_view_[v]);
          if (v != region.root && !gemm_reads) continue;
        }
        for (int32_t o : graph_.instrs[v].operands) {
          if (in_region[o]) continue;
          in_region[o] = true;
          if (!materialized_[o]) stack.push_back(o);
        }
      }
      std::unordered_map<int32_t, int32_t> local;
      for (size_t v = 0; v <= k; ++v) {
        if (!in_region[v]) continue;
        const bool is_input = materialized_[v] && static_cast<int32_t>(v) != region.root;
        if (is_input) {
          local[v] = static_cast<int32_t>(region.body.instrs.size());
          const ir::ParameterAttrs index{.index = static_cast<int64_t>(region.inputs.size())};
          Instr param{OpId::parameter,         {},
                      index.to_attrs(),        graph_.instrs[v].shape,
                      graph_.instrs[v].dtype,  graph_.instrs[v].origin,
                      graph_.instrs[v].device, graph_.instrs[v].site};
          region.inputs.push_back(static_cast<int32_t>(v));
          region.body.instrs.push_back(std::move(param));
        } else {
          region.members.push_back(static_cast<int32_t>(v));
          Instr copy = graph_.instrs[v];
          for (int32_t& o : copy.operands) o = local.at(o);
          local[v] = static_cast<int32_t>(region.body.instrs.size());
          region.body.instrs.push_back(std::move(copy));
        }
      }
      region.body.num_parameters = static_cast<int64_t>(region.inputs.size());
      region.body.outputs = {local.at(region.root)};
      // A value in a buffer only because it is an output or a root needs no word; any other reason does.
      if (const auto& why = why_[i];
          why && why->reason != MaterializeReason::graph_output && why->reason != MaterializeReason::region_root)
        decide(FusionChoice::materialize, i, "materialize " + name(graph_, i) + ": " + why->detail + by_rows_note(i),
               why->reason);
      decide(FusionChoice::region, i,
             "region " + name(graph_, i) + ": " + std::to_string(region.members.size()) + " ops fused, " +
                 std::to_string(region.inputs.size()) + " inputs");
      plan_.regions.push_back(std::move(region));
    }
  }

  const ir::Graph& graph_;
  const size_t n_;
  std::vector<RegionKind> kinds_;
  std::vector<bool> materialized_;
  std::vector<std::optional<Materialization>> why_;  // per materialized value, the first reason
  std::vector<std::vector<int32_t>> consumers_;
  std::vector<std::vector<int32_t>> regions_of_;                        // per value, the regions it is computed in
  RowFusion rows_;                                                      // reads consumers_ and materialized_
  std::vector<std::vector<int32_t>> row_loops_;                         // per row-fused reduction, its loops' roots
  std::vector<bool> gemm_view_;                                         // index arithmetic inside a GEMM's operand view
  std::vector<bool> in_place_;                                          // values GEMMs read through strides, not copied
  std::vector<std::vector<std::optional<StridedView>>> operand_views_;  // per GEMM
  FusionPlan plan_;
};

}  // namespace

FusionPlan plan_fusion(const ir::Graph& graph, const FusionPolicy& policy) {
  return FusionPlanner(graph, policy).run();
}

const char* region_kind_name(RegionKind kind) {
  switch (kind) {
    case RegionKind::Loop: return "loop";
    case RegionKind::Reduce: return "reduce";
    case RegionKind::Matmul: return "matmul";
    case RegionKind::Conv: return "conv2d";
    case RegionKind::Fallback: return "reference";
    case RegionKind::Transfer: return "transfer";
    case RegionKind::CustomCall: return "custom_call";
  }
  return "";
}

std::string describe(const FusionPlan& plan) {
  std::string out;
  for (const FusionDecision& decision : plan.decisions) out += decision.text + "\n";
  return out;
}

}  // namespace xlite::compiler
