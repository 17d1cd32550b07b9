// The two oneDNN paths of a library matmul (backends/cpu/library.h): which one runs, and what each leaves
// behind in memory.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

#include "backends/cpu/library.h"
#include "core/address_sanitizer.h"
#include "runtime/allocator.h"

namespace xl = xlite;
using xl::backends::cpu::Matmul;

namespace {
// Bytes of anonymous, non-executable memory resident outside the mapping that holds `inside`
// (/proc/self/smaps): malloc's heaps, but neither the allocator's region nor JIT-compiled code.
int64_t resident_heap_bytes_outside(const void* inside) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(inside);
  int64_t total = 0;
  bool counted = false;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "Rss:") {
      int64_t kib = 0;
      words >> kib;
      if (counted) total += kib << 10;
      continue;
    }
    const size_t dash = first.find('-');
    if (dash == std::string::npos || first.back() == ':') continue;  // another field of the same mapping
    const uintptr_t begin = std::stoull(first.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(first.substr(dash + 1), nullptr, 16);
    std::string perms, offset, device, inode, path;
    words >> perms >> offset >> device >> inode >> path;
    const bool anonymous = inode == "0" && (path.empty() || path == "[heap]");
    counted = anonymous && perms.find('x') == std::string::npos && !(begin <= address && address < end);
  }
  return total;
}
}  // namespace

// A large product that both sgemm and the primitive can run times each a few times (4 runs each, the
// first not counted), then keeps the faster for every Matmul of its signature; every run, timed or not,
// computes the same product.
TEST(CpuBackend, MatmulTimesBothLibraryPathsThenKeepsOne) {
  const int64_t m = 192, k = 448, n = 320;  // 27.5M multiply-adds: large enough to be timed
  std::vector<float> a(m * k), b(k * n), want(m * n, 0.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  // a is read transposed: stored [k, m].
  std::vector<float> a_t(k * m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) a_t[p * m + i] = a[i * k + p];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) want[i * n + j] += a[i * k + p] * b[p * n + j];
  Matmul product({m, k}, {1, m}, {k, n}, {n, 1});
  EXPECT_EQ(product.path(), Matmul::Path::undecided);
  std::vector<float> out(m * n);
  for (int run = 0; run < 9; ++run) {
    if (run == 7) {
      EXPECT_EQ(product.path(), Matmul::Path::undecided) << "decided before both paths ran 4 times";
    }
    std::fill(out.begin(), out.end(), NAN);
    product.run(a_t.data(), b.data(), out.data());
    for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(out[i], want[i], 1e-3f) << "run " << run << " element " << i;
  }
  const Matmul::Path chosen = product.path();
  EXPECT_NE(chosen, Matmul::Path::undecided);
  Matmul same_signature({m, k}, {1, m}, {k, n}, {n, 1});
  EXPECT_EQ(same_signature.path(), chosen);  // decided once per process
  same_signature.run(a_t.data(), b.data(), out.data());
  for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(out[i], want[i], 1e-3f) << i;
  // Small products and layouts sgemm cannot read are not timed.
  EXPECT_EQ(Matmul({8, 64}, {64, 1}, {64, 8}, {8, 1}).path(), Matmul::Path::sgemm);
  EXPECT_EQ(Matmul({m, k}, {k, 1}, {k, n}, {1, k}).path(), Matmul::Path::primitive);
}

// A oneDNN primitive borrows its scratchpad from the device's allocator for each run instead of keeping one
// for life (about 320 KiB per matmul in the library's own mode): making primitives adds little to the heap,
// and a run hands the scratchpad back.
TEST(CpuBackend, MatmulPrimitivesBorrowTheirScratchpadForEachRun) {
  constexpr int kPrimitives = 16;
  const int64_t k = 512, n = 512;
  auto heap = [] {
    const struct mallinfo2 info = mallinfo2();
    return static_cast<int64_t>(info.uordblks + info.hblkhd);
  };
  const int64_t before = heap();
  std::vector<std::unique_ptr<Matmul>> products;
  for (int i = 0; i < kPrimitives; ++i) {
    const int64_t m = 256 + 16 * i;  // distinct shapes: oneDNN's own cache would share equal ones
    products.push_back(std::make_unique<Matmul>(xl::Shape{m, k}, std::vector<int64_t>{k, 1}, xl::Shape{k, n},
                                                std::vector<int64_t>{1, k}));  // b transposed: the primitive
    ASSERT_EQ(products.back()->path(), Matmul::Path::primitive);
  }
  EXPECT_LT(heap() - before, kPrimitives * (64 << 10)) << "bytes per primitive: " << (heap() - before) / kPrimitives;
  const int64_t m = 256 + 16 * (kPrimitives - 1);
  std::vector<float> a(m * k, 1.0f), b(k * n, 0.5f), out(m * n, NAN);
  const int64_t used = xl::get_memory_info(xl::Device{}).bytes_used;
  products.back()->run(a.data(), b.data(), out.data());
  EXPECT_EQ(xl::get_memory_info(xl::Device{}).bytes_used, used);
  EXPECT_EQ(out[0], 256.0f);
  EXPECT_EQ(out[m * n - 1], 256.0f);
}

// oneDNN's sgemm mallocs its packing buffers in every call, and glibc keeps what is freed resident. The
// trials that time sgemm against the primitive give those pages back, so the path that loses leaves no
// memory behind (in the MLP's step at batch 1024, 8 to 14 MiB of heap kept by trials sgemm lost).
// The shape is a weight gradient's, whose K sgemm splits between threads.
TEST(CpuBackend, MatmulTrialsLeaveNoHeapMemoryResident) {
  if (XLITE_ADDRESS_SANITIZER) GTEST_SKIP() << "AddressSanitizer's allocator holds freed memory in quarantine";
  const int64_t m = 1024, k = 2048, n = 1024;
  std::vector<float> a_t(k * m, 0.25f), b(k * n, 0.5f), out(m * n);
  Matmul product({m, k}, {1, m}, {k, n}, {n, 1});
  ASSERT_EQ(product.path(), Matmul::Path::undecided);
  // A buffer in the allocator's region, to leave the region out of the count.
  const xl::BufferPtr in_region = xl::runtime::allocator(xl::Device{}).allocate(size_t{4} << 20);
  const void* region = in_region->data();
  const int64_t before = resident_heap_bytes_outside(region);
  for (int run = 0; run < 8; ++run) {
    product.run(a_t.data(), b.data(), out.data());
    ASSERT_EQ(out[0], 0.25f * 0.5f * k) << "run " << run;
  }
  EXPECT_NE(product.path(), Matmul::Path::undecided);
  const int64_t grown = resident_heap_bytes_outside(region) - before;
  EXPECT_LT(grown, int64_t{1} << 20) << "heap bytes kept resident by the trials: " << grown;
}
