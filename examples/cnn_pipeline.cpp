// A CNN with the pieces of a real training script: a shuffled DataLoader, a train/validation split,
// BatchNorm (running statistics, train and eval modes), dropout, AdamW with a OneCycle schedule,
// validation after each epoch, and a checkpoint written, read back into a new model and checked to give
// the same validation result. Fails unless validation accuracy reaches 95% and the checkpoint round trip is
// exact. Usage: cnn_pipeline [path to digits.csv]
#include <cstdio>
#include <filesystem>
#include <xlite/xlite.h>

#include "digits_data.h"

namespace xl = xlite;
namespace nn = xlite::nn;
namespace data = xlite::data;

namespace {
std::shared_ptr<nn::Sequential> make_model() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::UnaryModule>>{
      std::make_shared<nn::Conv2d>(1, 16, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(16), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(16, 32, 3, 1, 1),
      std::make_shared<nn::BatchNorm2d>(32), std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Dropout>(0.2),
      std::make_shared<nn::Linear>(32 * 2 * 2, 10)});
}

// Accuracy and mean loss over the loader, in eval mode.
std::pair<double, double> evaluate(nn::Sequential& model, data::DataLoader& loader) {
  xl::NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0, count = 0;
  double loss = 0;
  for (const data::Example& batch : loader) {
    xl::Tensor logits = model(xl::reshape(batch[0], {-1, 1, 8, 8}));
    loss += nn::cross_entropy(logits, batch[1], -100, 0.0, std::nullopt, "sum").item<double>();
    correct += xl::count_nonzero(xl::eq(xl::argmax(logits, 1), batch[1])).item<int64_t>();
    count += batch[1].numel();
  }
  model.train();
  return {static_cast<double>(correct) / static_cast<double>(count), loss / static_cast<double>(count)};
}
}  // namespace

int main(int argc, char** argv) {
  std::optional<Digits> digits = load_digits(argc > 1 ? argv[1] : "data/digits.csv");
  if (!digits) return 1;
  auto dataset = std::make_shared<data::TensorDataset>(std::vector<xl::Tensor>{digits->images, digits->labels});
  const int64_t validation = dataset->size() / 5;
  auto parts = data::random_split(dataset, {dataset->size() - validation, validation}, 3);
  data::DataLoader train(parts[0], {.batch_size = 32, .shuffle = true, .seed = 2, .drop_last = true});
  data::DataLoader check(parts[1], {.batch_size = 256});

  xl::manual_seed(0);
  auto model = make_model();
  const int epochs = 6;
  xl::optim::AdamW optimizer(model->parameters(), 1e-3);
  xl::optim::OneCycleLR schedule(optimizer, 1e-2, epochs * train.size());
  auto step = xl::compile([&](const xl::Tensor& x, const xl::Tensor& y) {
    optimizer.zero_grad();
    xl::Tensor loss = nn::cross_entropy((*model)(xl::reshape(x, {-1, 1, 8, 8})), y, -100, 0.05);
    loss.backward();
    optimizer.step();
    return loss;
  });

  double accuracy = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (const data::Example& batch : train) {
      step(batch[0], batch[1]);
      schedule.step();
    }
    auto [acc, loss] = evaluate(*model, check);
    accuracy = acc;
    std::printf("epoch %d  validation accuracy %.2f%%  loss %.4f\n", epoch + 1, 100 * acc, loss);
  }

  // The checkpoint: parameters and BatchNorm's running statistics, into a model built afresh.
  const std::string path = (std::filesystem::temp_directory_path() / "xlite_cnn_pipeline.safetensors").string();
  xl::save(model->state_dict(), path);
  auto restored = make_model();
  restored->load_state_dict(xl::load(path));
  std::filesystem::remove(path);
  auto [restored_accuracy, restored_loss] = evaluate(*restored, check);
  auto [original_accuracy, original_loss] = evaluate(*model, check);
  std::printf("checkpoint: %zu tensors; restored model %.2f%% (loss %.6f), original %.2f%% (loss %.6f)\n",
              model->state_dict().size(), 100 * restored_accuracy, restored_loss, 100 * original_accuracy,
              original_loss);
  if (restored_loss != original_loss || restored_accuracy != original_accuracy) {
    std::fprintf(stderr, "cnn_pipeline: the restored model differs from the original\n");
    return 1;
  }
  if (accuracy < 0.95) {
    std::fprintf(stderr, "cnn_pipeline: validation accuracy %.2f%% is below the 95%% goal\n", 100 * accuracy);
    return 1;
  }
  std::printf("cnn_pipeline: passed\n");
  return 0;
}
