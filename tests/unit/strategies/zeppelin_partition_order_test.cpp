// The order Zeppelin's partitioner places documents in (step 3's LPT order), sorted once per batch by the
// planner and shared by every candidate partition of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/strategies/zeppelin/partitioner.hpp"
#include "support.hpp"

namespace zb {
namespace {

// Longest first, and among equal lengths the batch's order: a permutation, so every document is placed
// once, and deterministic for a given batch. Random batches with many ties (lengths from a small set).
TEST(ZeppelinPartitionOrder, LongestFirstEqualLengthsInBatchOrder) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::int64_t> lengths(std::uniform_int_distribution<int>(0, 300)(rng));
    for (auto& len : lengths) len = 128 * std::uniform_int_distribution<int>(1, 12)(rng);
    const std::vector<int> order = zeppelin::longest_first(lengths);
    ASSERT_EQ(order.size(), lengths.size()) << "seed " << seed;
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
      ASSERT_EQ(sorted[i], static_cast<int>(i)) << "seed " << seed;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const std::int64_t before = lengths[static_cast<std::size_t>(order[i - 1])];
      const std::int64_t after = lengths[static_cast<std::size_t>(order[i])];
      EXPECT_GE(before, after) << "seed " << seed << ", position " << i;
      if (before == after) {
        EXPECT_LT(order[i - 1], order[i]) << "seed " << seed << ", position " << i;
      }
    }
  }
}

// The order is the partition's input, not recomputed inside: the planner's shared longest-first order gives
// the partition that sorts for itself, and another order (shortest first) places the documents otherwise.
TEST(ZeppelinPartitionOrder, ThePartitionPlacesDocumentsInTheOrderItIsGiven) {
  const Scenario s = test::preset_scenario("dgx-h200", 4, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  const auto same = [](const zeppelin::Partition& a, const zeppelin::Partition& b) {
    if (a.groups.size() != b.groups.size()) return false;
    for (std::size_t g = 0; g < a.groups.size(); ++g) {
      if (a.groups[g].ranks != b.groups[g].ranks || a.groups[g].docs != b.groups[g].docs ||
          a.groups[g].micro_batch != b.groups[g].micro_batch)
        return false;
    }
    return a.gpu_load == b.gpu_load;
  };
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::int64_t> lengths;
    for (int d = 0; d < 300; ++d)
      lengths.push_back(std::uniform_int_distribution<std::int64_t>(1, m)(rng) / 4 + 1);
    lengths.push_back(3 * m);  // one document that takes a ring across nodes
    const std::vector<int> order = zeppelin::longest_first(lengths);
    const std::vector<int> shortest_first(order.rbegin(), order.rend());
    for (const bool per_micro_batch : {false, true}) {
      zeppelin::PartitionOptions o;
      o.backward = true;
      o.include_linear = !per_micro_batch;
      o.per_micro_batch = per_micro_batch;
      o.micro_batches = 2;
      o.degrees = per_micro_batch ? zeppelin::Degrees::tiled : zeppelin::Degrees::balance;
      const zeppelin::Partition own = zeppelin::partition(lengths, cost, o);
      EXPECT_TRUE(same(own, zeppelin::partition(lengths, order, cost, o)))
          << "seed " << seed << ": the shared order gives another partition";
      EXPECT_FALSE(same(own, zeppelin::partition(lengths, shortest_first, cost, o)))
          << "seed " << seed << ": shortest first gives the longest-first partition (the order is not used)";
    }
  }
}

// An order of another batch is refused, naming both sizes, instead of placing documents twice or never.
TEST(ZeppelinPartitionOrder, AnOrderOfAnotherBatchIsRefused) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::vector<std::int64_t> lengths{4096, 2048, 1024};
  try {
    (void)zeppelin::partition(lengths, zeppelin::longest_first({4096, 2048}), cost, {});
    FAIL() << "a two-document order was accepted for a three-document batch";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("an order of 2 documents for a batch of 3"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zb
