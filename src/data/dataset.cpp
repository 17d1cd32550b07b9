// Datasets: the default batching, TensorDataset, Subset and random_split.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "xlite/data.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/ops.h"

namespace xlite::data {
namespace {
void check_index(const char* op, int64_t index, int64_t size) {
  if (index < 0 || index >= size)
    throw Error("[" + std::string(op) + "] index " + std::to_string(index) + " is out of range for " +
                std::to_string(size) + " examples");
}
}  // namespace

Example Dataset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<Example> examples;
  for (int64_t i : indices) examples.push_back(get(i));
  return stack_examples(examples);
}

Example stack_examples(const std::vector<Example>& examples) {
  if (examples.empty()) throw Error("[stack_examples] no examples to batch");
  Example batch;
  for (size_t k = 0; k < examples[0].size(); ++k) {
    std::vector<Tensor> column;
    for (const Example& e : examples) {
      if (e.size() != examples[0].size())
        throw Error("[stack_examples] examples hold " + std::to_string(examples[0].size()) + " and " +
                    std::to_string(e.size()) + " tensors");
      column.push_back(e[k]);
    }
    batch.push_back(stack(column, 0));
  }
  return batch;
}

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  if (tensors_.empty()) throw Error("[TensorDataset] needs at least one tensor");
  for (const Tensor& t : tensors_) {
    if (t.dim() == 0) throw Error("[TensorDataset] tensors need a dim 0 of examples, got a 0-dim tensor");
    if (t.shape()[0] != tensors_[0].shape()[0])
      throw Error("[TensorDataset] tensors have " + std::to_string(tensors_[0].shape()[0]) + " and " +
                  std::to_string(t.shape()[0]) + " examples");
  }
  size_ = tensors_[0].shape()[0];
}

Example TensorDataset::get(int64_t index) const {
  check_index("TensorDataset", index, size_);
  Example e;
  for (const Tensor& t : tensors_) e.push_back(squeeze(slice(t, 0, index, index + 1), 0));
  return e;
}

Example TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index("TensorDataset", i, size_);
  Tensor index = tensor(indices, tensors_[0].device());
  Example batch;
  for (const Tensor& t : tensors_) batch.push_back(index_select(t, 0, index));
  return batch;
}

Subset::Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  for (int64_t i : indices_) check_index("Subset", i, dataset_->size());
}

Example Subset::get(int64_t index) const {
  check_index("Subset", index, size());
  return dataset_->get(indices_[index]);
}

Example Subset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> inner;
  for (int64_t i : indices) {
    check_index("Subset", i, size());
    inner.push_back(indices_[i]);
  }
  return dataset_->get_batch(inner);
}

std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset,
                                                  const std::vector<int64_t>& sizes, uint64_t seed) {
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw Error("[random_split] sizes must be >= 0");
    total += s;
  }
  if (total != dataset->size())
    throw Error("[random_split] sizes sum to " + std::to_string(total) + ", but the dataset has " +
                std::to_string(dataset->size()) + " examples");
  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 generator(seed);
  std::shuffle(order.begin(), order.end(), generator);
  std::vector<std::shared_ptr<Subset>> parts;
  auto at = order.begin();
  for (int64_t s : sizes) {
    parts.push_back(std::make_shared<Subset>(dataset, std::vector<int64_t>(at, at + s)));
    at += s;
  }
  return parts;
}

}  // namespace xlite::data
