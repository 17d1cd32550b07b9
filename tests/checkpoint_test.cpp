// safetensors checkpoints: round trips, the exact format, atomic writes and every kind of corruption.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>
#include <xlite/xlite.h>

#include <sys/wait.h>
#include <unistd.h>

namespace xl = xlite;
namespace fs = std::filesystem;

namespace {
std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("xlite_" + name + "_" + std::to_string(::getpid()))).string();
}

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

int temps_next_to(const std::string& path) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    n += entry.path().string().rfind(path + ".tmp.", 0) == 0;
  return n;
}

// The first element of the only tensor a checkpoint holds.
float first_value(const std::string& path) { return xl::load(path).begin()->second.to_vector<float>()[0]; }

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
  write_bytes(path,
              with_header(R"({"__metadata__":{"format":"pt"},"x":{"shape":[],"dtype":"I32","data_offsets":[0,4]}})",
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
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                    "a dim of 'a' is -2, not an integer");
  // 4 * (2^61 + 1) * 2 bytes wraps around to 8 in 64 bits: it must not pass for the 8 bytes there are.
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[2305843009213693953,2],"data_offsets":[0,8]}})", data),
                    "overflows");
  expect_load_error(
      with_header(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          data),
      "overlaps 'a'");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data),
                    "bytes 0-4 belong to no tensor");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data),
                    "bytes 4-8 belong to no tensor");
  expect_load_error(
      with_header(
          R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          data),
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
      {"sgd",
       [](std::vector<xl::Tensor> p) {
         return std::make_unique<xl::optim::SGD>(std::move(p), 0.05, xl::optim::SGDOptions{0.9, 0, 0.01, true});
       }},
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
    if (value.defined())
      state[key] = value;
    else
      state.erase(key);
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

// Loading takes time linear in the number of tensors: with a parse callback the JSON library rescanned
// the header object after every entry (100000 entries took minutes).
TEST(Checkpoint, ManyTensorsLoadInLinearTime) {
  std::string json = "{";
  for (int i = 0; i < 100000; ++i)
    json += (i ? ",\"t" : "\"t") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string path = temp_path("many");
  write_bytes(path, with_header(json, ""));
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(xl::load(path).size(), 100000u);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 10.0);
  fs::remove(path);
}

TEST(Checkpoint, HeadersNoWriterMakesAreRefusedBeforeTheyCost) {
  // 20 MB of '[' once took seconds and 1.5 GB before the parser gave up.
  expect_load_error(with_header(std::string(20 << 20, '['), ""), "nests deeper than 8 levels (at byte 8)");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1.9],"data_offsets":[0,4]}})", "abcd"),
                    "a dim of 'a' is 1.9, not an integer from 0 to 2^63-1");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1e300],"data_offsets":[0,4]}})", "abcd"),
                    "is 1e+300, not");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4]}})", "abcd"),
                    "is 9223372036854775808, not");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-1.5,4]}})", "abcd"),
                    "a data offset of 'a' is -1.5, not");
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,4]}})", "abcd"), "is 2, not a list");
  expect_load_error(with_header(R"({"a":5})", ""), "the entry of 'a' is not an object");
  // A zero dim makes no bytes, but the other dims' strides still overflow: refused, not loaded.
  expect_load_error(with_header(R"({"a":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})", ""),
                    "overflows");
  expect_load_error(
      with_header(R"({"a":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}})", ""),
      "overflows");
  // Brackets inside a name are text, not nesting.
  const std::string deep_name(40, '[');
  std::string path = temp_path("bracket_name");
  xl::save({{deep_name, xl::ones({2})}}, path);
  EXPECT_EQ(xl::load(path).count(deep_name), 1u);
  fs::remove(path);
}

