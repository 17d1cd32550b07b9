// The inputs and the check of the peer comparison's workloads (bench/peer_workloads.cpp for xlite,
// bench/torch_workloads_peer.cpp for libtorch; bench/peers.py computes the same in NumPy), so that every
// framework runs on the same floats and the table can show that each computed the same thing. Standard
// library only: the libtorch peer does not link xlite.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace peer_inputs {

// The sizes every framework runs: elements of the chains, rows of 1024 for the row workloads, elements of
// the transcendentals alone.
inline constexpr std::array<int64_t, 4> kChainElements = {int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24,
                                                          int64_t{1} << 26};
inline constexpr std::array<int64_t, 4> kRows = {int64_t{1} << 10, int64_t{1} << 12, int64_t{1} << 14,
                                                 int64_t{1} << 16};
inline constexpr int64_t kColumns = 1024;
inline constexpr int64_t kAloneElements = int64_t{1} << 24;

// "1M" for 2^20 elements: the size part of a case's name.
inline std::string size_label(int64_t elements) { return std::to_string(elements >> 20) + "M"; }

// The elements of a tensor of shape `dims`.
template <class Dims>
int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A fixed hash of the index mapped to [-3, 3), exact in double before the rounding to f32, so NumPy makes the
// same floats.
inline std::vector<float> input_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t h = (static_cast<uint64_t>(i) * 2654435761ull) & 0xffffffffull;
    v[static_cast<size_t>(i)] = static_cast<float>(static_cast<double>(h) / 4294967296.0 * 6.0 - 3.0);
  }
  return v;
}

// The class of row i: a stride through the classes, so that every row's target differs from its neighbours'.
inline std::vector<int64_t> target_values(int64_t rows, int64_t classes) {
  std::vector<int64_t> t(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) t[static_cast<size_t>(i)] = (i * 7919) % classes;
  return t;
}

// Sum over every 997th element of out[k] * (k % 13 - 6).
inline double checksum(const float* out, size_t n) {
  double sum = 0;
  for (size_t k = 0; k < n; k += 997) sum += out[k] * static_cast<double>(static_cast<int64_t>(k % 13) - 6);
  return sum;
}

}  // namespace peer_inputs
