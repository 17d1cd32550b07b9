// safetensors checkpoints: round trips, the exact format, atomic writes and every kind of corruption.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <xlite/xlite.h>

namespace xl = xlite;
namespace fs = std::filesystem;

namespace {
std::string temp_path(const std::string& name) { return (fs::temp_directory_path() / ("xlite_" + name + "_" + std::to_string(::getpid()))).string(); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string with_header(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

void expect_load_error(const std::string& bytes, const std::string& fragment) {
  std::string path = temp_path("corrupt");
  write_bytes(path, bytes);
  try {
    xl::load(path);
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  fs::remove(path);
}
}  // namespace

TEST(Checkpoint, RoundTripsEveryDtype) {
  std::string path = temp_path("roundtrip");
  std::map<std::string, xl::Tensor> state = {
      {"w", xl::tensor(std::vector<float>{1.5f, -2, 3, 4}, {2, 2})},
      {"h", xl::tensor(std::vector<float>{0.5f, 1}).to(xl::DType::f16)},
      {"b", xl::tensor(std::vector<float>{3.25f}).to(xl::DType::bf16)},
      {"d", xl::tensor(std::vector<double>{1e-300})},
      {"i", xl::tensor(std::vector<int32_t>{-7, 8})},
      {"l", xl::arange(0, 5) * 1000000000000LL},
      {"u", xl::tensor(std::vector<uint8_t>{255})},
      {"m", xl::tensor(std::vector<bool>{true, false, true})},
      {"empty", xl::zeros({0, 3})},
      {"scalar", xl::tensor(2.5f) * 2.0f},
  };
  xl::save(state, path);
  auto loaded = xl::load(path);
  ASSERT_EQ(loaded.size(), state.size());
  for (const auto& [name, t] : state) {
    ASSERT_TRUE(loaded.count(name)) << name;
    EXPECT_EQ(loaded[name].dtype(), t.dtype()) << name;
    EXPECT_EQ(loaded[name].shape(), t.shape()) << name;
    EXPECT_EQ(loaded[name].to_vector<double>(), t.to_vector<double>()) << name;
  }
  fs::remove(path);
}

TEST(Checkpoint, WritesTheSafetensorsLayout) {
  std::string path = temp_path("layout");
  xl::save({{"a", xl::tensor(std::vector<float>{1, 2})}}, path);
  std::string json = R"({"a":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  float values[2] = {1, 2};
  EXPECT_EQ(read_bytes(path), with_header(json, std::string(reinterpret_cast<char*>(values), 8)));
  fs::remove(path);
}

TEST(Checkpoint, ReadsFilesWithMetadataAndAnyKeyOrder) {
  std::string path = temp_path("foreign");
  int32_t v = 42;
  write_bytes(path, with_header(R"({"__metadata__":{"format":"pt"},"x":{"shape":[],"dtype":"I32","data_offsets":[0,4]}})",
                                std::string(reinterpret_cast<char*>(&v), 4)));
  auto loaded = xl::load(path);
  EXPECT_EQ(loaded.at("x").item<int32_t>(), 42);
  fs::remove(path);
}

TEST(Checkpoint, SaveIsAtomic) {
  std::string path = temp_path("atomic");
  xl::save({{"a", xl::ones({3})}}, path);
  std::string before = read_bytes(path);
  EXPECT_THROW(xl::save({{"a", xl::ones({3})}}, "/nonexistent_dir_xlite/x.safetensors"), xl::Error);
  EXPECT_THROW(xl::save({{"a", xl::Tensor()}}, path), xl::Error);  // nothing written
  EXPECT_EQ(read_bytes(path), before);
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << "temporary file left behind";
  fs::remove(path);
}

TEST(Checkpoint, CorruptFilesRaiseErrors) {
  float values[2] = {1, 2};
  std::string data(reinterpret_cast<char*>(values), 8);
  std::string good = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  expect_load_error("abc", "too short");
  expect_load_error(with_header(good, data).substr(0, 20), "exceeds the file");
  expect_load_error(with_header(good, data.substr(0, 4)), "outside");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data), "needs 12");
  expect_load_error(with_header(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", data), "unsupported dtype");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[2]}})", data), "bad entry");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data), "negative");
  // 4 * (2^61 + 1) * 2 bytes wraps around to 8 in 64 bits: it must not pass for the 8 bytes there are.
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[2305843009213693953,2],"data_offsets":[0,8]}})", data),
                    "overflows");
  expect_load_error(
      with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data),
      "overlaps 'a'");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data), "bytes 0-4 belong to no tensor");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data), "bytes 4-8 belong to no tensor");
  expect_load_error(with_header(R"({"a": [1,2)", data), "corrupt header");
  expect_load_error(with_header(R"([1,2])", data), "not a JSON object");
  EXPECT_THROW(xl::load(temp_path("missing")), xl::Error);
}

TEST(Checkpoint, ModuleStateSurvivesARoundTrip) {
  xl::nn::Linear a(3, 2), b(3, 2);
  std::string path = temp_path("module");
  xl::save(a.state_dict(), path);
  b.load_state_dict(xl::load(path));
  auto x = xl::randn({4, 3});
  EXPECT_EQ(a(x).to_vector<float>(), b(x).to_vector<float>());
  fs::remove(path);
}
