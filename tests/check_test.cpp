// Broken invariants of xlite raise InternalError with the file and line; user errors stay xlite::Error.
#include <gtest/gtest.h>

#include <xlite/xlite.h>

#include <string>

#include "compiler/cache.h"
#include "core/check.h"
#include "ir/graph.h"

namespace xl = xlite;

TEST(Check, AFailedCheckNamesTheFileTheLineAndTheCondition) {
  const int line = __LINE__ + 2;
  try {
    XLITE_CHECK(1 + 1 == 3, "arithmetic holds");
    FAIL() << "the check passed";
  } catch (const xl::InternalError& e) {
    EXPECT_EQ(std::string(e.what()), "[internal] tests/check_test.cpp:" + std::to_string(line) +
                                         ": arithmetic holds (check '1 + 1 == 3' failed)")
        << "got " << e.what();
  }
  EXPECT_NO_THROW(XLITE_CHECK(2 > 1, std::string("not built")));
  EXPECT_THROW(XLITE_FAIL("unreachable"), xl::InternalError);
}

// An executable run with the wrong number of arguments is xlite's bug (the lazy layer binds them), not the
// user's: both backends say so as an internal error.
TEST(Check, ProgramsRunWithTooFewArgumentsRaiseAnInternalError) {
  const auto graph = xl::ir::parse_graph("%x = parameter(index=0) : f32[2]\n%y = exp(%x) : f32[2]\nreturn %y\n");
  for (const std::string backend : {"cpu", "reference"}) {
    try {
      xl::compiler::compile_with(graph, backend)->run({});
      ADD_FAILURE() << backend << " ran without its argument";
    } catch (const xl::InternalError& e) {
      EXPECT_NE(std::string(e.what()).find(".cpp:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected 1 arguments, got 0"), std::string::npos) << e.what();
    }
  }
}
