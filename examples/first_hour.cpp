// What a PyTorch user types in their first hour, in xlite's C++ API: tensors and dtypes, broadcasting,
// slicing, reductions along dims, sorting and scans, autograd, a hand-written gradient-descent loop, an
// nn model with a loss and an optimizer, and saving tensors. Each step checks its result and the program
// fails at the first one that differs from what PyTorch gives.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>
#include <xlite/xlite.h>

namespace xl = xlite;
namespace nn = xlite::nn;

namespace {
int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

bool same(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-5f) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > tolerance * (1 + std::fabs(want[i]))) return false;
  return true;
}
}  // namespace

int main() {
  // Tensors, dtypes, shapes.
  xl::Tensor a = xl::arange(0, 6, 1).reshape({2, 3});
  check(a.dtype() == xl::DType::i64 && a.shape() == xl::Shape{2, 3}, "arange of integers is int64, reshaped to [2, 3]");
  xl::Tensor f = a.to(xl::DType::f32) / 2.0;
  check(same(f.to_vector<float>(), {0, 0.5, 1, 1.5, 2, 2.5}), "integer to float and true division");
  check(xl::linspace(0, 1, 5).to_vector<float>() == std::vector<float>{0, 0.25, 0.5, 0.75, 1}, "linspace");

  // Broadcasting and reductions along dims.
  xl::Tensor row = xl::tensor(std::vector<float>{10, 20, 30});
  check(same((f + row).sum({1}).to_vector<float>(), {61.5, 66}), "a row broadcast over a matrix, summed per row");
  check(same(f.mean({0}, true).to_vector<float>(), {0.75, 1.25, 1.75}) && f.mean({0}, true).shape() == xl::Shape{1, 3},
        "mean over dim 0 with keepdim");
  xl::ValuesIndices best = xl::max(f, 1);
  check(best.indices.to_vector<int64_t>() == std::vector<int64_t>{2, 2}, "max along a dim gives values and indices");

  // Slicing and selection.
  check(same(xl::slice(f, 1, 1).to_vector<float>(), {0.5, 1, 2, 2.5}), "x[:, 1:]");
  check(same(xl::masked_select(f, f > 1.0).to_vector<float>(), {1.5, 2, 2.5}), "x[x > 1]");
  check(xl::nonzero(a == 4).to_vector<int64_t>() == std::vector<int64_t>{1, 1}, "nonzero");

  // Sorting, scans, top-k.
  xl::Tensor v = xl::tensor(std::vector<float>{3, 1, 4, 1, 5, 9, 2, 6});
  check(same(xl::cumsum(v, 0).to_vector<float>(), {3, 4, 8, 9, 14, 23, 25, 31}), "cumsum");
  check(xl::sort(v).indices.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 6, 0, 2, 4, 7, 5}, "stable sort");
  check(same(xl::topk(v, 3).values.to_vector<float>(), {9, 6, 5}), "topk");
  check(same(xl::einsum("ij,j->i", {f, row}).to_vector<float>(), {40, 130}), "einsum matrix-vector");

  // Autograd: d/dx sum(x^3) = 3 x^2.
  xl::Tensor x = xl::tensor(std::vector<float>{1, 2, 3}).requires_grad_();
  xl::sum(x * x * x).backward();
  check(same(x.grad().to_vector<float>(), {3, 12, 27}), "backward of sum(x^3)");
  {
    xl::NoGradGuard no_grad;
    check(!(x * 2.0).requires_grad(), "no_grad records nothing");
  }

  // Gradient descent by hand: fit y = 2x + 1.
  xl::manual_seed(0);
  xl::Tensor inputs = xl::rand({64, 1}), targets = inputs * 2.0 + 1.0;
  xl::Tensor w = xl::zeros({1, 1}).requires_grad_(), b = xl::zeros({1}).requires_grad_();
  for (int i = 0; i < 500; ++i) {
    xl::Tensor loss = nn::mse_loss(xl::matmul(inputs, w) + b, targets);
    loss.backward();
    xl::NoGradGuard no_grad;
    w.sub_(w.grad() * 0.5);
    b.sub_(b.grad() * 0.5);
    w.grad().zero_();
    b.grad().zero_();
    xl::sync();  // one step, one graph: without it the 500 steps would trace into one (xm.mark_step())
  }
  check(same({w.item<float>(), b.item<float>()}, {2, 1}, 2e-2f), "hand-written gradient descent finds w = 2, b = 1");

  // An nn model, a loss and an optimizer.
  nn::Sequential model(
      {std::make_shared<nn::Linear>(2, 16), std::make_shared<nn::Tanh>(), std::make_shared<nn::Linear>(16, 2)});
  xl::optim::Adam optimizer(model.parameters(), 0.05);
  xl::Tensor points = xl::randn({128, 2});
  xl::Tensor labels = (xl::sum(points * points, {1}) > 1.0).to(xl::DType::i64);  // inside or outside the circle
  double first = 0, last = 0;
  for (int i = 0; i < 150; ++i) {
    optimizer.zero_grad();
    xl::Tensor loss = nn::cross_entropy(model(points), labels);
    loss.backward();
    optimizer.step();
    xl::sync();  // the step's updates run now, not as part of the next step's graph
    (i == 0 ? first : last) = loss.item<double>();
  }
  check(last < first / 3,
        "a small classifier learns the circle (loss " + std::to_string(first) + " -> " + std::to_string(last) + ")");
  std::printf("parameters: %lld\n", static_cast<long long>(model.num_parameters()));

  // Saving and loading.
  const std::string path = (std::filesystem::temp_directory_path() / "xlite_first_hour.safetensors").string();
  xl::save(model.state_dict(), path);
  std::map<std::string, xl::Tensor> loaded = xl::load(path);
  std::filesystem::remove(path);
  check(loaded.size() == 4 && xl::equal(loaded.at("0.weight"), model.state_dict().at("0.weight")),
        "state_dict saved and loaded");

  if (failures > 0) {
    std::fprintf(stderr, "first hour: %d checks failed\n", failures);
    return 1;
  }
  std::printf("first hour: all checks passed\n");
  return 0;
}
