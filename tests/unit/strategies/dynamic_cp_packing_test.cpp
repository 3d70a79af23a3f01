// dynamic-cp as Megatron-LM dev schedules it (DefaultDynamicCPScheduler → next_hdp_group_packing_aware), as
// a specification: documents longest first; each micro-batch spans every GPU, its CP groups power-of-two
// blocks aligned to their size; a group packs several documents into one THD micro-batch as long as their
// per-GPU share fits max_seqlen_per_rank; a document may take a wider group than it needs when that lowers
// the busiest GPU's load; what fits nowhere waits for the next micro-batch; idle GPUs are filled by
// doubling the smallest group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/common/rng.hpp"
#include "core/strategies/dynamic_cp_packing.hpp"

namespace zb {
namespace {

// (first rank, size, documents) of each group of each micro-batch.
using Shape = std::vector<std::vector<std::tuple<int, int, std::vector<int>>>>;
Shape shape(const std::vector<DynamicCpMicroBatch>& schedule) {
  Shape out;
  for (const DynamicCpMicroBatch& mb : schedule) {
    out.emplace_back();
    for (const DynamicCpPackedGroup& g : mb.groups) out.back().emplace_back(g.first_rank, g.size, g.docs);
  }
  return out;
}

// Every rule a schedule must keep, as a list of broken ones (empty when all hold).
std::vector<std::string> violations(const std::vector<DynamicCpMicroBatch>& schedule,
                                    const std::vector<std::int64_t>& lengths, std::int64_t max, int world,
                                    int min_cp = 1) {
  std::vector<std::string> out;
  std::vector<int> seen(lengths.size(), 0);
  for (std::size_t m = 0; m < schedule.size(); ++m) {
    const std::string at = "micro-batch " + std::to_string(m) + ": ";
    int next_rank = 0;
    if (schedule[m].groups.empty()) out.push_back(at + "no groups");
    for (const DynamicCpPackedGroup& g : schedule[m].groups) {
      const std::string where = at + "group at " + std::to_string(g.first_rank) + ": ";
      if (g.first_rank != next_rank) out.push_back(where + "does not follow the previous group");
      if (g.size < 1 || (g.size & (g.size - 1)) != 0) out.push_back(where + "size not a power of two");
      if (g.size > 0 && g.first_rank % g.size != 0) out.push_back(where + "not aligned to its size");
      if (g.docs.empty()) out.push_back(where + "no documents");
      next_rank = g.first_rank + g.size;
      std::int64_t tokens = 0;
      double load = 0;
      for (const int d : g.docs) {
        if (d < 0 || static_cast<std::size_t>(d) >= lengths.size()) {
          out.push_back(where + "unknown document");
          continue;
        }
        ++seen[static_cast<std::size_t>(d)];
        const std::int64_t s = lengths[static_cast<std::size_t>(d)];
        const std::int64_t align = 2LL * g.size;
        tokens += g.size == 1 ? s : (s + align - 1) / align * align;  // the zigzag-padded rows
        load += static_cast<double>(s) * static_cast<double>(s) / g.size;
        if (g.size < dynamic_cp_min_size(s, max, min_cp))
          out.push_back(where + "document " + std::to_string(d) + " below its minimum CP size");
      }
      if (g.size > 0 && g.tokens_per_rank != (tokens + g.size - 1) / g.size)
        out.push_back(where + "tokens_per_rank is not ⌈Σ padded s / size⌉");
      if (g.tokens_per_rank > max) out.push_back(where + "over max_seqlen_per_rank");
      if (std::abs(g.load - load) > 1e-9 * std::max(1.0, load))
        out.push_back(where + "load is not Σ s²/size");
    }
    if (next_rank != world) out.push_back(at + "groups do not cover the world");
  }
  for (std::size_t d = 0; d < lengths.size(); ++d)
    if (seen[d] != 1)
      out.push_back("document " + std::to_string(d) + " scheduled " + std::to_string(seen[d]) + "×");
  return out;
}

TEST(DynamicCpPacking, MinimumCpSizeIsTheNextPowerOfTwoOfTheRanksNeededFlooredAtTheMinimum) {
  EXPECT_EQ(dynamic_cp_min_size(1, 100), 1);
  EXPECT_EQ(dynamic_cp_min_size(100, 100), 1);
  EXPECT_EQ(dynamic_cp_min_size(101, 100), 2);
  EXPECT_EQ(dynamic_cp_min_size(300, 100), 4);
  EXPECT_EQ(dynamic_cp_min_size(401, 100), 8);
  EXPECT_EQ(dynamic_cp_min_size(50, 100, 4), 4);
  EXPECT_EQ(dynamic_cp_min_size(900, 100, 2), 16);
  EXPECT_EQ(dynamic_cp_min_size(50, 100, 3), 4);  // only power-of-two groups exist
}

TEST(DynamicCpPacking, AnEmptyBatchHasNoMicroBatches) {
  EXPECT_TRUE(schedule_dynamic_cp_packed({}, 100, 8).empty());
}

// 64 documents of 100 tokens, 1000 tokens per GPU, 8 GPUs: the first eight open one-GPU groups (a new group
// keeps the peak where it is), the rest join the least loaded group in turn; all fit in one micro-batch,
// eight documents packed per GPU, where one-document micro-batches would need eight.
TEST(DynamicCpPacking, ManyShortDocumentsArePackedSeveralToAGroup) {
  const std::vector<std::int64_t> lengths(64, 100);
  const auto schedule = schedule_dynamic_cp_packed(lengths, 1000, 8);
  ASSERT_EQ(schedule.size(), 1u);
  ASSERT_EQ(schedule[0].groups.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    const DynamicCpPackedGroup& group = schedule[0].groups[static_cast<std::size_t>(g)];
    EXPECT_EQ(group.first_rank, g);
    EXPECT_EQ(group.size, 1);
    EXPECT_EQ(group.docs, (std::vector<int>{g, g + 8, g + 16, g + 24, g + 32, g + 40, g + 48, g + 56}));
    EXPECT_EQ(group.tokens_per_rank, 800);
    EXPECT_DOUBLE_EQ(group.load, 8 * 100.0 * 100.0);
  }
}

// A document needing all 8 GPUs fills them alone: no short document's share fits beside it, so they wait
// for the next micro-batch.
TEST(DynamicCpPacking, ALongDocumentRunsAloneOnTheWideGroup) {
  const std::vector<std::int64_t> lengths{100, 800, 100, 100};
  const auto schedule = schedule_dynamic_cp_packed(lengths, 100, 8);
  ASSERT_GE(schedule.size(), 2u);
  EXPECT_EQ(shape(schedule)[0], (Shape::value_type{{0, 8, {1}}}));
  EXPECT_EQ(violations(schedule, lengths, 100, 8), std::vector<std::string>{});
}

// A short document joins the long one's group when its share still fits there (Σ s / size ≤ max).
TEST(DynamicCpPacking, AShortDocumentIsPackedBesideALongOneWhenItsShareFits) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({150, 40}, 100, 2)), (Shape{{{0, 2, {0, 1}}}}));
}

