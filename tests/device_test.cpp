// Devices: XLITE_NUM_CPU_DEVICES virtual CPU devices (ctest runs these tests with 4), each with its own
// allocator; tensors, nodes, graph instructions and buffers carry their device; ops that mix devices raise;
// Tensor::to(Device) is a lazy transfer whose gradient flows back; a sync runs one program per device.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <xlite/xlite.h>

#include "backends/cpu/kernel.h"
#include "compiler/cache.h"
#include "tensor/tensor_impl.h"
#include "ir/graph.h"
#include "runtime/transfer.h"
#include "test_support.h"

namespace xl = xlite;

namespace {

void RequireDevices() { ASSERT_GE(xl::device_count(), 4) << "run under ctest, or with XLITE_NUM_CPU_DEVICES=4"; }

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const xl::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Devices, VirtualCpuDevicesAreListedAndBounded) {
  RequireDevices();
  const std::vector<xl::Device> all = xl::devices();
  ASSERT_EQ(all.size(), static_cast<size_t>(xl::device_count()));
  for (int i = 0; i < xl::device_count(); ++i) EXPECT_EQ(all[i].str(), "cpu:" + std::to_string(i));
  const std::string message = ErrorOf([] { xl::device(xl::device_count()); });
  EXPECT_NE(message.find("cpu:" + std::to_string(xl::device_count())), std::string::npos) << message;
  EXPECT_NE(ErrorOf([] { xl::zeros({2}, xl::DType::f32, xl::Device{xl::DeviceKind::cpu, 99}); }).find("cpu:99"),
            std::string::npos);
}

TEST(Devices, FactoriesPlaceDataAndEachDeviceCountsItsOwnMemory) {
  RequireDevices();
  const xl::Device d2 = xl::device(2), d3 = xl::device(3);
  const int64_t before2 = xl::get_memory_info(d2).bytes_used, before3 = xl::get_memory_info(d3).bytes_used;
  xl::Tensor x = xl::full({1024}, 2.5, xl::DType::f32, d2);
  xl::Tensor y = xl::tensor(std::vector<float>{1, 2, 3}, d2);
  EXPECT_EQ(x.device(), d2);
  EXPECT_EQ(y.device(), d2);
  xl::sync({x});
  EXPECT_EQ(x.impl()->data()->device(), d2);
  EXPECT_GE(xl::get_memory_info(d2).bytes_used - before2, 1024 * 4);
  EXPECT_EQ(xl::get_memory_info(d3).bytes_used, before3);
  EXPECT_EQ(x.to_vector<float>()[1023], 2.5f);
  EXPECT_EQ(xl::arange(5, d3).device(), d3);
  EXPECT_EQ(xl::eye(3, -1, xl::DType::f32, d3).device(), d3);
  EXPECT_EQ(xl::randn({4}, xl::DType::f32, d3).device(), d3);
  EXPECT_EQ(xl::zeros_like(x).device(), d2);
}

TEST(Devices, OpsOnTwoDevicesRaiseNamingBoth) {
  RequireDevices();
  xl::Tensor a = xl::ones({3}, xl::DType::f32, xl::device(0));
  xl::Tensor b = xl::ones({3}, xl::DType::f32, xl::device(1));
  const std::string message = ErrorOf([&] { (void)(a + b); });
  EXPECT_NE(message.find("[add]"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu:0"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu:1"), std::string::npos) << message;
  EXPECT_NE(ErrorOf([&] { (void)xl::matmul(xl::reshape(a, {1, 3}), xl::reshape(b, {3, 1})); }).find("cpu:1"),
            std::string::npos);
}

TEST(Devices, ScalarsAndConstantsFollowTheirTensor) {
  RequireDevices();
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    const xl::Device d1 = xl::device(1);
    xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3, 4}, d1);
    xl::Tensor y = xl::where(x > 2.0, x * 2.5 + 1.0, 0.0);
    EXPECT_EQ(y.device(), d1);
    xlite_test::ExpectClose(y.to_vector<float>(), {0, 0, 8.5, 11});
    EXPECT_EQ(xl::tril(xl::reshape(x, {2, 2})).device(), d1);
    EXPECT_EQ(xl::argmax(xl::tensor(3.0f, d1), 0).device(), d1);
  }
}