TEST(Checkpoint, LoadSaysWhatIsWrongWithThePath) {
  try {
    xl::load(fs::temp_directory_path().string());
    ADD_FAILURE() << "a directory loaded";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  // /proc files report a size of 0: the length prefix is never read from bytes that are not there.
  try {
    xl::load("/proc/self/status");
    ADD_FAILURE() << "/proc/self/status loaded";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("file of 0 bytes is too short"), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, NamesThatAreNotUtf8RaiseXliteErrors) {
  std::string path = temp_path("utf8");
  try {
    xl::save({{std::string("w\xff\xfe"), xl::ones({2})}}, path);
    ADD_FAILURE() << "a name that is not UTF-8 was saved";
  } catch (const xl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not valid UTF-8"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(temps_next_to(path), 0);
  expect_load_error(with_header("{\"w\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", "abcd"),
                    "corrupt header");
}

TEST(Checkpoint, WritersOfOnePathEachSaveAWholeFile) {
  const std::string path = temp_path("writers");
  std::vector<xl::Tensor> versions;
  for (int w = 0; w < 4; ++w) versions.push_back(xl::full({1000}, static_cast<float>(w + 1)));
  xl::sync(versions);
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int k = 0; k < 10; ++k) try {
          xl::save({{"v", versions[w]}}, path);
        } catch (const xl::Error&) {
          ++failures;
        }
    });
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  const std::vector<float> v = xl::load(path).at("v").to_vector<float>();
  ASSERT_EQ(v.size(), 1000u);
  EXPECT_TRUE(v[0] >= 1 && v[0] <= 4) << v[0];
  EXPECT_EQ(std::count(v.begin(), v.end(), v[0]), 1000);  // one writer's version, whole
  EXPECT_EQ(temps_next_to(path), 0);
  fs::remove(path);
}

TEST(Checkpoint, TempsOfDeadWritersAreRemovedAndLiveOnesKept) {
  const std::string path = temp_path("stale");
  xl::save({{"v", xl::ones({4})}}, path);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  write_bytes(path + ".tmp." + std::to_string(dead) + ".0", "partial");
  const std::string ours = path + ".tmp." + std::to_string(::getpid()) + ".999999";
  write_bytes(ours, "a writer of this process");
  EXPECT_EQ(temps_next_to(path), 2);
  EXPECT_EQ(first_value(path), 1.0f);
  EXPECT_EQ(temps_next_to(path), 1);
  EXPECT_TRUE(fs::exists(ours));
  fs::remove(ours);
  fs::remove(path);
}

// kill -9 at random moments of a save: the file always loads, whole, as the old or the new version, and
// the next load removes the dead writer's temp. (tools: a longer run is `xlite_tests
// --gtest_filter=Checkpoint.KilledSaves*` with CHECKPOINT_KILLS and CHECKPOINT_MB set.)
TEST(Checkpoint, KilledSavesLeaveTheOldOrTheNewFileAndNoTemps) {
  const char* kills_env = std::getenv("CHECKPOINT_KILLS");
  const char* mb_env = std::getenv("CHECKPOINT_MB");
  const int kills = kills_env ? std::atoi(kills_env) : 8;
  const int64_t mb = mb_env ? std::atoll(mb_env) : 32;
  const std::string path = temp_path("killed");
  const int64_t n = mb * (1 << 20) / 4;
  std::vector<xl::Tensor> versions;
  for (int v = 0; v < 3; ++v) versions.push_back(xl::full({n}, static_cast<float>(v)));
  xl::sync(versions);
  xl::save({{"v", versions[0]}}, path);
  std::mt19937 rng(1234);
  int old_seen = 0, new_seen = 0;
  float current = 0;
  for (int k = 0; k < kills; ++k) {
    const int next = 1 + k % 2;
    const pid_t child = ::fork();
    if (child == 0) {
      xl::save({{"v", versions[next]}}, path);
      ::_exit(0);
    }
    ASSERT_GT(child, 0);
    // A 32 MB save takes some tens of milliseconds here: kill anywhere in it, or after it.
    ::usleep(std::uniform_int_distribution<int>(0, 40000 * static_cast<int>(std::max<int64_t>(mb / 32, 1)))(rng));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    const std::vector<float> v = xl::load(path).at("v").to_vector<float>();
    ASSERT_EQ(static_cast<int64_t>(v.size()), n);
    ASSERT_TRUE(v[0] == current || v[0] == static_cast<float>(next)) << "kill " << k << ": " << v[0];
    ASSERT_EQ(std::count(v.begin(), v.end(), v[0]), n) << "kill " << k << ": a mixed file";
    (v[0] == current ? old_seen : new_seen)++;
    current = v[0];
    EXPECT_EQ(temps_next_to(path), 0) << "kill " << k;
  }
  std::printf("[checkpoint] %d kills of a %lld MB save: old file %d times, new file %d times\n", kills,
              static_cast<long long>(mb), old_seen, new_seen);
  fs::remove(path);
}
