// The attention kernels' vector loops against the scalar ones: the exponential (std::exp), row maxima, and
// the dot products and scaled adds of paged decode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/half.h"
#include "kernels/vector_math.h"

namespace k = xlite::kernels;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every length up to 40 covers whole vectors and each ragged tail; the values sweep exp's whole range.
// The bound is that of the compiled loops' exp over every f32 (1.7e-7, core/exp_polynomial.h).
TEST(VectorMath, ExpShiftedSumMatchesStdExpWithinTwoUlpOverTheRange) {
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = -100.0f + 190.0f * static_cast<float>(i) / 41.0f;
    std::vector<float> want = x;
    const double want_sum = k::exp_shifted_sum_generic(want.data(), n, 1.5f);
    const double got_sum = k::exp_shifted_sum(x.data(), n, 1.5f);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], want[i], 2e-7 * want[i]) << "n " << n << " at " << i;
    EXPECT_NEAR(got_sum, want_sum, 1e-6 * want_sum) << "n " << n;
  }
  std::vector<float> dense(4096);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = -87.0f + 174.0f * static_cast<float>(i) / 4096.0f;
  std::vector<float> want = dense;
  k::exp_shifted_sum_generic(want.data(), 4096, 0.0f);
  k::exp_shifted_sum(dense.data(), 4096, 0.0f);
  for (size_t i = 0; i < dense.size(); ++i) ASSERT_NEAR(dense[i], want[i], 2e-7 * want[i]) << "at " << i;
}

TEST(VectorMath, MaskedScoresGiveZeroAndSpecialValuesKeepTheirMeaning) {
  std::vector<float> x = {-kInf, 0.0f, -kInf, 200.0f, -200.0f, NAN,  88.0f, -kInf, 1.0f,
                          2.0f,  3.0f, 4.0f,  5.0f,   6.0f,    7.0f, 8.0f,  9.0f,  -kInf};
  k::exp_shifted_sum(x.data(), static_cast<int64_t>(x.size()), 0.0f);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[1], 1.0f);
  EXPECT_EQ(x[3], kInf) << "overflow";
  EXPECT_EQ(x[4], 0.0f) << "underflow";
  EXPECT_TRUE(std::isnan(x[5]));
  EXPECT_NEAR(x[6], std::exp(88.0f), 2e-7 * std::exp(88.0f));
  EXPECT_EQ(x[17], 0.0f);
}

TEST(VectorMath, ScaleAndMaxScalesInPlaceAndReturnsTheLargest) {
  for (int64_t n = 0; n <= 35; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    std::vector<float> want = x;
    EXPECT_EQ(k::scale_and_max(x.data(), n, -0.5f), k::scale_and_max_generic(want.data(), n, -0.5f)) << n;
    EXPECT_EQ(x, want);
  }
  std::vector<float> hidden = {-kInf, -kInf};
  EXPECT_EQ(k::scale_and_max(hidden.data(), 2, 2.0f), -kInf);
}
TEST(VectorMath, DotRowsAndAddScaledRowsMatchTheScalarLoops) {
  for (int64_t count : {0, 1, 3, 8, 11})  // more than one group of eight rows at the end
    for (int64_t n : {1, 15, 16, 17, 128, 130}) {
      std::vector<float> rows(static_cast<size_t>(count * n)), x(static_cast<size_t>(n));
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = std::sin(0.3f * static_cast<float>(i));
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.7f * static_cast<float>(i));
      std::vector<float> got(static_cast<size_t>(count * 2), -1.0f), want = got;
      k::dot_rows(rows.data(), count, x.data(), n, got.data(), 2);
      k::dot_rows_generic(rows.data(), count, x.data(), n, want.data(), 2);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-5 * n) << count << "x" << n << " at " << i;
      std::vector<float> added = rows, added_want = rows;
      k::add_scaled_rows(added.data(), count, got.data(), 2, x.data(), n);
      k::add_scaled_rows_generic(added_want.data(), count, got.data(), 2, x.data(), n);
      for (size_t i = 0; i < added.size(); ++i) EXPECT_NEAR(added[i], added_want[i], 1e-5 * n) << count << "x" << n;
    }
}
}  // namespace

// The vector rounding gives float_to_bf16's bits: ties to even both ways, NaN kept quiet (sign and payload
// top bits), infinities, the largest finite values rounding up to inf, subnormals, and a ragged tail.
TEST(VectorMath, RoundToBf16GivesTheScalarRoundingsBits) {
  auto from_bits = [](uint32_t bits) { return xlite::bits_float(bits); };
  std::vector<float> x = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.5f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(),
                          from_bits(0x3f808000u) /* tie, even below */,
                          from_bits(0x3f818000u) /* tie, odd below: rounds up */,
                          from_bits(0x3f808001u),
                          from_bits(0x7f800001u) /* signalling NaN */,
                          from_bits(0xffc12345u)};
  for (int i = 0; i < 70; ++i)
    x.push_back(std::sin(static_cast<float>(i)) * std::pow(10.0f, static_cast<float>(i % 9 - 4)));
  for (size_t n : {x.size(), size_t{16}, size_t{5}, size_t{0}}) {
    std::vector<uint16_t> got(n, 0xdead), want(n);
    xlite::kernels::round_to_bf16(x.data(), static_cast<int64_t>(n), got.data());
    xlite::kernels::round_to_bf16_generic(x.data(), static_cast<int64_t>(n), want.data());
    EXPECT_EQ(got, want) << n << " values";
  }
  uint16_t bits[3];
  const float edges[3] = {from_bits(0x3f808000u), from_bits(0x3f818000u), from_bits(0x7f800001u)};
  xlite::kernels::round_to_bf16(edges, 3, bits);
  EXPECT_EQ(bits[0], 0x3f80) << "a tie rounds to the even neighbour";
  EXPECT_EQ(bits[1], 0x3f82) << "a tie rounds to the even neighbour";
  EXPECT_EQ(bits[2], 0x7fc0) << "a NaN stays a (quiet) NaN";
}
