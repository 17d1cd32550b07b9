// xlite-stablehlo-cases DIR [RANDOM_GRAPHS]: writes StableHLO modules that xlite exported, with the
// arguments they take and the results xlite computed, for tests/python/stablehlo_xla.py to run through XLA
// and compare. For each case NAME: NAME.mlir, and NAME.safetensors holding arg0.. and out0.. . Also
// ops.txt, the name of every IR op, so that the test can check each one was exported at least once.
//
// The cases are small models written with the public API and exported with debug::stablehlo (a training
// step, a convolution net, attention, indexing, reductions and shape ops over every dtype), then random
// well-typed graphs (testing/random_graph.h, without random draws) exported from the IR and run on the CPU
// backend: those use every IR op but the random draws, which a case of their own exports.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/stablehlo.h"
#include "lazy/graph_builder.h"
#include "tensor/tensor_impl.h"
#include "testing/random_graph.h"
#include "xlite/xlite.h"

namespace {

using namespace xlite;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("[stablehlo-cases] cannot write " + path);
}

Tensor wrap(const BufferPtr& buffer, const ir::Instr& instr) {
  return Tensor(std::make_shared<TensorImpl>(buffer, instr.shape, instr.dtype, instr.device));
}

void write_case(const std::string& dir, const std::string& name, const std::string& module,
                std::map<std::string, Tensor> tensors) {
  write_text(dir + "/" + name + ".mlir", module);
  save(tensors, dir + "/" + name + ".safetensors");
}

// A case written with the public API: `build` returns pending tensors; their graph is exported with
// debug::stablehlo, its arguments are the data it reads, and the expected results are the synced values.
void api_case(const std::string& dir, const std::string& name, const std::function<std::vector<Tensor>()>& build) {
  const std::vector<Tensor> roots = build();
  std::vector<ir::NodePtr> nodes;
  for (const Tensor& t : roots) nodes.push_back(t.impl()->node());
  const lazy::BuiltGraph built = lazy::build_graph(nodes);
  const std::string module = debug::stablehlo(roots);
  std::map<std::string, Tensor> tensors;
  for (size_t i = 0; i < built.arguments.size(); ++i) {
    for (const ir::Instr& instr : built.graph.instrs)
      if (instr.op == ir::OpId::parameter && ir::ParameterAttrs::of(instr.attrs).index == static_cast<int64_t>(i))
        tensors["arg" + std::to_string(i)] = wrap(built.arguments[i], instr);
  }
  xlite::sync();
  for (size_t i = 0; i < roots.size(); ++i) tensors["out" + std::to_string(built.root_outputs[i])] = roots[i];
  write_case(dir, name, module, std::move(tensors));
}

Tensor data(const Shape& shape, DType dtype = DType::f32) {
  Tensor t = randn(shape).to(dtype);
  xlite::sync();
  return t;
}

Tensor integers(const Shape& shape, int64_t below, DType dtype = DType::i64) {
  Tensor t = floor(rand(shape) * static_cast<double>(below)).to(dtype);
  xlite::sync();
  return t;
}

