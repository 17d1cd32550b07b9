// An MLP and a small CNN trained on the handwritten digits Debian's python3-sklearn ships
// (scripts/fetch-digits.sh extracts them). Reports test accuracy; fails if the MLP is below 95%.
// Usage: digits [path to digits.csv]
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <xlite/xlite.h>

#include "digits_data.h"

namespace xl = xlite;
namespace nn = xlite::nn;

namespace {
struct Split {
  xl::Tensor x, y;
};

double accuracy(nn::UnaryModule& model, const Split& data) {
  xl::NoGradGuard no_grad;
  model.eval();
  auto predicted = xl::argmax(model(data.x), 1);
  double correct = xl::sum(xl::eq(predicted, data.y).to(xl::DType::f32)).item<float>();
  model.train();
  return correct / static_cast<double>(data.y.numel());
}

double train(const char* name, nn::UnaryModule& model, const Split& train_set, const Split& test_set, int steps,
             double lr) {
  xl::optim::Adam optimizer(model.parameters(), lr);
  auto step = xl::compile([&] {
    optimizer.zero_grad();
    auto loss = nn::cross_entropy(model(train_set.x), train_set.y);
    loss.backward();
    optimizer.step();
    return loss;
  });
  for (int i = 0; i < steps; ++i) {
    float loss = step().item<float>();
    if (i % 50 == 0 || i == steps - 1) std::printf("%s step %3d  loss %.4f\n", name, i, loss);
  }
  double acc = accuracy(model, test_set);
  std::printf("%s test accuracy: %.2f%% (%lld images)\n", name, 100 * acc, static_cast<long long>(test_set.y.numel()));
  return acc;
}
}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "data/digits.csv";
  std::optional<Digits> digits = load_digits(path);
  if (!digits) return 1;
  std::vector<float> all_pixels = digits->images.to_vector<float>();
  std::vector<int64_t> labels = digits->labels.to_vector<int64_t>();
  std::vector<std::vector<float>> images;
  for (size_t i = 0; i < labels.size(); ++i)
    images.emplace_back(all_pixels.begin() + i * 64, all_pixels.begin() + (i + 1) * 64);
  std::vector<size_t> order(images.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(42));
  const size_t train_count = order.size() * 4 / 5;
  auto make = [&](size_t from, size_t to) {
    std::vector<float> x;
    std::vector<int64_t> y;
    for (size_t k = from; k < to; ++k) {
      for (float v : images[order[k]]) x.push_back(v);
      y.push_back(labels[order[k]]);
    }
    int64_t n = static_cast<int64_t>(to - from);
    return Split{xl::tensor(x, {n, 64}), xl::tensor(y, {n})};
  };
  Split train_set = make(0, train_count), test_set = make(train_count, order.size());
  std::printf("digits: %zu images, %zu for training, %zu for testing\n", images.size(), train_count,
              order.size() - train_count);

  xl::manual_seed(0);
  nn::Sequential mlp(
      {std::make_shared<nn::Linear>(64, 128), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(128, 10)});
  double mlp_accuracy = train("mlp", mlp, train_set, test_set, 200, 1e-2);

  auto as_images = [](const Split& s) { return Split{xl::reshape(s.x, {-1, 1, 8, 8}), s.y}; };
  nn::Sequential cnn({std::make_shared<nn::Conv2d>(1, 16, 3, 1, 1), std::make_shared<nn::ReLU>(),
                      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(16, 32, 3, 1, 1),
                      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
                      std::make_shared<nn::Linear>(32 * 2 * 2, 10)});
  train("cnn", cnn, as_images(train_set), as_images(test_set), 150, 1e-2);

  std::printf("compiles: %lld new, %lld cached\n",
              static_cast<long long>(xl::metrics::counter_value("UncachedCompile")),
              static_cast<long long>(xl::metrics::counter_value("CachedCompile")));
  if (mlp_accuracy < 0.95) {
    std::fprintf(stderr, "digits: the MLP reached %.2f%%, below the 95%% goal\n", 100 * mlp_accuracy);
    return 1;
  }
  return 0;
}
