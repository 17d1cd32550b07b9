#pragma once
// scatter_add of f32 values in native code, for the shapes gradients of index_select and embedding take; any
// other scatter_add runs on the reference fallback.
#include <memory>

#include "compiler/fusion.h"
#include "runtime/program.h"

namespace xlite::backends::cpu {

// A thunk for the region's scatter_add, or nullptr when it is not one this code handles: f32 values, i32 or i64
// indices, and an index as large as x in every dim but the scattered one.
std::unique_ptr<runtime::Thunk> make_scatter_add_thunk(const ir::Graph& graph, const compiler::Region& region);

}  // namespace xlite::backends::cpu