// Documents whose shares no longer fit any group are carried, in order, to the next micro-batch.
TEST(DynamicCpPacking, WhatDoesNotFitWaitsForTheNextMicroBatch) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({100, 100, 100}, 200, 1)),
            (Shape{{{0, 1, {0, 1}}}, {{0, 1, {2}}}}));
}

// A 4-GPU document and a 1-GPU one on 8 GPUs: the short one's group doubles (1 → 2 → 4) until no GPU idles.
TEST(DynamicCpPacking, IdleGpusAreFilledByDoublingTheSmallestGroup) {
  const auto schedule = schedule_dynamic_cp_packed({300, 50}, 100, 8);
  EXPECT_EQ(shape(schedule), (Shape{{{0, 4, {0}}, {4, 4, {1}}}}));
  EXPECT_DOUBLE_EQ(schedule[0].groups[1].load, 50.0 * 50.0 / 4);
}

// 201 tokens need 4 GPUs (peak 201²/4); 200 tokens need only 2, but on 2 GPUs they would raise the peak to
// 200²/2, so they take a fresh 4-GPU group instead. The 100-token documents take one GPU each, later
// doubled to fill the world.
TEST(DynamicCpPacking, ADocumentTakesAWiderGroupThanItNeedsWhenThatLowersThePeak) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({201, 200, 100, 100, 100, 100}, 100, 16)),
            (Shape{{{0, 4, {0}}, {4, 4, {1}}, {8, 2, {2}}, {10, 2, {3}}, {12, 2, {4}}, {14, 2, {5}}}}));
}

// With the peak at 100², the third document could open a group or join the second; both keep the peak, and
// an existing group of the size comes first.
TEST(DynamicCpPacking, JoiningAGroupBeatsOpeningOneWhenThePeakIsTheSame) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({100, 50, 50}, 1000, 4)),
            (Shape{{{0, 2, {0}}, {2, 2, {1, 2}}}}));
}

