// safetensors checkpoints: round trips, the exact format, atomic writes and every kind of corruption.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
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
  expect_load_error(
      with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data),
      "names 'a' twice");
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

namespace {
using MakeOptimizer = std::function<std::unique_ptr<xl::optim::Optimizer>(std::vector<xl::Tensor>)>;

void train_steps(xl::nn::Linear& model, xl::optim::Optimizer& opt, int steps) {
  auto x = xl::tensor(std::vector<float>{1, -2, 0.5f, 3, 0, -1, 2, 2, -0.5f, 1, 1, 1}, {4, 3});
  auto y = xl::tensor(std::vector<float>{1, 0, -1, 2, 0.5f, 0, 1, -1}, {4, 2});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    xl::nn::mse_loss(model(x), y).backward();
    opt.step();
  }
  xl::sync();
}

std::vector<float> flat_parameters(xl::nn::Module& model) {
  std::vector<float> all;
  for (const xl::Tensor& p : model.parameters())
    for (float v : p.to_vector<float>()) all.push_back(v);
  return all;
}
}  // namespace

// Saving the module and the optimizer, then loading both into fresh ones, continues the same run: the
// optimizer's momentum or moments, step count and learning rate come back with it.
TEST(Checkpoint, TrainingResumesFromModuleAndOptimizerState) {
  std::vector<std::pair<std::string, MakeOptimizer>> optimizers = {
      {"sgd", [](std::vector<xl::Tensor> p) { return std::make_unique<xl::optim::SGD>(std::move(p), 0.05, xl::optim::SGDOptions{0.9, 0, 0.01, true}); }},
      {"adamw", [](std::vector<xl::Tensor> p) { return std::make_unique<xl::optim::AdamW>(std::move(p), 0.02); }},
  };
  for (const auto& [name, make] : optimizers) {
    SCOPED_TRACE(name);
    xl::nn::Linear original(3, 2);
    auto original_opt = make(original.parameters());
    train_steps(original, *original_opt, 3);
    std::string model_path = temp_path("resume_model"), opt_path = temp_path("resume_opt");
    xl::save(original.state_dict(), model_path);
    xl::save(original_opt->state_dict(), opt_path);

    xl::nn::Linear resumed(3, 2), without_state(3, 2);
    auto resumed_opt = make(resumed.parameters());
    resumed_opt->set_lr(1.0);  // the checkpoint's learning rate replaces it
    resumed.load_state_dict(xl::load(model_path));
    resumed_opt->load_state_dict(xl::load(opt_path));
    EXPECT_EQ(resumed_opt->lr(), original_opt->lr());
    without_state.load_state_dict(xl::load(model_path));
    auto fresh_opt = make(without_state.parameters());

    train_steps(original, *original_opt, 2);
    train_steps(resumed, *resumed_opt, 2);
    train_steps(without_state, *fresh_opt, 2);
    EXPECT_EQ(flat_parameters(resumed), flat_parameters(original));
    EXPECT_NE(flat_parameters(without_state), flat_parameters(original));  // the state mattered
    fs::remove(model_path);
    fs::remove(opt_path);
  }
}

TEST(Checkpoint, ABadOptimizerStateRaisesAndChangesNothing) {
  xl::nn::Linear model(3, 2);
  xl::optim::Adam adam(model.parameters(), 0.01);
  train_steps(model, adam, 1);
  std::map<std::string, xl::Tensor> good = adam.state_dict();
  EXPECT_EQ(good.size(), 1u + 1u + 2u * model.parameters().size());  // lr, step, m and v per parameter
  auto expect_error = [&](std::map<std::string, xl::Tensor> state, const std::string& fragment) {
    std::vector<float> m0 = adam.state_dict().at("m.0").to_vector<float>();
    try {
      adam.load_state_dict(state);
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const xl::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
    EXPECT_EQ(adam.state_dict().at("m.0").to_vector<float>(), m0);
    EXPECT_EQ(adam.lr(), 0.01);
  };
  auto changed = [&](const std::string& key, xl::Tensor value) {
    std::map<std::string, xl::Tensor> state;
    for (const auto& [name, t] : good) state[name] = name == "lr" ? xl::tensor(0.5) : xl::zeros_like(t);
    if (value.defined()) state[key] = value;
    else state.erase(key);
    return state;
  };
  const xl::Shape shape = good.at("m.0").shape();
  expect_error(changed("m.0", xl::zeros({7})), "'m.0' has shape [7], expected " + xl::shape_str(shape));
  expect_error(changed("m.7", xl::zeros(shape)), "unexpected 'm.7'");
  expect_error(changed("step", xl::Tensor()), "missing 'step'");
  expect_error(changed("lr", xl::tensor(std::nan(""))), "learning rate must be a finite number >= 0");
  xl::optim::SGD plain(model.parameters(), 0.1);
  EXPECT_THROW(plain.load_state_dict(good), xl::Error);  // no momentum: there is no 'm.0' to fill
}

// A state saved before the first step has no momentum buffers: loading it into an optimizer that has
// stepped drops its buffers, so it continues exactly as a new optimizer would.
TEST(Checkpoint, AStateFromBeforeTheFirstStepDropsMomentum) {
  xl::nn::Linear model(3, 2), twin(3, 2);
  twin.load_state_dict(model.state_dict());
  xl::optim::SGD sgd(model.parameters(), 0.05, {0.9});
  std::map<std::string, xl::Tensor> initial = sgd.state_dict();
  EXPECT_EQ(initial.size(), 1u);  // the learning rate only
  train_steps(model, sgd, 3);
  EXPECT_EQ(sgd.state_dict().size(), 1u + model.parameters().size());
  model.load_state_dict(twin.state_dict());
  sgd.load_state_dict(initial);
  EXPECT_EQ(sgd.state_dict().size(), 1u);
  xl::optim::SGD fresh(twin.parameters(), 0.05, {0.9});
  train_steps(model, sgd, 2);
  train_steps(twin, fresh, 2);
  EXPECT_EQ(flat_parameters(model), flat_parameters(twin));
}
