// Property: a compiled step returns exactly what the uncompiled step returns. Random step functions (random
// ops, host reads, module modes, host flags, in-place updates of captured tensors) run over several calls
// with changing inputs, with the captured tensors updated, rebound and their flags switched between calls,
// once with compile(fn) and once without; every result and every captured tensor must match bit for bit.
//
// PROPERTY_TEST_CASES sets the number of cases (default 300); ctest also runs 3000 on the reference
// backend (compile_property_reference), where compiling is cheap.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <xlite/xlite.h>

namespace xl = xlite;

namespace {

enum class Kind { captured, unary, binary, row_sum, scalar, host_branch, dropout, flag_branch, update, shape };

struct Instr {
  Kind kind;
  int a = 0, b = 0, op = 0;
  float value = 0;
};

// What fn reaches by itself: captured tensors, a module, a host flag.
struct World {
  std::vector<xl::Tensor> captured;
  std::shared_ptr<xl::nn::Dropout> dropout = std::make_shared<xl::nn::Dropout>(0.25);
  xl::TracedFlag flag{true, "the test's flag"};
};

std::vector<float> host_values(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

// The step: registers start with the argument; each instruction adds one; the last two are returned.
std::vector<xl::Tensor> run_step(const std::vector<Instr>& program, World& w, const xl::Tensor& x) {
  std::vector<xl::Tensor> r = {x};
  auto at = [&](int i) { return r[static_cast<size_t>(i) % r.size()]; };
  for (const Instr& in : program) {
    switch (in.kind) {
      case Kind::captured: r.push_back(w.captured[in.a % w.captured.size()]); break;
      case Kind::unary: {
        xl::Tensor v = at(in.a);
        r.push_back(in.op == 0 ? xl::tanh(v) : in.op == 1 ? xl::relu(v) : in.op == 2 ? -v : xl::sigmoid(v));
        break;
      }
      case Kind::binary: {
        xl::Tensor u = at(in.a), v = at(in.b);
        r.push_back(in.op == 0 ? u + v : in.op == 1 ? u - v : in.op == 2 ? u * v : xl::maximum(u, v));
        break;
      }
      case Kind::row_sum: r.push_back(xl::sum(at(in.a), {-1}, true) * 0.25f + at(in.b)); break;
      case Kind::scalar: r.push_back(at(in.a) * in.value); break;
      case Kind::host_branch:  // reads data that may already be there (an argument, a captured tensor)
        r.push_back(at(in.a).to_vector<float>()[0] > 0 ? at(in.b) * 2.0f : at(in.b) + 1.0f);
        break;
      case Kind::dropout: r.push_back((*w.dropout)(at(in.a))); break;
      case Kind::flag_branch: r.push_back(w.flag.get() ? at(in.a) * 3.0f : at(in.a) - 1.0f); break;
      case Kind::update: {
        xl::Tensor& target = w.captured[in.a % w.captured.size()];
        xl::Tensor v = at(in.b);
        // An update keeps the target's shape: rows of a matrix value are averaged into it.
        if (v.dim() == 2) v = xl::mean(v, {0});
        target.add_(v * 0.125f);
        break;
      }
      case Kind::shape: r.push_back(xl::reshape(at(in.a), {-1}).slice(0, 0, 4).reshape({4})); break;
    }
  }
  return {r[r.size() - 1], r[r.size() / 2]};
}

std::vector<Instr> random_program(std::mt19937& rng) {
  std::uniform_int_distribution<int> kinds(0, 9), small(0, 7), ops(0, 3), length(2, 9);
  std::uniform_real_distribution<float> values(-1.5f, 1.5f);
  std::vector<Instr> program;
  const int n = length(rng);
  for (int i = 0; i < n; ++i) {
    Instr in{static_cast<Kind>(kinds(rng)), small(rng), small(rng), ops(rng), values(rng)};
    // Host reads would make most steps untraceable; keep them a minority so replays are exercised.
    if (in.kind == Kind::host_branch && small(rng) > 1) in.kind = Kind::binary;
    program.push_back(in);
  }
  return program;
}

// What the driver does to the world between calls, decided before either run so both see the same.
struct Between {
  bool new_shape = false;
  bool toggle_mode = false;
  bool toggle_flag = false;
  int rebind = -1;          // a captured tensor replaced by a new one (the old one dies)
  int outside_update = -1;  // a captured tensor updated in place outside fn
  std::vector<float> x, fresh;
};

struct Outcome {
  std::vector<std::vector<float>> values;  // per call: results then captured tensors
  std::vector<std::string> errors;
};

template <class Step>
Outcome drive(Step&& step, World& w, const std::vector<Between>& calls) {
  Outcome out;
  bool wide = false;
  for (const Between& between : calls) {
    if (between.new_shape) wide = !wide;
    if (between.toggle_mode) w.dropout->train(!w.dropout->is_training());
    if (between.toggle_flag) w.flag.set(!w.flag.get());
    if (between.rebind >= 0) w.captured[between.rebind] = xl::tensor(between.fresh, {4});
    if (between.outside_update >= 0) w.captured[between.outside_update].mul_(0.5f);
    xl::Tensor x = wide ? xl::tensor(std::vector<float>(between.x.begin(), between.x.begin() + 12), {3, 4})
                        : xl::tensor(std::vector<float>(between.x.begin(), between.x.begin() + 4), {4});
    std::vector<float> row;
    try {
      for (const xl::Tensor& t : step(x))
        for (float v : t.to_vector<float>()) row.push_back(v);
      out.errors.emplace_back();
    } catch (const xl::Error& e) {
      out.errors.emplace_back(e.what());
    }
    for (const xl::Tensor& t : w.captured)
      for (float v : t.to_vector<float>()) row.push_back(v);
    out.values.push_back(std::move(row));
  }
  return out;
}

std::string describe(const std::vector<Instr>& program) {
  static const char* names[] = {"captured",    "unary",   "binary",      "row_sum", "scalar",
                                "host_branch", "dropout", "flag_branch", "update",  "shape"};
  std::ostringstream os;
  for (const Instr& in : program)
    os << names[static_cast<int>(in.kind)] << "(a=" << in.a << ", b=" << in.b << ", op=" << in.op << ", v=" << in.value
       << ") ";
  return os.str();
}

bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  return true;
}

TEST(CompileProperty, ACompiledStepReturnsWhatTheUncompiledStepReturns) {
  const char* env = std::getenv("PROPERTY_TEST_CASES");
  const int cases = env ? std::atoi(env) : 300;
  int replays = 0, traces = 0;
  for (int c = 0; c < cases; ++c) {
    std::mt19937 rng(20261204u + static_cast<unsigned>(c));
    const std::vector<Instr> program = random_program(rng);
    std::vector<Between> calls(6);
    std::bernoulli_distribution rarely(0.15);
    for (Between& b : calls) {
      b.new_shape = rarely(rng);
      b.toggle_mode = rarely(rng);
      b.toggle_flag = rarely(rng);
      b.rebind = rarely(rng) ? static_cast<int>(rng() % 3) : -1;
      b.outside_update = rarely(rng) ? static_cast<int>(rng() % 3) : -1;
      b.x = host_values(rng, 12);
      b.fresh = host_values(rng, 4);
    }
    const std::vector<float> initial = host_values(rng, 12);
    auto make_world = [&] {
      World w;
      for (int i = 0; i < 3; ++i)
        w.captured.push_back(xl::tensor(std::vector<float>(initial.begin() + 4 * i, initial.begin() + 4 * i + 4), {4}));
      xl::sync();
      return w;
    };

    xl::manual_seed(static_cast<uint64_t>(c));
    World plain_world = make_world();
    Outcome plain = drive(
        [&](const xl::Tensor& x) {
          std::vector<xl::Tensor> out = run_step(program, plain_world, x);
          xl::sync();
          return out;
        },
        plain_world, calls);

    xl::manual_seed(static_cast<uint64_t>(c));
    World compiled_world = make_world();
    auto step = xl::compile([&](const xl::Tensor& x) { return run_step(program, compiled_world, x); });
    Outcome compiled = drive(
        [&](const xl::Tensor& x) {
          std::vector<xl::Tensor> out = step(x);
          (step.last_call().replayed ? replays : traces) += 1;
          return out;
        },
        compiled_world, calls);

    for (size_t k = 0; k < calls.size(); ++k) {
      ASSERT_EQ(compiled.errors[k], plain.errors[k]) << "case " << c << " call " << k << ": " << describe(program);
      ASSERT_TRUE(bits_equal(compiled.values[k], plain.values[k]))
          << "case " << c << " call " << k << " (" << (k ? "after" : "first") << " call; last trace reason: '"
          << step.last_call().trace_reason << "'): " << describe(program);
    }
  }
  // The property means little if nothing replayed.
  EXPECT_GT(replays, cases);
  std::printf("[   INFO   ] %d cases: %d calls replayed, %d traced\n", cases, replays, traces);
}

}  // namespace
