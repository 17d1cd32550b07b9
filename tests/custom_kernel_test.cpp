// Custom kernels (xlite/kernels.h): registration, calls in lazy and eager mode and inside compile(fn), the
// text IR, both backends, errors at trace and run time, and gradients through a kernel's backward.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>
#include <xlite/xlite.h>

#include "ir/graph.h"
#include "tensor/tensor_impl.h"
#include "test_support.h"
#include "testing/random_graph.h"

namespace xl = xlite;
namespace k = xlite::kernels;
using xlite_test::ErrorMessage;
using xlite_test::Occurrences;

namespace {

std::atomic<int64_t> g_scale_runs{0};

[[noreturn]] void Refuse(const std::string& kernel, const std::string& why) {
  throw xl::Error("[" + kernel + "] " + why);
}

// y = x * factor, elementwise over f32.
void RegisterScale() {
  k::register_kernel({.name = "test.scale",
                      .shape =
                          [](const std::vector<k::TensorType>& in, const k::Attrs&) {
                            if (in.size() != 1 || in[0].dtype != xl::DType::f32)
                              Refuse("test.scale", "takes one f32 tensor");
                            return in;
                          },
                      .cpu =
                          [](const k::CpuCall& call, k::CpuContext& context) {
                            ++g_scale_runs;
                            const float* x = call.input<float>(0);
                            float* y = call.output<float>(0);
                            const double factor = call.float_attr("factor");
                            context.parallel_for(call.input_type(0).numel(), 1024, [&](int64_t begin, int64_t end) {
                              for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(x[i] * factor);
                            });
                          },
                      .backward =
                          [](const std::vector<xl::Tensor>&, const std::vector<xl::Tensor>&,
                             const std::vector<xl::Tensor>& grads, const k::Attrs& attrs) {
                            return std::vector<xl::Tensor>{grads[0] * std::get<double>(attrs.at("factor"))};
                          }});
}

// Per row of x [R, C] f32: its maximum and where it is (two outputs).
void RegisterRowMax() {
  k::register_kernel(
      {.name = "test.row_max",
       .shape =
           [](const std::vector<k::TensorType>& in, const k::Attrs&) {
             if (in.size() != 1 || in[0].shape.size() != 2 || in[0].dtype != xl::DType::f32 || in[0].shape[1] == 0)
               Refuse("test.row_max", "takes one f32 matrix with columns");
             return std::vector<k::TensorType>{{{in[0].shape[0]}, xl::DType::f32}, {{in[0].shape[0]}, xl::DType::i64}};
           },
       .cpu =
           [](const k::CpuCall& call, k::CpuContext& context) {
             const int64_t rows = call.input_type(0).shape[0], cols = call.input_type(0).shape[1];
             const float* x = call.input<float>(0);
             context.parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
               for (int64_t r = begin; r < end; ++r) {
                 int64_t best = 0;
                 for (int64_t c = 1; c < cols; ++c)
                   if (x[r * cols + c] > x[r * cols + best]) best = c;
                 call.output<float>(0)[r] = x[r * cols + best];
                 call.output<int64_t>(1)[r] = best;
               }
             });
           }});
}