TEST(DynamicCpPacking, TheMinimumCpSizeFloorsEveryGroup) {
  const std::vector<std::int64_t> lengths{10, 20, 30, 40, 50};
  const auto schedule = schedule_dynamic_cp_packed(lengths, 100, 8, 2);
  EXPECT_EQ(violations(schedule, lengths, 100, 8, 2), std::vector<std::string>{});
  for (const DynamicCpMicroBatch& mb : schedule)
    for (const DynamicCpPackedGroup& g : mb.groups) EXPECT_GE(g.size, 2);
}

TEST(DynamicCpPacking, ADocumentNeedingMoreGpusThanTheWorldIsRejected) {
  EXPECT_THROW((void)schedule_dynamic_cp_packed({100, 801}, 100, 8), std::invalid_argument);
  EXPECT_THROW((void)schedule_dynamic_cp_packed({100, 401}, 100, 6), std::invalid_argument);
  EXPECT_THROW((void)schedule_dynamic_cp_packed({100}, 100, 4, 8), std::invalid_argument);
}

// On 6 GPUs (not a power of two) the 1-GPU group beside a 4-GPU one doubles to 2 and the world is covered.
TEST(DynamicCpPacking, ANonPowerOfTwoWorldStillDoublesWhereTheIdleGpusAllow) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({400, 50}, 100, 6)), (Shape{{{0, 4, {0}}, {4, 2, {1}}}}));
}

// On 10 GPUs two 4-GPU groups leave 2 GPUs idle, too few to double either; the micro-batch instead packs
// whatever fits into one group over all 10 GPUs (Megatron's fill_with_full_dpxcp_group).
TEST(DynamicCpPacking, WhenDoublingCannotFillTheWorldOneGroupSpansIt) {
  EXPECT_EQ(shape(schedule_dynamic_cp_packed({400, 400}, 100, 10)), (Shape{{{0, 10, {0, 1}}}}));
}

TEST(DynamicCpPacking, TheScheduleIsDeterministic) {
  Rng rng(7, 3);
  std::vector<std::int64_t> lengths(300);
  for (auto& len : lengths) len = 1 + static_cast<std::int64_t>(rng.below(rng.below(5) == 0 ? 16000 : 1500));
  const auto a = schedule_dynamic_cp_packed(lengths, 1000, 16);
  const auto b = schedule_dynamic_cp_packed(lengths, 1000, 16);
  EXPECT_EQ(shape(a), shape(b));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t m = 0; m < a.size(); ++m)
    for (std::size_t g = 0; g < a[m].groups.size(); ++g) {
      EXPECT_EQ(a[m].groups[g].load, b[m].groups[g].load);
      EXPECT_EQ(a[m].groups[g].tokens_per_rank, b[m].groups[g].tokens_per_rank);
    }
}

// Random mixed batches (mostly short documents, some needing up to the whole world) on 8, 16 and 64 GPUs:
// every rule holds, and documents share groups whenever there are more of them than GPUs.
TEST(DynamicCpPacking, RandomBatchesKeepEveryRule) {
  const std::int64_t max = 4096;
  for (const int world : {8, 16, 64}) {
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
      Rng rng(seed, static_cast<std::uint64_t>(world));
      std::vector<std::int64_t> lengths(1 + rng.below(static_cast<std::uint64_t>(6 * world)));
      for (auto& len : lengths) {
        const std::uint64_t top = rng.below(6) == 0 ? static_cast<std::uint64_t>(world) * max : max;
        len = static_cast<std::int64_t>(rng.below(top + 1));
      }
      const int min_cp = rng.below(4) == 0 ? 2 : 1;
      const auto schedule = schedule_dynamic_cp_packed(lengths, max, world, min_cp);
      EXPECT_EQ(violations(schedule, lengths, max, world, min_cp), std::vector<std::string>{})
          << "world " << world << " seed " << seed;
      EXPECT_LE(schedule.size(), lengths.size()) << "world " << world << " seed " << seed;
    }
  }
}

// 4000 short documents (8M tokens) on 1024 GPUs: valid and packed a few to a GPU. (Its speed is the
// planner benchmarks' business: scripts/planner-speed.py.)
TEST(DynamicCpPacking, AThousandGpuBatchPacksFewMicroBatches) {
  Rng rng(11, 1);
  std::vector<std::int64_t> lengths(4000);
  for (auto& len : lengths) len = 1 + static_cast<std::int64_t>(rng.below(4095));
  const auto schedule = schedule_dynamic_cp_packed(lengths, 8192, 1024);
  EXPECT_EQ(violations(schedule, lengths, 8192, 1024), std::vector<std::string>{});
  EXPECT_LT(schedule.size(), 4u);  // ~4 documents per GPU
}

}  // namespace
}  // namespace zb
