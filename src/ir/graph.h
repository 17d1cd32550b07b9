#pragma once
// A graph ready to compile: a flat, topologically ordered list of instructions that refer to their
// operands by position. Parameters carry their position in the argument list (attr index). This is the
// unit that is hashed, printed, parsed, verified, optimised and compiled; it never holds data.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/call_site.h"
#include "ir/attrs.h"
#include "ir/node.h"
#include "ir/op.h"
#include "xlite/device.h"
#include "xlite/dtype.h"

namespace xlite::ir {

struct Instr {
  OpId op;
  std::vector<int32_t> operands;
  Attrs attrs;
  Shape shape;
  DType dtype;
  // The public op that built it, for run-time error messages; metadata, not structure.
  const char* origin = "";
  // Where the value is computed and kept (ir::Node::device); structure, printed as "@cpu:1" when not cpu:0.
  Device device{};
  // Under XLITE_DEBUG, the stack that built it (ir::Node::site); metadata, not structure.
  std::shared_ptr<const call_site::Stack> site = nullptr;
  bool operator==(const Instr& other) const {
    return op == other.op && operands == other.operands && attrs == other.attrs && shape == other.shape &&
           dtype == other.dtype && device == other.device;
  }
};

struct Graph {
  std::vector<Instr> instrs;
  std::vector<int32_t> outputs;
  int64_t num_parameters = 0;

  bool operator==(const Graph&) const = default;
  // Structural: ops, attributes, shapes, dtypes, devices, operand wiring, parameter order and outputs.
  uint64_t hash() const;
};

// Graph::hash in parts, for code that hashes a graph it has not built (lazy::PendingGraph): begin, then
// each instruction in order, then the outputs.
uint64_t hash_graph_begin(size_t num_instrs, int64_t num_parameters);
uint64_t hash_graph_instr(uint64_t h, OpId op, uint64_t attrs_hash, DType dtype, const Shape& shape,
                          std::span<const int32_t> operands, Device device);
uint64_t hash_graph_end(uint64_t h, std::span<const int32_t> outputs);

// Text form, one instruction a line (a device other than cpu:0 follows the type):
//   %0 = parameter(index=0) : f32[2,3]
//   %1 = reduce_sum(%0, dims=[1], keepdim=false) : f32[2]
//   %2 = transfer(%1) : f32[2] @cpu:1
//   return %2
std::string to_text(const Graph& graph);
// One line of that form, instruction i, without the newline.
std::string instr_text(const Graph& graph, size_t i);
// Parses the text form; throws xlite::Error with the line number on malformed input. The result is verified.
// Besides %N (which must number instructions in order), a value may be named: `%x = parameter(...)`, then
// `%x` as an operand or output. '#' starts a comment to the end of the line.
Graph parse_graph(std::string_view text);
// Checks wiring, arity, attributes, every instruction's type against its shape rule, and that only a
// transfer reads a value on another device.
void verify(const Graph& graph);

// A transpose that swaps the last two dims and keeps the others in place: a batched matrix transpose,
// which a GEMM reads through a flag.
bool is_matrix_transpose(const Instr& instr);

// The device a program of the graph is run on: its first output's (a sync groups its outputs by device),
// else cpu:0. Values before a transfer may live on other devices.
Device home_device(const Graph& graph);

// The bytes of an instruction's value (addressable, so this does not overflow).
inline int64_t value_bytes(const Instr& instr) { return numel(instr.shape) * dtype_size(instr.dtype); }
// The types of an instruction's operands, which refer to the graph's shapes (keep the graph alive).
std::vector<OperandType> operand_types(const Graph& graph, const Instr& instr);

}  // namespace xlite::ir