// Rows of table [N, D] f32 picked by index [M] i64; an index out of range fails at run time.
void RegisterTakeRows() {
  k::register_kernel(
      {.name = "test.take_rows",
       .shape =
           [](const std::vector<k::TensorType>& in, const k::Attrs&) {
             if (in.size() != 2 || in[0].shape.size() != 2 || in[1].shape.size() != 1 || in[1].dtype != xl::DType::i64)
               Refuse("test.take_rows", "takes a matrix and an i64 index vector");
             return std::vector<k::TensorType>{{{in[1].shape[0], in[0].shape[1]}, in[0].dtype}};
           },
       .cpu =
           [](const k::CpuCall& call, k::CpuContext& context) {
             const int64_t n = call.input_type(0).shape[0], d = call.input_type(0).shape[1];
             const int64_t* index = call.input<int64_t>(1);
             // Scratch: the row offsets, checked before anything is written.
             auto* offsets = static_cast<int64_t*>(context.scratch(sizeof(int64_t) * call.input_type(1).numel()));
             for (int64_t m = 0; m < call.input_type(1).numel(); ++m) {
               if (index[m] < 0 || index[m] >= n)
                 context.fail("index " + std::to_string(index[m]) + " is out of range for " + std::to_string(n) +
                              " rows");
               offsets[m] = index[m] * d;
             }
             for (int64_t m = 0; m < call.input_type(1).numel(); ++m)
               for (int64_t j = 0; j < d; ++j) call.output<float>(0)[m * d + j] = call.input<float>(0)[offsets[m] + j];
           }});
}

template <class T>
void RmsNormRows(const k::CpuCall& call, k::CpuContext& context) {
  const int64_t d = call.input_type(0).shape.back(), rows = d == 0 ? 0 : call.input_type(0).numel() / d;
  const double eps = call.float_attr("eps");
  const T *x = call.input<T>(0), *w = call.input<T>(1);
  T* y = call.output<T>(0);
  context.parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double squares = 0;
      for (int64_t j = 0; j < d; ++j) squares += double(x[r * d + j]) * x[r * d + j];
      const double scale = 1.0 / std::sqrt(squares / static_cast<double>(d) + eps);
      for (int64_t j = 0; j < d; ++j) y[r * d + j] = static_cast<T>(x[r * d + j] * scale * w[j]);
    }
  });
}

// The composite rms_norm, for the backward and as the reference.
xl::Tensor RmsNormOps(const xl::Tensor& x, const xl::Tensor& w, double eps) {
  return x * xl::rsqrt(xl::mean(x * x, {-1}, true) + eps) * w;
}

// The README's example: a fused rms_norm over the last dim, with its backward written in ops.
void RegisterRmsNorm() {
  k::register_kernel({
      .name = "rms_norm",
      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) -> std::vector<k::TensorType> {
        if (in.size() != 2 || in[0].shape.empty() || in[1].shape != xl::Shape{in[0].shape.back()} ||
            in[0].dtype != in[1].dtype || (in[0].dtype != xl::DType::f32 && in[0].dtype != xl::DType::f64))
          throw xl::Error("[rms_norm] takes x [..., D] and weight [D] of one float dtype");
        return {in[0]};
      },
      .cpu =
          [](const k::CpuCall& call, k::CpuContext& context) {
            call.input_type(0).dtype == xl::DType::f32 ? RmsNormRows<float>(call, context)
                                                       : RmsNormRows<double>(call, context);
          },
      .backward =
          [](const std::vector<xl::Tensor>& in, const std::vector<xl::Tensor>&, const std::vector<xl::Tensor>& grads,
             const k::Attrs& attrs) {
            // d/dx of x r w with r = (mean(x^2) + eps)^-1/2: r w g - x r^3 mean(x w g); d/dw: the rows' sum of g x r.
            const xl::Tensor &x = in[0], &w = in[1], &g = grads[0];
            const xl::Tensor r = xl::rsqrt(xl::mean(xl::square(x), {-1}, true) + std::get<double>(attrs.at("eps")));
            std::vector<int64_t> rows(static_cast<size_t>(x.dim() - 1));
            std::iota(rows.begin(), rows.end(), 0);
            const xl::Tensor dx = r * w * g - x * xl::pow(r, 3.0) * xl::mean(x * w * g, {-1}, true);
            return std::vector<xl::Tensor>{dx, xl::sum(g * x * r, rows)};
          },
  });
}

void RegisterAll() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterScale();
    RegisterRowMax();
    RegisterTakeRows();
    RegisterRmsNorm();
  });
}

