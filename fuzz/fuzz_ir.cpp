// libFuzzer harness: text IR through the parser and verifier; a small graph that verifies runs on the
// reference and the cpu backend, which must agree (values, or both raising xlite::Error for one op).
// A parse or verify error must be an xlite::Error; an internal error, another exception, a crash, a
// hang or a disagreement is a finding.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include <xlite/xlite.h>

#include "testing/random_graph.h"
#include "ir/graph.h"
#include "ir/sizes.h"

namespace {
// Bounds that keep one run in milliseconds: compiling is the cost, so few instructions and small shapes.
constexpr size_t kMaxInstrs = 24;
constexpr int64_t kMaxElements = 1 << 12;

bool small_enough(const xlite::ir::Graph& g) {
  if (g.instrs.size() > kMaxInstrs) return false;
  for (const auto& instr : g.instrs) {
    std::optional<int64_t> n = xlite::ir::checked_numel(instr.shape);
    if (!n || *n > kMaxElements) return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  xlite::ir::Graph g;
  try {
    g = xlite::ir::parse_graph(text);
  } catch (const xlite::InternalError& e) {
    std::fprintf(stderr, "internal error while parsing: %s\n", e.what());
    std::abort();
  } catch (const xlite::Error&) {
    return 0;
  }
  if (!small_enough(g)) return 0;
  auto args = xlite::testing::random_arguments(g, size);
  xlite::testing::Comparison c = xlite::testing::compare_backends(g, args, "reference", "cpu", 1e-4, 1e-4);
  if (!c.ok) {
    std::fprintf(stderr, "%s\n", c.message.c_str());
    std::abort();
  }
  return 0;
}