TEST(Devices, ToMovesTheValueLazilyAndEagerly) {
  RequireDevices();
  for (bool eager : {false, true}) {
    xl::EagerModeGuard mode(eager);
    xl::Tensor x = xl::tensor(std::vector<float>{1, -2, 3}, xl::device(0));
    xl::Tensor moved = xl::exp(x).to(xl::device(2));
    EXPECT_EQ(moved.device(), xl::device(2));
    xl::Tensor back = (moved * 2.0).to(xl::device(0)) + x;
    EXPECT_EQ(back.device(), xl::device(0));
    xlite_test::ExpectClose(back.to_vector<float>(),
                            {2 * std::exp(1.0) + 1, 2 * std::exp(-2.0) - 2, 2 * std::exp(3.0) + 3});
    xl::sync({moved});
    EXPECT_EQ(moved.impl()->data()->device(), xl::device(2));
    // Moving to the device a tensor is on moves nothing.
    EXPECT_EQ(x.to(xl::device(0)).device(), xl::device(0));
  }
}

TEST(Devices, GradientsFlowBackThroughATransfer) {
  RequireDevices();
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3}, xl::device(0)).requires_grad_();
  xl::Tensor on1 = x.to(xl::device(1));
  xl::Tensor loss = xl::sum(on1 * on1 * 3.0);
  EXPECT_EQ(loss.device(), xl::device(1));
  loss.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), xl::device(0));
  xlite_test::ExpectClose(x.grad().to_vector<float>(), {6, 12, 18});
}

TEST(Devices, SyncRunsOneProgramPerDevice) {
  RequireDevices();
  xl::Tensor a = xl::tensor(std::vector<float>{1, 2}, xl::device(0));
  xl::Tensor b = xl::tensor(std::vector<float>{3, 4}, xl::device(3));
  xl::sync();
  xl::Tensor a2 = a * a, b2 = b + 1.0, c = (a2.to(xl::device(3)) + b2);
  const int64_t executes = xl::metrics::counter_value("Execute");
  xl::sync();
  EXPECT_EQ(xl::metrics::counter_value("Execute") - executes, 2);
  EXPECT_EQ(a2.impl()->data()->device(), xl::device(0));
  EXPECT_EQ(c.impl()->data()->device(), xl::device(3));
  xlite_test::ExpectClose(c.to_vector<float>(), {5, 9});
}

TEST(Devices, CopyAndCheckpointsCrossDevices) {
  RequireDevices();
  xl::Tensor target = xl::zeros({3}, xl::DType::f32, xl::device(1));
  target.copy_(xl::tensor(std::vector<float>{7, 8, 9}, xl::device(0)));
  EXPECT_EQ(target.device(), xl::device(1));
  xlite_test::ExpectClose(target.to_vector<float>(), {7, 8, 9});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("xlite_device_test_" + std::to_string(::getpid()) + ".safetensors"))
          .string();
  xl::save({{"t", target}}, path);
  auto loaded = xl::load(path, xl::device(3));
  std::filesystem::remove(path);
  EXPECT_EQ(loaded.at("t").device(), xl::device(3));
  xlite_test::ExpectClose(loaded.at("t").to_vector<float>(), {7, 8, 9});
}