std::vector<float> Values(const xl::Tensor& t) { return t.to_vector<float>(); }
std::vector<double> Doubles(const xl::Tensor& t) { return t.to(xl::DType::f64).to_vector<double>(); }

xl::Tensor Data(const xl::Shape& shape, double step = 0.37) {
  std::vector<float> v(static_cast<size_t>(xl::numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(static_cast<double>(i) * step) * 2.0);
  xl::Tensor t = xl::tensor(v, shape);
  xl::sync();
  return t;
}

}  // namespace

TEST(CustomKernel, ACallIsOneNodeNamedInTheTextIrWhichRoundTrips) {
  RegisterAll();
  xl::Tensor x = Data({3, 4});
  xl::Tensor y = k::call("test.scale", {x + 1.0}, {{"factor", 2.5}})[0] * 2.0;
  const std::string text = xl::debug::graph_text({y});
  EXPECT_EQ(Occurrences(text, "custom_call(%"), 1) << text;
  EXPECT_NE(text.find("kernel=\"test.scale\", args=\"factor=2.5\") : f32[3,4]"), std::string::npos) << text;
  const xl::ir::Graph parsed = xl::ir::parse_graph(text);
  EXPECT_EQ(xl::ir::to_text(parsed), text);
  EXPECT_EQ(parsed.hash(), xl::debug::graph_hash({y}));
  // Not fused: the call is a region of its own, between the loops before and after it.
  const std::string optimized = xl::debug::optimized_text({y});
  EXPECT_NE(optimized.find("operand of %"), std::string::npos) << optimized;
  const std::vector<float> got = Values(y), in = Values(x);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], (in[i] + 1.0f) * 2.5f * 2.0f);
}

TEST(CustomKernel, ACallOnConstantsIsNotFolded) {
  RegisterAll();
  xl::Tensor y = k::call("test.scale", {xl::ones({4}) * 2.0}, {{"factor", 3.0}})[0];
  const std::string optimized = xl::debug::optimized_text({y});
  EXPECT_EQ(Occurrences(optimized, "custom_call("), 1) << optimized;
  const int64_t before = g_scale_runs;
  EXPECT_EQ(Values(y), std::vector<float>(4, 6.0f));
  EXPECT_EQ(g_scale_runs - before, 1);  // it ran when the program did, not while compiling
}

TEST(CustomKernel, AttributesArePartOfTheGraph) {
  RegisterAll();
  xl::Tensor x = Data({5});
  const k::Attrs attrs = {{"factor", 3.0},
                          {"note", std::string("a \"quoted\" #text, with 'marks'")},
                          {"shape", std::vector<int64_t>{2, -3}},
                          {"steps", int64_t{7}}};
  xl::Tensor y = k::call("test.scale", {x}, attrs)[0];
  xl::Tensor z = k::call("test.scale", {x}, {{"factor", 3.5}})[0];
  EXPECT_NE(xl::debug::graph_hash({y}), xl::debug::graph_hash({z}));
  const std::string text = xl::debug::graph_text({y});
  EXPECT_EQ(xl::ir::to_text(xl::ir::parse_graph(text)), text) << text;
  EXPECT_NE(
      text.find("factor=3.0, note='a \\x22quoted\\x22 \\x23text, with \\x5c'marks\\x5c'', shape=[2, -3], steps=7"),
      std::string::npos)
      << text;
  EXPECT_FLOAT_EQ(Values(y)[1], Values(x)[1] * 3.0f);
}

TEST(CustomKernel, SeveralOutputsComeBackAsTensors) {
  RegisterAll();
  xl::Tensor x = Data({6, 5});
  std::vector<xl::Tensor> out = k::call("test.row_max", {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), xl::Shape({6}));
  EXPECT_EQ(out[1].dtype(), xl::DType::i64);
  const std::string text = xl::debug::graph_text(out);
  EXPECT_NE(text.find("custom_output(%1, index=1, dtype=i64, shape=[6], offset=64) : i64[6]"), std::string::npos)
      << text;
  EXPECT_EQ(xl::ir::parse_graph(text).hash(), xl::debug::graph_hash(out));
  EXPECT_EQ(Values(out[0]), Values(xl::amax(x, {1})));
  EXPECT_EQ(out[1].to_vector<int64_t>(), xl::argmax(x, 1).to_vector<int64_t>());
}

