#pragma once
// Random calls of the shape rules (ir::infer_type) with extreme operand shapes and attributes: dims and
// attribute values near 0, near 2^31, 2^32, 2^62 and at INT64_MIN / INT64_MAX, alongside small ones that
// pass the rules' early checks. The rules run on every op a user calls and in the verifier on every text
// IR graph, so each must either raise xlite::Error or give an addressable type (ir/sizes.h), never wrap:
// under UBSan a signed overflow in a rule stops the process. xlite-fuzz-graphs --shape-rules and
// tests/shape_rule_fuzz_test.cpp run these.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "xlite/dtype.h"

namespace xlite::testing {

struct ShapeRuleCase {
  ir::OpId op;
  std::vector<Shape> shapes;  // operand shapes, each addressable in its dtype, as in any real graph
  std::vector<DType> dtypes;
  ir::Attrs attrs;
};

ShapeRuleCase random_shape_rule_case(uint64_t seed);

struct ShapeRuleOutcome {
  bool ok = true;         // threw xlite::Error, or returned an addressable type
  bool accepted = false;  // returned a type
  std::string message;    // when not ok: what happened, and the case
};

ShapeRuleOutcome check_shape_rule(const ShapeRuleCase& c);

}  // namespace xlite::testing
