// Tensor memory shared with other libraries (xlite/host_data.h): from_blob, from_bytes and host_data, which
// the Python package's NumPy and DLPack support is built on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <xlite/xlite.h>

#include "test_support.h"

namespace {

using namespace xlite_test;

TEST(HostData, FromBlobReadsTheOwnersMemoryAndReleasesItOnce) {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    Tensor t = xlite::from_blob(memory.data(), {2, 3}, DType::f32, [&] { ++released; });
    // No copy: the tensor reads the memory as it is when the value is used.
    memory[0] = 10;
    EXPECT_EQ(Vals(t * 2.f), (std::vector<float>{20, 4, 6, 8, 10, 12}));
    Tensor kept = t + 1.f;  // a pending value that still reads the memory
    EXPECT_EQ(released, 0);
    {
      Tensor gone = std::move(t);
    }
    EXPECT_EQ(released, 0) << "a pending graph still reads the memory";
    EXPECT_EQ(Vals(kept), (std::vector<float>{11, 3, 4, 5, 6, 7}));
  }
  EXPECT_EQ(released, 1);
}

TEST(HostData, AnInPlaceUpdateNeverWritesBorrowedMemory) {
  std::vector<float> memory = {1, 2, 3, 4};
  for (bool eager : {false, true}) {
    xlite::EagerModeGuard mode(eager);
    Tensor t = xlite::from_blob(memory.data(), {4}, DType::f32, nullptr);
    t.add_(1.f);
    t.mul_(2.f);
    xlite::sync();
    EXPECT_EQ(Vals(t), (std::vector<float>{4, 6, 8, 10}));
    EXPECT_EQ(memory, (std::vector<float>{1, 2, 3, 4})) << (eager ? "eager" : "lazy");
  }
  // Nor does a replayed compiled step that updates it in place.
  Tensor w = xlite::from_blob(memory.data(), {4}, DType::f32, nullptr);
  auto step = xlite::compile([&](const Tensor& x) { w.add_(x); });
  for (int i = 0; i < 4; ++i) step(xlite::ones({4}));
  EXPECT_TRUE(step.last_call().replayed);
  EXPECT_EQ(Vals(w), (std::vector<float>{5, 6, 7, 8}));
  EXPECT_EQ(memory, (std::vector<float>{1, 2, 3, 4}));
}

TEST(HostData, HostDataIsTheTensorsOwnBufferOnTheCpu) {
  Tensor t = xlite::arange(0, 6, 1).to(DType::f32) * 0.5f;  // pending: host_data computes it
  xlite::HostData view = xlite::host_data(t);
  ASSERT_TRUE(view.shared);
  const float* values = static_cast<const float*>(view.data);
  EXPECT_EQ(std::vector<float>(values, values + 6), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_FALSE(t.is_pending());
  // The view keeps the buffer alive after the tensor is gone.
  t = Tensor();
  EXPECT_EQ(values[5], 2.5f);
}

TEST(HostData, FromBytesCopiesAnyDtype) {
  // bf16 1.0 and -2.0, f16 0.5: raw bits, as NumPy hands them over.
  const uint16_t bf16[] = {0x3F80, 0xC000};
  Tensor b = xlite::from_bytes(bf16, {2}, DType::bf16);
  EXPECT_EQ(b.dtype(), DType::bf16);
  EXPECT_EQ(Vals(b.to(DType::f32)), (std::vector<float>{1, -2}));
  const uint16_t f16 = 0x3800;
  EXPECT_EQ(xlite::from_bytes(&f16, {}, DType::f16).item<float>(), 0.5f);
  const bool flags[] = {true, false, true};
  EXPECT_EQ(xlite::from_bytes(flags, {3}, DType::bool_).to_vector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(HostData, BadPointersAndShapesRaise) {
  alignas(8) unsigned char bytes[16] = {};
  EXPECT_NE(ErrorMessage([&] { xlite::from_blob(bytes + 1, {2}, DType::f32, nullptr); }).find("[from_blob]"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([&] { xlite::from_blob(bytes + 1, {2}, DType::f32, nullptr); }).find("not aligned"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([] { xlite::from_bytes(nullptr, {3}, DType::f32); }).find("null"), std::string::npos);
  EXPECT_NE(ErrorMessage([&] { xlite::from_bytes(bytes, {-1}, DType::f32); }).find("[from_bytes]"), std::string::npos);
  EXPECT_NE(ErrorMessage([] { xlite::host_data(Tensor()); }).find("undefined"), std::string::npos);
  // A refused blob goes back to its owner at once.
  int released = 0;
  EXPECT_NE(ErrorMessage([&] { xlite::from_blob(bytes + 1, {2}, DType::f32, [&] { ++released; }); }), "no exception");
  EXPECT_EQ(released, 1);
  // An empty tensor needs no memory.
  EXPECT_EQ(xlite::from_bytes(nullptr, {0, 3}, DType::f32).numel(), 0);
}

}  // namespace
