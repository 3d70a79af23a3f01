// The order Zeppelin's partitioner places documents in (step 3's LPT order), sorted once per batch by the
// planner and shared by every candidate partition of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/strategies/zeppelin/partitioner.hpp"
#include "support.hpp"

namespace zb {
namespace {

// Longest first, and among equal lengths the batch's order: a permutation, so every document is placed
// once, and deterministic for a given batch. Random batches of every shape the sort treats differently:
// many ties (lengths from a small set), context-sized lengths (two radix passes), lengths up to 2^31 (three),
// a spread of more than 2^32 and negative lengths (the comparison sort), zeros, one and no document.
TEST(ZeppelinPartitionOrder, LongestFirstEqualLengthsInBatchOrder) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {
      {0, 0}, {1, 12}, {1, 131072}, {0, std::int64_t{1} << 31}, {0, std::int64_t{1} << 40}, {-50, 50}};
  for (const auto& [low, high] : ranges) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      std::vector<std::int64_t> lengths(std::uniform_int_distribution<int>(0, 300)(rng));
      if (seed == 1) lengths.resize(1);
      if (seed == 2) lengths.clear();
      for (auto& len : lengths) {
        len = std::uniform_int_distribution<std::int64_t>(low, high)(rng);
        if (high == 12) len *= 128;
      }
      if (seed % 5 == 0 && !lengths.empty()) lengths.back() = high;  // the longest at the end
      const std::vector<int> order = zeppelin::longest_first(lengths);
      std::vector<int> expected(lengths.size());
      std::iota(expected.begin(), expected.end(), 0);
      std::stable_sort(expected.begin(), expected.end(), [&lengths](int a, int b) {
        return lengths[static_cast<std::size_t>(a)] > lengths[static_cast<std::size_t>(b)];
      });
      EXPECT_EQ(order, expected) << "lengths in [" << low << ", " << high << "], seed " << seed;
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