void write_api_cases(const std::string& dir) {
  manual_seed(7);
  api_case(dir, "api_training_step", [] {
    Tensor x = data({6, 8}), target = integers({6}, 4);
    Tensor w1 = data({16, 8}).requires_grad_(), b1 = data({16}).requires_grad_();
    Tensor w2 = data({4, 16}).requires_grad_(), b2 = data({4}).requires_grad_();
    Tensor hidden = gelu(linear(x, w1, b1));
    Tensor loss = nn::cross_entropy(linear(hidden, w2, b2), target, -100, 0.1);
    loss.backward();
    return std::vector<Tensor>{loss, w1.grad(), b1.grad(), w2.grad(), b2.grad()};
  });
  api_case(dir, "api_convolutions", [] {
    Tensor x = data({2, 4, 9, 9}), w = data({6, 4, 3, 3}), b = data({6}), grouped = data({6, 3, 2, 2});
    Tensor y = relu(conv2d(x, w, b, {2, 1}, {1, 0}));
    Tensor z = conv2d(y, grouped, std::nullopt, {1, 1}, {1, 1}, {2, 1}, 2);
    return std::vector<Tensor>{y, max_pool2d(z, {2, 2}), avg_pool2d(y, {3, 3}, {2, 2}, {1, 1})};
  });
  api_case(dir, "api_attention", [] {
    Tensor q = data({2, 5, 8}), k = data({2, 5, 8}), v = data({2, 5, 8});
    Tensor scores = matmul(q, transpose(k, 1, 2)) / std::sqrt(8.0);
    Tensor mask = tril(ones({5, 5})) == 0.0;
    Tensor attention = softmax(where(mask, -INFINITY, scores), -1);
    Tensor out = matmul(attention, v);
    Tensor centered = out - mean(out, {-1}, true);
    return std::vector<Tensor>{out, centered * rsqrt(var(out, {-1}, 0, true) + 1e-5), logsumexp(scores, {-1})};
  });
  api_case(dir, "api_indexing", [] {
    Tensor table = data({10, 4}), x = data({3, 6}), tokens = integers({3, 5}, 10), cols = integers({3, 6}, 6);
    Tensor rows = integers({4}, 3, DType::i32);
    return std::vector<Tensor>{embedding(table, tokens), gather(x, 1, cols), scatter_add(x, 1, cols, x),
                               index_select(x, 0, rows), argmax(x, 1),       argmin(x, 0, true),
                               one_hot(tokens, 10)};
  });
  api_case(dir, "api_reductions", [] {
    Tensor x = data({4, 5, 3});
    std::vector<Tensor> out;
    for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      Tensor y = x.to(dtype);
      out.insert(out.end(), {sum(y, {1}), mean(y, {0, 2}, true), amax(y, {2}), amin(y, {0}), prod(y, {1})});
    }
    for (DType dtype : {DType::i32, DType::i64, DType::u8}) {
      Tensor y = floor(abs(x) * 4.0).to(dtype);
      out.insert(out.end(), {sum(y, {1}), max(y, {0, 2}), min(y), argmax(y, 1), argmin(y, 2)});
    }
    Tensor positive = x > 0.0;
    out.insert(out.end(), {amax(positive, {1}), amin(positive, {0}), argmax(positive, 2)});
    return out;
  });
  api_case(dir, "api_shapes", [] {
    Tensor x = data({3, 4, 5}), y = data({3, 2, 5});
    return std::vector<Tensor>{cat({x, y}, 1),
                               stack({x, x}, 2),
                               flip(x, {0, 2}),
                               pad(x, {1, 2, 0, 1}, 0.5),
                               slice(x, 2, 1, 5, 2),
                               permute(x, {2, 0, 1}),
                               expand(reshape(sum(x, {1}), {3, 1, 5}), {3, 4, 5}),
                               triu(reshape(x, {12, 5}), 1)};
  });
  api_case(dir, "api_elementwise", [] {
    Tensor x = data({4, 6}) * 3.0, y = data({4, 6});
    Tensor i = floor(x).to(DType::i32), j = floor(y * 4.0).to(DType::i32) + 7;
    Tensor special = tensor(std::vector<float>{NAN, INFINITY, -INFINITY, 0.0f, -1.5f, 2.5f});
    xlite::sync();
    return std::vector<Tensor>{remainder(x, y),
                               remainder(i, j),
                               remainder(-i, j),
                               pow(abs(x) + 0.5, y),
                               pow(i, 2),
                               clamp(x, -1.0, 2.0),
                               where(x > y, x, y),
                               sign(x) * abs(i),
                               round(x) + floor(y) + ceil(y),
                               (x < y) ^ (i >= 0),
                               logical_or(!(x != y), i == j),
                               x.to(DType::u8),
                               (-abs(x)).to(DType::i32),
                               isnan(special) | isinf(special),
                               maximum(special, 0.0) + minimum(special, 1.0),
                               sigmoid(x) + tanh(x) + silu(y) + erf(y) + expm1(y) + log1p(abs(y)),
                               gelu(x, "tanh") + reciprocal(abs(x) + 1.0) + sin(x) * cos(y) + tan(y * 0.5)};
  });
  // Random draws export to XLA's generator, so only their types are compared (cases named draws_*).
  api_case(dir, "draws_api", [] {
    Tensor x = data({4, 4});
    return std::vector<Tensor>{rand({3, 4}), randn({2, 5}, DType::f64), where(rand({4, 4}) > 0.5, x, 0.0)};
  });
}

void write_random_cases(const std::string& dir, int count) {
  testing::RandomGraphOptions options;
  options.random_ops = false;    // XLA draws other numbers
  options.custom_calls = false;  // XLA does not know xlite's kernels
  int written = 0;
  for (uint64_t seed = 1; written < count; ++seed) {
    const ir::Graph graph = testing::random_graph(seed, options);
    const std::vector<BufferPtr> args = testing::random_arguments(graph, seed);
    const testing::BackendRun run = testing::run_backend(graph, args, "cpu");
    if (run.threw) throw Error("[stablehlo-cases] random graph " + std::to_string(seed) + " threw: " + run.error);
    std::map<std::string, Tensor> tensors;
    for (const ir::Instr& instr : graph.instrs)
      if (instr.op == ir::OpId::parameter) {
        const int64_t index = ir::ParameterAttrs::of(instr.attrs).index;
        tensors["arg" + std::to_string(index)] = wrap(args[index], instr);
      }
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      tensors["out" + std::to_string(i)] = wrap(run.outputs[i], graph.instrs[graph.outputs[i]]);
    write_case(dir, "random_" + std::to_string(seed), ir::to_stablehlo(graph), std::move(tensors));
    ++written;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: xlite-stablehlo-cases DIR [RANDOM_GRAPHS]\n";
    return 2;
  }
  try {
    const std::string dir = argv[1];
    std::string ops;
    for (int i = 0; i < ir::kNumOps; ++i) ops += std::string(ir::op_name(static_cast<ir::OpId>(i))) + "\n";
    write_text(dir + "/ops.txt", ops);
    write_api_cases(dir);
    write_random_cases(dir, argc == 3 ? std::atoi(argv[2]) : 200);
  } catch (const xlite::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
