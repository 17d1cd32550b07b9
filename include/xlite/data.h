#pragma once
// Data loading, as torch.utils.data: a Dataset of examples (each a list of tensors: input, target, ...),
// TensorDataset over tensors that share dim 0, random_split, and a DataLoader that batches, shuffles with its
// own seeded generator, and prepares the next batches on a background thread while the caller trains.
//
//   auto train = std::make_shared<data::TensorDataset>(std::vector<Tensor>{images, labels});
//   data::DataLoader loader(train, {.batch_size = 64, .shuffle = true, .seed = 1});
//   for (int epoch = 0; epoch < 3; ++epoch)
//     for (const data::Example& batch : loader) step(batch[0], batch[1]);
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "xlite/tensor.h"

namespace xlite::data {

using Example = std::vector<Tensor>;

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;
  // The examples at indices, batched: by default each example through get(), stacked by stack_examples.
  virtual Example get_batch(const std::vector<int64_t>& indices) const;
};

// Stacks the i-th tensor of every example along a new dim 0 (PyTorch's default collate).
Example stack_examples(const std::vector<Example>& examples);

// Example i is row i of every tensor. A batch is one index_select per tensor.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const override { return size_; }
  Example get(int64_t index) const override;
  Example get_batch(const std::vector<int64_t>& indices) const override;
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  int64_t size_;
};

// The examples of another dataset at the given indices.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Example get(int64_t index) const override;
  Example get_batch(const std::vector<int64_t>& indices) const override;

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<int64_t> indices_;
};

// Disjoint subsets of the given sizes (summing to the dataset's size) over a permutation from the seed.
std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> dataset,
                                                  const std::vector<int64_t>& sizes, uint64_t seed);

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;  // a new order each epoch, from seed and the epoch number
  uint64_t seed = 0;
  bool drop_last = false;  // drop a last batch smaller than batch_size
  // Turns the examples of a batch into the batch; empty: the dataset's get_batch (stacking by default).
  std::function<Example(const std::vector<Example>&)> collate = {};
  int64_t prefetch = 2;  // batches prepared ahead on the background thread; 0 prepares each when asked
  // Where the batches go (copied there on the background thread, with the rest of the batch's work); empty:
  // where the dataset's tensors are.
  std::optional<Device> device = std::nullopt;
};

// Iterating starts an epoch; its batches are computed (synced, so they hold data, not pending graphs) on a
// background thread up to `prefetch` ahead. An error there is raised by the iteration that reaches it.
// One epoch at a time per loader: starting another ends the one before.
class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  int64_t size() const;  // batches per epoch
  int64_t epoch() const { return epoch_; }

  class Iterator {
   public:
    const Example& operator*() const { return current_; }
    const Example* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return position_ == other.position_; }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, int64_t position);
    DataLoader* loader_;
    int64_t position_;
    Example current_;
  };
  Iterator begin();
  Iterator end() { return Iterator(this, size()); }

 private:
  struct Epoch;
  Example next();  // the next batch of the running epoch
  void stop();
  Example make_batch(const std::vector<int64_t>& indices) const;

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  int64_t epoch_ = 0;
  std::unique_ptr<Epoch> running_;
};

}  // namespace xlite::data