TEST(CustomKernel, RunsInEagerModeAndInsideCompiledSteps) {
  RegisterAll();
  xl::Tensor x = Data({4, 3});
  const std::vector<float> want = Values(xl::amax(x * 2.0, {1}));
  {
    xl::EagerModeGuard eager(true);
    std::vector<xl::Tensor> out = k::call("test.row_max", {k::call("test.scale", {x}, {{"factor", 2.0}})[0]});
    EXPECT_FALSE(out[0].is_pending());
    EXPECT_EQ(Values(out[0]), want);
  }
  auto step = xl::compile([](const xl::Tensor& t) {
    return k::call("test.row_max", {k::call("test.scale", {t}, {{"factor", 2.0}})[0]})[0];
  });
  for (int i = 0; i < 4; ++i) {
    xl::Tensor in = Data({4, 3}, 0.1 * (i + 1));
    EXPECT_EQ(Values(step(in)), Values(xl::amax(in * 2.0, {1}))) << "call " << i;
  }
  EXPECT_TRUE(step.last_call().replayed);
}

// In eager mode the call runs once, and a backward that reads the kernel's output reads that result: it
// does not run the kernel again.
TEST(CustomKernel, InEagerModeTheBackwardReadsTheOutputItDoesNotRunTheKernelAgain) {
  static std::atomic<int64_t> runs{0};
  k::register_kernel({.name = "test.counted_exp",
                      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) { return in; },
                      .cpu =
                          [](const k::CpuCall& call, k::CpuContext&) {
                            ++runs;
                            for (int64_t i = 0; i < call.input_type(0).numel(); ++i)
                              call.output<float>(0)[i] = std::exp(call.input<float>(0)[i]);
                          },
                      .backward = [](const std::vector<xl::Tensor>&, const std::vector<xl::Tensor>& outputs,
                                     const std::vector<xl::Tensor>& grads,
                                     const k::Attrs&) { return std::vector<xl::Tensor>{grads[0] * outputs[0]}; }});
  xl::EagerModeGuard eager(true);
  xl::Tensor x = Data({8}).requires_grad_();
  xl::Tensor y = k::call("test.counted_exp", {x * 2.0})[0];
  EXPECT_EQ(runs.load(), 1);
  xl::sum(y).backward();
  xlite_test::ExpectClose(Values(x.grad()), Doubles(xl::exp(x.detach() * 2.0) * 2.0), 1e-5, 1e-6);
  EXPECT_EQ(runs.load(), 1) << "the backward ran the kernel again";
}

TEST(CustomKernel, ACallReadByTwoConsumersRunsOnce) {
  RegisterAll();
  xl::Tensor x = Data({64});
  xl::Tensor y = k::call("test.scale", {x}, {{"factor", 3.0}})[0];
  xl::Tensor a = xl::exp(y), b = y * y;
  const int64_t before = g_scale_runs;
  xl::sync({a, b});
  EXPECT_EQ(g_scale_runs - before, 1);
}

