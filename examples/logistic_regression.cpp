// A user's first model: logistic regression telling the digit 3 from every other digit, written as a
// PyTorch user writes it (a Linear layer, BCEWithLogits with pos_weight for the rare class, SGD with
// momentum and a StepLR schedule, a shuffled DataLoader over a TensorDataset, a held-out split).
// Fails unless the held-out accuracy is at least 97%. Usage: logistic_regression [path to digits.csv]
#include <cstdio>
#include <xlite/xlite.h>

#include "digits_data.h"

namespace xl = xlite;
namespace nn = xlite::nn;
namespace data = xlite::data;

int main(int argc, char** argv) {
  std::optional<Digits> digits = load_digits(argc > 1 ? argv[1] : "data/digits.csv");
  if (!digits) return 1;
  xl::Tensor is_three = xl::eq(digits->labels, 3).to(xl::DType::f32);
  auto dataset = std::make_shared<data::TensorDataset>(std::vector<xl::Tensor>{digits->images, is_three});
  const int64_t held_out = dataset->size() / 5;
  auto parts = data::random_split(dataset, {dataset->size() - held_out, held_out}, 7);
  data::DataLoader train(parts[0], {.batch_size = 64, .shuffle = true, .seed = 1});
  data::DataLoader test(parts[1], {.batch_size = 512});

  xl::manual_seed(0);
  nn::Linear model(64, 1);
  xl::optim::SGD optimizer(model.parameters(), 0.5, {.momentum = 0.9});
  xl::optim::StepLR schedule(optimizer, 10, 0.5);
  // Threes are a tenth of the data: weigh their errors as much as the others'.
  const xl::Tensor pos_weight = xl::full({1}, 9.0);
  auto step = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) {
    optimizer.zero_grad();
    xl::Tensor loss = nn::binary_cross_entropy_with_logits(xl::squeeze(model(x), 1), y, std::nullopt, pos_weight);
    loss.backward();
    optimizer.step();
    return loss;
  });

  for (int epoch = 0; epoch < 30; ++epoch) {
    xl::Tensor total = xl::zeros({});
    for (const data::Example& batch : train) total = total + step(batch[0], batch[1]);
    schedule.step();
    if (epoch % 10 == 9)
      std::printf("epoch %2d  mean loss %.4f  lr %.4f\n", epoch + 1,
                  total.item<float>() / static_cast<float>(train.size()), schedule.get_last_lr());
  }

  xl::NoGradGuard no_grad;
  int64_t correct = 0, count = 0;
  for (const data::Example& batch : test) {
    xl::Tensor predicted = xl::squeeze(model(batch[0]), 1) > 0;
    correct += xl::count_nonzero(xl::eq(predicted, batch[1] > 0.5)).item<int64_t>();
    count += batch[1].numel();
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(count);
  std::printf("logistic regression: held-out accuracy %.2f%% on %lld images\n", 100 * accuracy,
              static_cast<long long>(count));
  if (accuracy < 0.97) {
    std::fprintf(stderr, "logistic regression: below the 97%% goal\n");
    return 1;
  }
  std::printf("logistic regression: passed\n");
  return 0;
}
