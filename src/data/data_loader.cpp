// DataLoader: batches in order or shuffled, made on a background thread up to `prefetch` ahead. The thread
// syncs each batch it makes (pending tensors belong to the thread that made them), so what reaches the
// caller is data.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>

#include "xlite/data.h"
#include "xlite/error.h"
#include "xlite/lazy.h"

namespace xlite::data {

struct DataLoader::Epoch {
  std::vector<std::vector<int64_t>> batches;  // indices of each batch
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Example> ready;
  std::exception_ptr failure;
  int64_t made = 0, taken = 0;
  bool stopping = false;
  std::thread worker;
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_) throw Error("[DataLoader] no dataset");
  if (options_.batch_size < 1)
    throw Error("[DataLoader] batch_size must be >= 1, got " + std::to_string(options_.batch_size));
  if (options_.prefetch < 0)
    throw Error("[DataLoader] prefetch must be >= 0, got " + std::to_string(options_.prefetch));
}

DataLoader::~DataLoader() { stop(); }

int64_t DataLoader::size() const {
  const int64_t n = dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

Example DataLoader::make_batch(const std::vector<int64_t>& indices) const {
  Example batch;
  if (options_.collate) {
    std::vector<Example> examples;
    for (int64_t i : indices) examples.push_back(dataset_->get(i));
    batch = options_.collate(examples);
  } else {
    batch = dataset_->get_batch(indices);
  }
  if (options_.device)
    for (Tensor& t : batch) t = t.to(*options_.device);
  sync(batch);
  return batch;
}

void DataLoader::stop() {
  if (!running_) return;
  {
    std::lock_guard lock(running_->mutex);
    running_->stopping = true;
  }
  running_->changed.notify_all();
  if (running_->worker.joinable()) running_->worker.join();
  running_.reset();
}

DataLoader::Iterator DataLoader::begin() {
  stop();
  auto epoch = std::make_unique<Epoch>();
  std::vector<int64_t> order(static_cast<size_t>(dataset_->size()));
  std::iota(order.begin(), order.end(), 0);
  if (options_.shuffle) {
    std::mt19937_64 generator(options_.seed + static_cast<uint64_t>(epoch_));
    std::shuffle(order.begin(), order.end(), generator);
  }
  for (int64_t start = 0; start < static_cast<int64_t>(order.size()); start += options_.batch_size) {
    const int64_t end = std::min<int64_t>(start + options_.batch_size, static_cast<int64_t>(order.size()));
    if (options_.drop_last && end - start < options_.batch_size) break;
    epoch->batches.emplace_back(order.begin() + start, order.begin() + end);
  }
  ++epoch_;
  running_ = std::move(epoch);
  if (options_.prefetch > 0) {
    Epoch* e = running_.get();
    e->worker = std::thread([this, e] {
      for (size_t k = 0; k < e->batches.size(); ++k) {
        {
          std::unique_lock lock(e->mutex);
          e->changed.wait(lock, [&] { return e->stopping || e->made - e->taken < options_.prefetch; });
          if (e->stopping) return;
        }
        Example batch;
        std::exception_ptr failure;
        try {
          batch = make_batch(e->batches[k]);
        } catch (...) {
          failure = std::current_exception();
        }
        {
          std::lock_guard lock(e->mutex);
          if (failure) {
            e->failure = failure;
          } else {
            e->ready.push_back(std::move(batch));
            ++e->made;
          }
        }
        e->changed.notify_all();
        if (failure) return;
      }
    });
  }
  return Iterator(this, 0);
}

Example DataLoader::next() {
  Epoch& e = *running_;
  if (options_.prefetch == 0) return make_batch(e.batches[e.taken++]);
  std::unique_lock lock(e.mutex);
  e.changed.wait(lock, [&] { return !e.ready.empty() || e.failure; });
  if (e.ready.empty()) std::rethrow_exception(e.failure);
  Example batch = std::move(e.ready.front());
  e.ready.pop_front();
  ++e.taken;
  lock.unlock();
  e.changed.notify_all();
  return batch;
}

DataLoader::Iterator::Iterator(DataLoader* loader, int64_t position) : loader_(loader), position_(position) {
  if (position_ < loader_->size()) current_ = loader_->next();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++position_;
  current_ = position_ < loader_->size() ? loader_->next() : Example();
  return *this;
}

}  // namespace xlite::data
