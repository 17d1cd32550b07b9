// The handwritten digits Debian's python3-sklearn ships (scripts/fetch-digits.sh puts them in data/digits.csv):
// 1797 images of 8x8 pixels (0..16) with their labels, read into tensors.
#pragma once
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>
#include <xlite/xlite.h>

struct Digits {
  xlite::Tensor images;  // [N, 64] f32, pixels scaled to [0, 1]
  xlite::Tensor labels;  // [N] i64
};

// The digits at path, or nothing (with a message on stderr) when the file is missing or malformed.
inline std::optional<Digits> load_digits(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s (run scripts/fetch-digits.sh)\n", path.c_str());
    return std::nullopt;
  }
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  for (std::string line; std::getline(in, line);) {
    std::stringstream fields(line);
    std::vector<float> row;
    for (std::string field; std::getline(fields, field, ',');) row.push_back(std::stof(field));
    if (row.size() != 65) {
      std::fprintf(stderr, "%s: a row has %zu fields, expected 64 pixels and a label\n", path.c_str(), row.size());
      return std::nullopt;
    }
    labels.push_back(static_cast<int64_t>(row.back()));
    for (size_t k = 0; k < 64; ++k) pixels.push_back(row[k] / 16.0f);
  }
  const auto n = static_cast<int64_t>(labels.size());
  return Digits{xlite::tensor(pixels, {n, 64}), xlite::tensor(labels, {n})};
}