TEST(Devices, TrainingOnAnotherDeviceAndOneOptimizerPerDevice) {
  RequireDevices();
  const xl::Device d2 = xl::device(2);
  xl::manual_seed(3);
  xl::Tensor w = xl::randn({4, 1}, xl::DType::f32, d2).requires_grad_();
  xl::Tensor xs = xl::randn({16, 4}, xl::DType::f32, d2);
  xl::Tensor ys = xl::sum(xs * 0.5, {1}, true);
  xl::optim::SGD opt({w}, 0.1);
  auto step = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) {
    opt.zero_grad();
    xl::Tensor loss = xl::mean((xl::matmul(x, w) - y) * (xl::matmul(x, w) - y));
    loss.backward();
    opt.step();
    return loss;
  });
  float first = 0, last = 0;
  for (int i = 0; i < 30; ++i) {
    xl::Tensor loss = step(xs, ys);
    EXPECT_EQ(loss.device(), d2);
    (i == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first * 0.5f);
  EXPECT_EQ(w.device(), d2);
  xl::Tensor other = xl::zeros({1}, xl::DType::f32, xl::device(1)).requires_grad_();
  const std::string message = ErrorOf([&] { xl::optim::SGD mixed({w, other}, 0.1); });
  EXPECT_NE(message.find("cpu:2"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu:1"), std::string::npos) << message;
}

TEST(Devices, ACompiledStepWithResultsOnTwoDevicesRaises) {
  RequireDevices();
  xl::Tensor a = xl::ones({2}, xl::DType::f32, xl::device(0));
  auto step =
      xl::compile([&](const xl::Tensor& x) { return std::vector<xl::Tensor>{x * 2.0, (x * 3.0).to(xl::device(1))}; });
  const std::string message = ErrorOf([&] { step(a); });
  EXPECT_NE(message.find("several devices"), std::string::npos) << message;
}

TEST(Devices, ProgramsRunOnTheDeviceTheyWereCompiledFor) {
  RequireDevices();
  const xl::ir::Graph graph = xl::ir::parse_graph(
      "%x = parameter(index=0) : f32[3] @cpu:1\n"
      "%y = tanh(%x) : f32[3] @cpu:1\n"
      "%z = transfer(%y) : f32[3] @cpu:2\n"
      "%w = mul(%z, %z) : f32[3] @cpu:2\n"
      "return %w\n");
  EXPECT_NE(graph.hash(), xl::ir::parse_graph("%x = parameter(index=0) : f32[3] @cpu:1\n"
                                              "%y = tanh(%x) : f32[3] @cpu:1\n"
                                              "%z = transfer(%y) : f32[3] @cpu:3\n"
                                              "%w = mul(%z, %z) : f32[3] @cpu:3\n"
                                              "return %w\n")
                              .hash());
  EXPECT_EQ(xl::ir::parse_graph(xl::ir::to_text(graph)), graph);
  const std::vector<float> in = {0.5f, -1, 2};
  const xl::BufferPtr arg = xl::runtime::from_host(std::as_bytes(std::span(in)), xl::device(1));
  for (const std::string backend : {"cpu", "reference"}) {
    auto exe = xl::compiler::compile_with(graph, backend);
    EXPECT_EQ(exe->device(), xl::device(2)) << backend;
    std::vector<xl::BufferPtr> out = exe->run({&arg, 1}, {}, xl::runtime::RunOn{xl::device(2)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->device(), xl::device(2)) << backend;
    std::vector<float> got(3);
    xl::runtime::to_host(*out[0], std::as_writable_bytes(std::span(got)));
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::tanh(in[i]) * std::tanh(in[i]), 1e-6) << backend;
    const std::string message = ErrorOf([&] { exe->run({&arg, 1}, {}, xl::runtime::RunOn{xl::device(0)}); });
    EXPECT_NE(message.find("compiled for cpu:2 and is run on cpu:0"), std::string::npos) << message;
  }
}

TEST(Devices, LayersAndHelpersKeepTheirInputsDevice) {
  RequireDevices();
  const xl::Device d3 = xl::device(3);
  xl::nn::Dropout dropout(0.5);
  xl::Tensor x = xl::ones({64}, xl::DType::f32, d3);
  xl::Tensor y = dropout(x);
  EXPECT_EQ(y.device(), d3);
  for (float v : y.to_vector<float>()) EXPECT_TRUE(v == 0.0f || v == 2.0f) << v;
  xl::Tensor w = xl::ones({2}, xl::DType::f32, d3).requires_grad_();
  xl::sum(w * 3.0).backward();
  EXPECT_EQ(xl::optim::clip_grad_norm_({w}, 1.0).device(), d3);
  xl::Tensor other = xl::ones({2}, xl::DType::f32, xl::device(1)).requires_grad_();
  EXPECT_NE(ErrorOf([&] { xl::optim::clip_grad_norm_({w, other}, 1.0); }).find("cpu:1"), std::string::npos);
  xl::Tensor out = xl::sum(w * w);
  const std::string seeded = ErrorOf([&] { out.backward(xl::ones({}, xl::DType::f32, xl::device(0))); });
  EXPECT_NE(seeded.find("gradient on cpu:0 for an output on cpu:3"), std::string::npos) << seeded;
  EXPECT_NE(ErrorOf([] { xl::load("/nonexistent.safetensors", xl::Device{xl::DeviceKind::cpu, 40}); }).find("[load]"),
            std::string::npos);
}

TEST(Devices, AGraphOnADeviceThatDoesNotExistIsRefusedAtCompile) {
  RequireDevices();
  const xl::ir::Graph graph = xl::ir::parse_graph(
      "%x = parameter(index=0) : f32[3] @cpu:9\n"
      "%y = neg(%x) : f32[3] @cpu:9\n"
      "return %y\n");
  const std::string message = ErrorOf([&] { xl::compiler::compile(graph); });
  EXPECT_NE(message.find("[compile] %0 is on cpu:9, but there are"), std::string::npos) << message;
}

TEST(Devices, OneKernelServesEveryCpuDevice) {
  RequireDevices();
  auto run_on = [](int d) {
    xl::Tensor x = xl::arange(0, 1000, 1, xl::device(d)).to(xl::DType::f32);
    return xl::sum(xl::sin(x * 0.37 + 11.0) * 5.0).item<float>();
  };
  const float on1 = run_on(1);
  const int64_t compiled = xl::backends::cpu::kernels_compiled();
  EXPECT_EQ(run_on(2), on1);
  EXPECT_EQ(xl::backends::cpu::kernels_compiled(), compiled);
}
