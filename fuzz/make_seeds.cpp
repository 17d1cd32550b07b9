// Writes the fuzzers' seed corpora with xlite's own code: real checkpoints that xlite::save writes, and
// the text IR of random graphs plus hand-written cases (special floats, every dtype).
//
//   xlite-fuzz-seeds <load corpus dir> <ir corpus dir>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <xlite/xlite.h>

#include "testing/random_graph.h"
#include "ir/graph.h"

namespace xl = xlite;
namespace fs = std::filesystem;

namespace {
void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

void write_checkpoints(const fs::path& dir) {
  const std::map<std::string, std::map<std::string, xl::Tensor>> checkpoints = {
      {"one_f32", {{"w", xl::arange(6).to(xl::DType::f32).reshape({2, 3})}}},
      {"every_dtype",
       {{"f32", xl::ones({2})},
        {"f64", xl::ones({2}).to(xl::DType::f64)},
        {"f16", xl::ones({3}).to(xl::DType::f16)},
        {"bf16", xl::ones({1, 2}).to(xl::DType::bf16)},
        {"i32", xl::arange(3).to(xl::DType::i32)},
        {"i64", xl::arange(2)},
        {"u8", xl::arange(4).to(xl::DType::u8)},
        {"bool", xl::arange(2).to(xl::DType::bool_)}}},
      {"empty_and_scalar", {{"empty", xl::zeros({0, 3})}, {"scalar", xl::full({}, 2.5f)}}},
  };
  for (const auto& [name, tensors] : checkpoints) xl::save(tensors, (dir / (name + ".safetensors")).string());
}

void write_graphs(const fs::path& dir) {
  xl::testing::RandomGraphOptions small;
  for (uint64_t seed = 0; seed < 64; ++seed)
    write_file(dir / ("random_" + std::to_string(seed) + ".ir"),
               xl::ir::to_text(xl::testing::random_graph(seed, small)));
  const char* hand[] = {
      "%0 = constant(value=-nan, dtype=f32) : f32[]\nreturn %0\n",
      "%0 = constant(value=nan_0x1, dtype=f64) : f64[]\n%1 = add(%0, %0) : f64[]\nreturn %1\n",
      "%0 = constant(value=4.9406564584124654e-324, dtype=f64) : f64[]\nreturn %0\n",
      "%0 = parameter(index=0) : f32[3]\n%1 = constant(value=-inf, dtype=f32) : f32[]\n"
      "%2 = broadcast(%1, shape=[3], dims=[]) : f32[3]\n%3 = maximum(%0, %2) : f32[3]\nreturn %3\n",
      "%0 = parameter(index=0) : i64[4]\n%1 = constant(value=0, dtype=i64) : i64[]\n"
      "%2 = broadcast(%1, shape=[4], dims=[]) : i64[4]\n%3 = rem(%0, %2) : i64[4]\nreturn %3\n",
  };
  int k = 0;
  for (const char* text : hand) write_file(dir / ("hand_" + std::to_string(k++) + ".ir"), text);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <load corpus dir> <ir corpus dir>\n", argv[0]);
    return 2;
  }
  fs::create_directories(argv[1]);
  fs::create_directories(argv[2]);
  write_checkpoints(argv[1]);
  write_graphs(argv[2]);
  return 0;
}
