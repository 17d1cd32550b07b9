// Datasets and the DataLoader: batches, seeded shuffling, drop_last, custom collation, random_split,
// prefetching on a background thread (batches arrive as data), and errors raised where they are reached.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "test_support.h"

namespace xl = xlite;
namespace data = xlite::data;
using xlite_test::ErrorMessage;

namespace {
// Ten examples: x_i = [i, 10 i], y_i = i.
std::shared_ptr<data::TensorDataset> numbers() {
  xl::Tensor i = xl::arange(0, 10, 1);
  return std::make_shared<data::TensorDataset>(
      std::vector<xl::Tensor>{xl::stack({i, i * 10}, 1).to(xl::DType::f32), i});
}

std::vector<int64_t> labels_of(data::DataLoader& loader) {
  std::vector<int64_t> seen;
  for (const data::Example& batch : loader)
    for (int64_t v : batch[1].to_vector<int64_t>()) seen.push_back(v);
  return seen;
}
}  // namespace

TEST(DataLoader, BatchesInOrderWithASmallerLastBatch) {
  data::DataLoader loader(numbers(), {.batch_size = 4});
  EXPECT_EQ(loader.size(), 3);
  std::vector<xl::Shape> shapes;
  for (const data::Example& batch : loader) {
    shapes.push_back(batch[0].shape());
    EXPECT_FALSE(batch[0].is_pending()) << "prefetched batches are data";
  }
  EXPECT_EQ(shapes, (std::vector<xl::Shape>{{4, 2}, {4, 2}, {2, 2}}));
  EXPECT_EQ(labels_of(loader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoader, BatchesArriveOnTheDeviceAsked) {
  const xl::Device target = xl::device(1);
  data::DataLoader loader(numbers(), {.batch_size = 4, .device = target});
  std::vector<int64_t> seen;
  for (const data::Example& batch : loader) {
    EXPECT_EQ(batch[0].device(), target);
    EXPECT_EQ(batch[1].device(), target);
    EXPECT_FALSE(batch[0].is_pending()) << "the copy ran on the background thread";
    for (int64_t v : batch[1].to_vector<int64_t>()) seen.push_back(v);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoader, DropLastDropsTheShortBatch) {
  data::DataLoader loader(numbers(), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(loader.size(), 2);
  EXPECT_EQ(labels_of(loader).size(), 8u);
}

TEST(DataLoader, ShufflingIsSeededAndDiffersByEpoch) {
  data::DataLoader a(numbers(), {.batch_size = 3, .shuffle = true, .seed = 5});
  data::DataLoader b(numbers(), {.batch_size = 3, .shuffle = true, .seed = 5});
  std::vector<int64_t> first = labels_of(a), second = labels_of(a);
  EXPECT_EQ(first, labels_of(b)) << "the same seed gives the same order";
  EXPECT_NE(first, second) << "each epoch has its own order";
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << "a permutation";
  EXPECT_EQ(a.epoch(), 2);
}

TEST(DataLoader, ACustomCollateAndNoPrefetchSeeEveryExample) {
  int64_t calls = 0;
  data::DataLoader loader(numbers(), {.batch_size = 5,
                                      .collate =
                                          [&](const std::vector<data::Example>& examples) {
                                            ++calls;
                                            data::Example batch = data::stack_examples(examples);
                                            return data::Example{xl::sum(batch[0], {1})};
                                          },
                                      .prefetch = 0});
  std::vector<float> sums;
  for (const data::Example& batch : loader)
    for (float v : batch[0].to_vector<float>()) sums.push_back(v);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(sums, (std::vector<float>{0, 11, 22, 33, 44, 55, 66, 77, 88, 99}));
}

TEST(DataLoader, RandomSplitGivesDisjointSubsets) {
  auto parts = data::random_split(numbers(), {7, 3}, 42);
  std::set<int64_t> seen;
  for (const auto& part : parts) {
    data::DataLoader loader(part, {.batch_size = 2});
    for (int64_t v : labels_of(loader)) EXPECT_TRUE(seen.insert(v).second) << v << " twice";
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(parts[0]->size(), 7);
  EXPECT_NE(ErrorMessage([] { data::random_split(numbers(), {7, 2}, 1); }).find("[random_split] sizes sum to 9"),
            std::string::npos);
}

TEST(DataLoader, AnErrorOnTheBackgroundThreadIsRaisedWhereItsBatchIsReached) {
  struct Failing : data::Dataset {
    int64_t size() const override { return 6; }
    data::Example get(int64_t index) const override {
      if (index == 4) throw xl::Error("[Failing] example 4 is corrupt");
      return {xl::full({2}, static_cast<double>(index))};
    }
  };
  data::DataLoader loader(std::make_shared<Failing>(), {.batch_size = 2});
  int batches = 0;
  std::string message = ErrorMessage([&] {
    for (const data::Example& batch : loader) {
      EXPECT_EQ(batch[0].shape(), (xl::Shape{2, 2}));
      ++batches;
    }
  });
  EXPECT_EQ(batches, 2);
  EXPECT_EQ(message, "[Failing] example 4 is corrupt");
}

TEST(DataLoader, BadArgumentsNameTheClass) {
  EXPECT_NE(ErrorMessage([] { data::DataLoader(numbers(), {.batch_size = 0}); }).find("[DataLoader] batch_size"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([] { data::TensorDataset({xl::ones({3}), xl::ones({4})}); }).find("[TensorDataset]"),
            std::string::npos);
  EXPECT_NE(ErrorMessage([] { numbers()->get(10); }).find("[TensorDataset] index 10 is out of range"),
            std::string::npos);
}

TEST(DataLoader, AnEpochLeftEarlyStopsItsThread) {
  data::DataLoader loader(numbers(), {.batch_size = 1, .prefetch = 3});
  for (const data::Example& batch : loader) {
    EXPECT_EQ(batch[1].to_vector<int64_t>()[0], 0);
    break;
  }
  EXPECT_EQ(labels_of(loader).size(), 10u) << "a new epoch starts from the first batch";
}