TEST(CustomKernel, TheReferenceBackendRunsTheSameKernels) {
  RegisterAll();
  // random_arguments gives integers in [0, 20): in range for a table of 20 rows.
  const xl::ir::Graph graph = xl::ir::parse_graph(R"(
    %x = parameter(index=0) : f32[20,4]
    %i = parameter(index=1) : i64[3]
    %w = parameter(index=2) : f32[4]
    %s = custom_call(%x, kernel="test.scale", args="factor=-1.5") : f32[20,4]
    %p = custom_call(%s, kernel="test.row_max", args="") : u8[320]
    %m = custom_output(%p, index=0, dtype=f32, shape=[20], offset=0) : f32[20]
    %a = custom_output(%p, index=1, offset=128, shape=[20], dtype=i64) : i64[20]
    %t = custom_call(%s, %i, kernel="test.take_rows", args="") : f32[3,4]
    %n = custom_call(%t, %w, kernel="rms_norm", args="eps=0.001") : f32[3,4]
    %e = exp(%m) : f32[20]
    return %e, %a, %n
  )");
  const std::vector<xl::BufferPtr> args = xl::testing::random_arguments(graph, 3);
  const xl::testing::Comparison same = xl::testing::compare_backends(graph, args, "reference", "cpu", 1e-5, 1e-5);
  EXPECT_TRUE(same.ok) << same.message;
  // A wrong offset or type for an output is refused.
  EXPECT_NE(ErrorMessage([] {
              xl::ir::parse_graph(R"(
                %x = parameter(index=0) : f32[2,3]
                %p = custom_call(%x, kernel="test.row_max", args="") : u8[128]
                %a = custom_output(%p, index=1, offset=8, shape=[2], dtype=i64) : i64[2]
                return %a)");
            }).find("offset 8 but output 1 starts at byte 64"),
            std::string::npos);
}

TEST(CustomKernel, BadCallsAreRefusedAtTraceTimeNamingTheKernel) {
  RegisterAll();
  xl::Tensor ints = xl::tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ(ErrorMessage([&] { k::call("test.scale", {ints}, {{"factor", 1.0}}); }),
            "[test.scale] takes one f32 tensor");
  EXPECT_NE(ErrorMessage([&] { k::call("no.such.kernel", {ints}); }).find("no kernel named 'no.such.kernel'"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { k::call("test.scale", {Data({2})}, {{"bad name", 1.0}}); }).find("'bad name'"),
            std::string::npos);
  // A missing attribute is the kernel's error when it runs.
  EXPECT_NE(ErrorMessage([&] {
              k::call("test.scale", {Data({2})})[0].to_vector<float>();
            }).find("[test.scale] attribute 'factor' is missing"),
            std::string::npos);
  // Text naming an unregistered kernel says so.
  EXPECT_NE(ErrorMessage([] {
              xl::ir::parse_graph(
                  "%x = parameter(index=0) : f32[2]\n%y = custom_call(%x, kernel=\"nope\", args=\"\") : f32[2]\nreturn "
                  "%y\n");
            }).find("no kernel named 'nope' is registered"),
            std::string::npos);
  EXPECT_THROW(RegisterScale(), xl::Error);  // registered already
  EXPECT_THROW(k::register_kernel({.name = "1bad", .shape = {}, .cpu = {}}), xl::Error);
  EXPECT_THROW(k::register_kernel({.name = "no_impl", .shape = [](const auto& in, const auto&) { return in; }}),
               xl::Error);
}

TEST(CustomKernel, AFailureAtRunTimeIsAnErrorAndTheRuntimeGoesOn) {
  RegisterAll();
  xl::Tensor table = Data({4, 3});
  xl::Tensor bad = xl::tensor(std::vector<int64_t>{1, 7});
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    EXPECT_EQ(ErrorMessage([&] { k::call("test.take_rows", {table, bad})[0].to_vector<float>(); }),
              "[test.take_rows] index 7 is out of range for 4 rows")
        << "eager " << eager;
    xl::Tensor good = k::call("test.take_rows", {table, xl::tensor(std::vector<int64_t>{3, 0})})[0];
    const std::vector<float> rows = Values(good), all = Values(table);
    EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + 3), std::vector<float>(all.begin() + 9, all.end()));
  }
}

