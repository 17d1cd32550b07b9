#pragma once
// Fusion: which values are materialized in buffers and which are recomputed inside the loop of their
// consumer. Every choice is a typed decision with a line of text, so users can see why a graph runs as it
// does and code never reads the text.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/strided_view.h"
#include "ir/graph.h"

namespace xlite::compiler {

enum class RegionKind {
  Loop,        // one loop over the root's elements; fused producers are computed per element
  Reduce,      // a reduction (or arg-reduction) root with its fused producers
  Matmul,      // f32 dot through the GEMM library
  Conv,        // f32 conv2d through the convolution library
  Fallback,    // no fused code for this op: the reference kernel runs it
  Transfer,    // a copy to another device, run by the runtime (not by the target)
  CustomCall,  // a registered kernel, or one output of one (custom_output), run by the runtime
};

struct Region {
  RegionKind kind;
  int32_t root;                  // the instruction whose value the region writes
  std::vector<int32_t> inputs;   // materialized values it reads (parameters or other roots), in first-use order
  std::vector<int32_t> members;  // instructions computed inside, in topological order, root last
  // The region as a graph of its own: inputs become parameters 0..n-1, the root is the one output.
  // Its text is the cache key of the compiled kernel, so graphs that share a region compile it once.
  ir::Graph body;
  // Matmul: where each operand is read from (a region result or parameter, at an offset and strides);
  // none for an empty operand.
  std::vector<std::optional<StridedView>> operand_views;
};

// Why the planner puts a value in a buffer instead of computing it inside the loops that read it.
enum class MaterializeReason : uint8_t {
  graph_output,
  parameter,
  region_root,                 // a library call, a fallback, a transfer, or a reduction no loop could take
  library_operand,             // a library call or a transfer reads whole buffers
  transposed_library_operand,  // the GEMM reads it through a transpose flag
  shared_expensive,            // an expensive op more than one loop needs
  too_many_copies,             // needed by more regions than it may be duplicated into
  long_chain,                  // computed from too many ops to compute twice
  deep_chain,                  // cuts a fused chain that grew too deep
  per_row_input,               // one value per row, read by a reduction across rows: its loop computes the
                               // row reductions it needs, by rows
  compact_mask,                // a large buffer compared with a constant: a byte per element, so that the
                               // buffer may die before the mask is read (a relu's gradient)
};

enum class FusionChoice : uint8_t {
  materialize,      // the value gets a buffer (reason says why)
  recompute,        // the value is computed again inside each region that reads it
  read_in_place,    // a GEMM operand read through strides from a materialized value, no copy
  compute_by_rows,  // a row reduction computed inside the loop that reads its rows
  region,           // a region and its size
};

// One decision of the planner, as data for code and as a line for people (describe, XLITE_DEBUG).
struct FusionDecision {
  FusionChoice choice;
  int32_t value;                            // the instruction decided on
  std::optional<MaterializeReason> reason;  // for materialize
  std::string text;
};

struct FusionPlan {
  std::vector<Region> regions;            // in a valid execution order (a backend may run them in another one)
  std::vector<FusionDecision> decisions;  // each materialized value, recomputation, in-place read and region
};

// What a target offers fusion: the dtypes its GEMM and convolution libraries take. A dot or conv of another
// dtype becomes a Fallback region.
struct FusionPolicy {
  uint32_t matmul_dtypes = 1u << static_cast<int>(DType::f32);
  uint32_t conv_dtypes = 1u << static_cast<int>(DType::f32);
  bool matmul_takes(DType dtype) const { return (matmul_dtypes >> static_cast<int>(dtype)) & 1u; }
  bool conv_takes(DType dtype) const { return (conv_dtypes >> static_cast<int>(dtype)) & 1u; }
};

FusionPlan plan_fusion(const ir::Graph& graph, const FusionPolicy& policy = {});
// "loop", "reduce", "matmul", "conv2d", "reference", "transfer", "custom_call": how profiles and graph drawings name a
// region.
const char* region_kind_name(RegionKind kind);
// Whether an instruction reads each operand at exactly the element it writes (elementwise ops whose
// operands have its shape).
bool elementwise(const ir::Graph& graph, const ir::Instr& instr);
std::string describe(const FusionPlan& plan);

}  // namespace xlite::compiler
