#pragma once
// Custom kernels that random graphs call (testing/random_graph.h), registered once per process:
//   testing.axpy(x, y) = alpha * x + y, elementwise over f32 or f64 (attribute alpha);
//   testing.row_stats(x) = (sum, max) over the last dim of an f32 or f64 value with a non-empty last dim:
//   two outputs, so calls of it are packed and read through custom_output.
namespace xlite::testing {

void register_test_kernels();

}  // namespace xlite::testing