TEST(CustomKernel, GradientsComeFromTheKernelsBackward) {
  RegisterAll();
  xl::Tensor x = Data({3, 8}).requires_grad_(), w = (Data({8}, 0.9) + 2.0).requires_grad_();
  xl::sync();
  xl::Tensor loss = xl::sum(xl::sin(k::call("rms_norm", {x, w}, {{"eps", 1e-5}})[0]));
  loss.backward();
  const xl::Tensor gx = x.grad(), gw = w.grad();
  // Against autodiff of the same function written in ops.
  xl::Tensor x2 = x.detach().requires_grad_(), w2 = w.detach().requires_grad_();
  xl::sum(xl::sin(RmsNormOps(x2, w2, 1e-5))).backward();
  xlite_test::ExpectClose(Values(gx), Doubles(x2.grad()), 1e-5, 1e-5);
  xlite_test::ExpectClose(Values(gw), Doubles(w2.grad()), 1e-5, 1e-5);
}

TEST(CustomKernel, GradientsMatchFiniteDifferencesInF64) {
  RegisterAll();
  xl::Tensor x = Data({2, 5}).to(xl::DType::f64), w = (Data({5}, 1.3) + 2.5).to(xl::DType::f64);
  xl::sync();
  auto f = [](const xl::Tensor& a, const xl::Tensor& b) {
    return xl::sum(xl::sin(k::call("rms_norm", {a, b}, {{"eps", 1e-3}})[0]));
  };
  std::vector<xl::Tensor> grads = xl::grad([&](const std::vector<xl::Tensor>& in) { return f(in[0], in[1]); }, {x, w});
  for (int which = 0; which < 2; ++which) {
    const xl::Tensor& base = which == 0 ? x : w;
    std::vector<double> values = base.to_vector<double>(), want(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      auto at = [&](double delta) {
        std::vector<double> moved = values;
        moved[i] += delta;
        xl::Tensor t = xl::tensor(moved, base.shape());
        return (which == 0 ? f(t, w) : f(x, t)).item<double>();
      };
      want[i] = (at(1e-6) - at(-1e-6)) / 2e-6;
    }
    const std::vector<double> got = grads[which].to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "input " << which << " element " << i;
  }
}

TEST(CustomKernel, AKernelWithoutABackwardSaysSoWhenDifferentiated) {
  RegisterAll();
  xl::Tensor x = Data({2, 3}).requires_grad_();
  std::vector<xl::Tensor> out = k::call("test.row_max", {x});
  EXPECT_NE(ErrorMessage([&] { xl::sum(out[0]).backward(); }).find("[test.row_max] has no backward"),
            std::string::npos);
  // Without gradients wanted, it just runs.
  xl::NoGradGuard no_grad;
  EXPECT_EQ(Values(k::call("test.row_max", {x})[0]), Values(xl::amax(x, {1})));
}

TEST(CustomKernel, OutputsCountInTheMemoryPlanAndTheStablehloExportNamesTheKernel) {
  RegisterAll();
  xl::Tensor x = Data({256, 64});
  std::vector<xl::Tensor> out = k::call("test.row_max", {k::call("test.scale", {x}, {{"factor", 2.0}})[0]});
  const xl::debug::MemoryStats stats = xl::debug::memory_stats({out[1]});
  EXPECT_GE(stats.temp_bytes, 256 * 64 * 4) << "the scaled copy is an intermediate";
  // Profiles, traces and timelines name each call by its kernel.
  bool named = false;
  for (const xl::debug::MemoryStep& step : xl::debug::memory_timeline({out[1]}))
    named = named || step.step == "custom_call test.scale f32[256,64]";
  EXPECT_TRUE(named);
  const std::string module = xl::debug::stablehlo(out);
  EXPECT_NE(module.find("\"stablehlo.custom_call\"(%arg0) <{backend_config = \"factor=2.0\", call_target_name = "
                        "\"test.scale\"}>"),
            std::string::npos)
      << module;
  EXPECT_NE(module.find(":2 = \"stablehlo.custom_call\""), std::string::npos) << module;
}

// A kernel that copies through scratch of `take` bytes per call and declares `declared` bytes.
void RegisterScratchCopy(const std::string& name, int64_t declared) {
  k::register_kernel(
      {.name = name,
       .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) { return in; },
       .cpu =
           [](const k::CpuCall& call, k::CpuContext& context) {
             const size_t bytes = static_cast<size_t>(call.input_type(0).bytes());
             void* staging = context.scratch(bytes);
             std::memcpy(staging, call.input_data(0), bytes);
             std::memcpy(call.output_data(0), staging, bytes);
           },
       .scratch = [declared](const std::vector<k::TensorType>&, const k::Attrs&, int) { return declared; }});
}

TEST(CustomKernel, DeclaredScratchIsInTheMemoryPlanAndTakingMoreFails) {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterScratchCopy("test.scratch_honest", 4096);
    RegisterScratchCopy("test.scratch_greedy", 100);
  });
  const xl::Tensor x = Data({16, 64});  // 4096 bytes
  const xl::Tensor honest = k::call("test.scratch_honest", {x})[0] * 2.0;
  const xl::debug::MemoryStats stats = xl::debug::memory_stats({honest});
  EXPECT_EQ(stats.scratch_bytes, 4096);
  EXPECT_GE(stats.temp_bytes, 4096 + 4096) << "the call's output and its scratch are alive together";
  int64_t peak = 0;
  for (const xl::debug::MemoryStep& step : xl::debug::memory_timeline({honest})) peak = std::max(peak, step.live_bytes);
  EXPECT_GE(peak, 3 * 4096) << "argument, output and scratch";
  EXPECT_EQ(Values(honest), Values(x * 2.0)) << "copied through scratch";

  const std::string message =
      xlite_test::ErrorMessage([&] { k::call("test.scratch_greedy", {x})[0].to_vector<float>(); });
  EXPECT_NE(
      message.find("[test.scratch_greedy] took 4096 bytes of scratch, more than the 100 its scratch rule declared"),
      std::string::npos)
      << message;
  EXPECT_EQ(Values(k::call("test.scratch_honest", {x})[0]), Values(x)) << "the runtime goes on";
}

// The custom gradient of a call must not keep its outputs alive as tensors: compile(fn) would see a tensor
// the step made and kept, and trace every call again instead of replaying.
TEST(CustomKernel, ATrainingStepThroughAKernelReplays) {
  RegisterAll();
  xl::Tensor w = Data({4, 3}).requires_grad_();
  xl::optim::SGD optimizer({w}, 0.1);
  auto step = xl::compile([&](const xl::Tensor& x) {
    optimizer.zero_grad();
    xl::Tensor loss = xl::sum(k::call("test.scale", {x * w}, {{"factor", 2.0}})[0]);
    loss.backward();
    optimizer.step();
    return loss;
  });
  for (int i = 0; i < 4; ++i) step(Data({4, 3}, 0.1 * i)).item<float>();
  EXPECT_TRUE(step.last_call().replayed) << step.last_call().trace_reason;
}

// A kernel that adds 1 in place; with greedy=1 it first takes scratch its rule does not declare, and fails
// though it declared it cannot.
void RegisterAddOneInPlace() {
  k::register_kernel({.name = "test.add_one_in_place",
                      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) { return in; },
                      .cpu =
                          [](const k::CpuCall& call, k::CpuContext& context) {
                            if (call.int_attr("greedy") != 0) context.scratch(64);
                            float* y = call.output<float>(0);
                            for (int64_t i = 0; i < call.output_type(0).numel(); ++i) y[i] += 1;
                          },
                      .scratch = [](const std::vector<k::TensorType>&, const k::Attrs&, int) { return int64_t{0}; },
                      .updates_input = 0,
                      .may_fail = false});
}

TEST(CustomKernel, AnInPlaceUpdateWritesTheDonatedBufferAndAFailureLeavesItAlone) {
  static std::once_flag once;
  std::call_once(once, RegisterAddOneInPlace);
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3, 4});
  const float* storage = static_cast<const float*>(x.impl()->data()->data());
  x.copy_(k::call("test.add_one_in_place", {x}, {{"greedy", int64_t{0}}})[0]);
  xl::sync({x});
  EXPECT_EQ(static_cast<const float*>(x.impl()->data()->data()), storage) << "updated in its own buffer";
  EXPECT_EQ(Values(x), (std::vector<float>{2, 3, 4, 5}));
  x.copy_(k::call("test.add_one_in_place", {x}, {{"greedy", int64_t{1}}})[0]);
  EXPECT_NE(ErrorMessage([&] { xl::sync({x}); }).find("more than the 0 its scratch rule declared"), std::string::npos);
  EXPECT_EQ(std::vector<float>(storage, storage + 4), (std::vector<float>{2, 3, 4, 5})) << "the lent buffer";
  const xl::Tensor copied = xl::tensor(std::vector<float>{7});
  EXPECT_EQ(Values(k::call("test.add_one_in_place", {copied}, {{"greedy", int64_t{0}}})[0]), std::vector<float>{8});
  EXPECT_EQ(Values(copied), std::vector<float>{7}) << "not updated in place, the input keeps its value";
}

// A kernel's implementation that reads a value runs a sync inside the program that runs it: an error that
// names the mistake, and the runtime stays usable, instead of a deadlock on the sync mutex.
TEST(CustomKernel, AnImplementationThatSyncsRaisesInsteadOfDeadlocking) {
  k::register_kernel({.name = "test.syncs_inside",
                      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) { return in; },
                      .cpu =
                          [](const k::CpuCall& call, k::CpuContext&) {
                            const float total = (xl::ones({2}) * 3.f).sum().item<float>();
                            call.output<float>(0)[0] = total;
                          }});
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    const std::string message = ErrorMessage([] { k::call("test.syncs_inside", {xl::ones({1})})[0].item<float>(); });
    EXPECT_NE(message.find("must not sync"), std::string::npos) << message;
  }
  EXPECT_EQ((xl::ones({2}) + 1.f).to_vector<float>(), (std::vector<float>{2, 2}));
}

// A sync that must wait for another thread's program waits through the bindings' hook (Python gives up its
// interpreter lock there, so that a kernel written in Python can finish). The kernel here runs until it sees
// the other thread in the hook, so the wait is certain.
std::atomic<int> g_hook_calls{0};
std::atomic<bool> g_kernel_running{false};
TEST(CustomKernel, ASyncThatWaitsForAnotherThreadsProgramCallsTheBlockingWaitHook) {
  k::register_kernel({.name = "test.waits_for_hook",
                      .shape = [](const std::vector<k::TensorType>& in, const k::Attrs&) { return in; },
                      .cpu =
                          [](const k::CpuCall& call, k::CpuContext&) {
                            g_kernel_running = true;
                            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                            while (g_hook_calls == 0 && std::chrono::steady_clock::now() < give_up)
                              std::this_thread::yield();
                            call.output<float>(0)[0] = call.input<float>(0)[0] + 1;
                          }});
  xl::set_blocking_wait_hook([](void (*wait)(void*), void* context) {
    ++g_hook_calls;
    wait(context);
  });
  float from_kernel = 0;
  std::thread first([&] { from_kernel = k::call("test.waits_for_hook", {xl::ones({1})})[0].item<float>(); });
  while (!g_kernel_running) std::this_thread::yield();
  const float second = (xl::ones({2}) * 2.f).sum().item<float>();  // waits for the first thread's program
  first.join();
  xl::set_blocking_wait_hook(nullptr);
  EXPECT_EQ(g_hook_calls.load(), 1);
  EXPECT_EQ(from_kernel, 2.f);
  EXPECT_EQ(second, 4.f);
}
