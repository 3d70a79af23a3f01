// The MoE router's load model (core/workload/moe_router.hpp) as properties over random seeds: every
// choice is accounted for, drops happen only above capacity, no skew means even loads, skew and document
// correlation mean uneven ones, layers drift as told, and the same inputs give the same loads.
#include "core/workload/moe_router.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/common/rng.hpp"

namespace zb {
namespace {

MoeSpec spec(int experts, int top_k, double skew = 0, double correlation = 0, double drift = 1) {
  MoeSpec moe;
  moe.experts = experts;
  moe.top_k = top_k;
  moe.expert_ffn_hidden = 1024;
  moe.routing = {skew, correlation, drift};
  return moe;
}

// A random MoE shape and load model, as the scenario loader would accept it.
MoeSpec random_spec(Rng& rng) {
  constexpr int expert_counts[] = {1, 2, 8, 16, 60, 64};
  const int experts = expert_counts[rng.below(std::size(expert_counts))];
  MoeSpec moe =
      spec(experts, 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(experts, 8)))),
           3 * rng.uniform(), rng.uniform(), rng.uniform());
  if (rng.below(2) == 0) moe.capacity_factor = 0.25 + 2 * rng.uniform();
  return moe;
}

// Up to 16 ranks, each with up to 6 slices of documents that may span ranks; some slices empty.
TokenLayout random_layout(Rng& rng) {
  TokenLayout layout(1 + rng.below(16));
  for (auto& slices : layout) {
    const auto count = rng.below(7);
    for (std::uint64_t i = 0; i < count; ++i)
      slices.push_back(
          {static_cast<std::int64_t>(rng.below(10)), static_cast<std::int64_t>(rng.below(5000))});
  }
  return layout;
}

std::int64_t tokens_of(const std::vector<DocumentSlice>& slices) {
  std::int64_t total = 0;
  for (const DocumentSlice& s : slices) total += s.tokens;
  return total;
}

TEST(MoeRouter, EveryChoiceIsRoutedOrDroppedOverRandomSeeds) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    Rng rng(seed, 99);
    const MoeSpec moe = random_spec(rng);
    const TokenLayout layout = random_layout(rng);
    const ExpertLoads loads = MoeRouter(moe, 4, seed).route(static_cast<int>(seed % 5), 3, layout);
    ASSERT_EQ(loads.ranks, static_cast<int>(layout.size()));
    for (int r = 0; r < loads.ranks; ++r) {
      const std::int64_t tokens = tokens_of(layout[static_cast<std::size_t>(r)]);
      std::int64_t choices = 0;
      for (int e = 0; e < moe.experts; ++e) {
        choices += loads.routed_of(r, e) + loads.dropped_of(r, e);
        // A token's top-k experts are distinct: no expert gets more choices from a rank than its tokens.
        EXPECT_LE(loads.routed_of(r, e) + loads.dropped_of(r, e), tokens);
      }
      EXPECT_EQ(choices, tokens * moe.top_k) << "rank " << r;
    }
    if (!moe.capacity_factor) {
      EXPECT_EQ(loads.total_dropped(), 0);
    }
  }
}

TEST(MoeRouter, DropsOnlyAboveCapacityOverRandomSeeds) {
  int layouts_with_drops = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    Rng rng(seed, 98);
    MoeSpec moe = random_spec(rng);
    moe.capacity_factor = 0.5 + rng.uniform();
    const TokenLayout layout = random_layout(rng);
    const ExpertLoads loads = MoeRouter(moe, 1, seed).route(0, 0, layout);
    ASSERT_EQ(loads.capacity.size(), layout.size());
    for (int r = 0; r < loads.ranks; ++r) {
      const std::int64_t capacity = loads.capacity[static_cast<std::size_t>(r)];
      const double fair_share =
          static_cast<double>(tokens_of(layout[static_cast<std::size_t>(r)])) * moe.top_k / moe.experts;
      EXPECT_GE(static_cast<double>(capacity), *moe.capacity_factor * fair_share - 1e-6);
      for (int e = 0; e < moe.experts; ++e) {
        EXPECT_LE(loads.routed_of(r, e), capacity);
        if (loads.dropped_of(r, e) > 0) {
          EXPECT_EQ(loads.routed_of(r, e), capacity);
        }
      }
    }
    layouts_with_drops += loads.total_dropped() > 0;
  }
  EXPECT_GT(layouts_with_drops, 50);  // the property was exercised, not vacuous
}

TEST(MoeRouter, NoSkewAndNoCorrelationGiveNearlyEvenLoads) {
  const std::vector<std::int64_t> tokens(8, 131072);  // 1M tokens on 8 ranks
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto& [experts, top_k] : {std::pair{8, 2}, std::pair{64, 6}}) {
      const ExpertLoads loads =
          MoeRouter(spec(experts, top_k), 2, seed).route(0, 1, layout_of_counts(tokens));
      EXPECT_LT(expert_load_imbalance(loads), 1.02) << "seed " << seed << ", " << experts << " experts";
      EXPECT_LT(rank_load_imbalance(loads, 8), 1.02) << "seed " << seed << ", " << experts << " experts";
    }
  }
}

TEST(MoeRouter, SkewMakesLoadsUneven) {
  const std::vector<std::int64_t> tokens(8, 65536);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const double even =
        expert_load_imbalance(MoeRouter(spec(8, 2, 0), 1, seed).route(0, 0, layout_of_counts(tokens)));
    const double skewed =
        expert_load_imbalance(MoeRouter(spec(8, 2, 1), 1, seed).route(0, 0, layout_of_counts(tokens)));
    // Zipf(1) over 8 experts: the most popular takes 1/H_8 = 0.368 of the choices, 2.9 × the mean, but
    // a token's two experts are distinct, so it takes at most one choice per token: max/mean ≤ 8/2 = 4.
    EXPECT_LT(even, 1.02);
    EXPECT_GT(skewed, 2.5) << "seed " << seed;
  }
}

TEST(MoeRouter, PopularitySumsToOneAndDriftsAcrossLayersAsTold) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const MoeRouter still(spec(16, 2, 1.0, 0, /*drift=*/0), 6, seed);
    const MoeRouter drifting(spec(16, 2, 1.0, 0, /*drift=*/1), 6, seed);
    for (int layer = 0; layer < 6; ++layer) {
      const auto p = drifting.popularity(layer);
      EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-12);
      EXPECT_TRUE(std::ranges::equal(still.popularity(layer), still.popularity(0)));
    }
    int layers_that_moved = 0;
    for (int layer = 1; layer < 6; ++layer)
      layers_that_moved += !std::ranges::equal(drifting.popularity(layer), drifting.popularity(layer - 1));
    EXPECT_GE(layers_that_moved, 4) << "seed " << seed;
  }
}

TEST(MoeRouter, FullCorrelationSendsADocumentToExactlyItsFavourites) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const MoeRouter router(spec(16, 4, 0.5, /*correlation=*/1.0), 2, seed);
    const TokenLayout layout = {{{7, 1000}}};
    const ExpertLoads loads = router.route(3, 1, layout);
    const std::vector<int> favourites = router.favourite_experts(3, 1, 7);
    ASSERT_EQ(favourites.size(), 4u);
    for (int e = 0; e < 16; ++e) {
      const bool favourite = std::ranges::find(favourites, e) != favourites.end();
      EXPECT_EQ(loads.routed_of(0, e), favourite ? 1000 : 0) << "seed " << seed << ", expert " << e;
    }
  }
}

TEST(MoeRouter, DocumentCorrelationMakesBatchesDiffer) {
  // Many short documents average their favourites out; a few long ones do not.
  TokenLayout few_long(8), many_short(8);
  for (std::int64_t r = 0; r < 8; ++r) {
    few_long[static_cast<std::size_t>(r)].push_back({r, 65536});
    for (std::int64_t d = 0; d < 256; ++d)
      many_short[static_cast<std::size_t>(r)].push_back({r * 256 + d, 256});
  }
  double long_total = 0, short_total = 0;
  for (int iteration = 0; iteration < 10; ++iteration) {
    const MoeRouter router(spec(8, 2, 0, 0.8), 1, 5);
    long_total += expert_load_imbalance(router.route(iteration, 0, few_long));
    short_total += expert_load_imbalance(router.route(iteration, 0, many_short));
  }
  EXPECT_GT(long_total / 10, 1.3);
  EXPECT_LT(short_total / 10, 1.15);
}

TEST(MoeRouter, SameInputsGiveTheSameLoadsByteForByte) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    Rng rng(seed, 97);
    const MoeSpec moe = random_spec(rng);
    const TokenLayout layout = random_layout(rng);
    const ExpertLoads a = MoeRouter(moe, 3, seed).route(2, 1, layout);
    const ExpertLoads b = MoeRouter(moe, 3, seed).route(2, 1, layout);
    EXPECT_EQ(a.routed, b.routed);
    EXPECT_EQ(a.dropped, b.dropped);
    EXPECT_EQ(a.capacity, b.capacity);
  }
  // And another seed, iteration or layer routes differently.
  const TokenLayout layout = layout_of_counts(std::vector<std::int64_t>(4, 50000));
  const MoeSpec moe = spec(16, 2, 0.5, 0.3);
  const std::vector<std::int64_t> reference = MoeRouter(moe, 2, 1).route(0, 0, layout).routed;
  EXPECT_NE(MoeRouter(moe, 2, 2).route(0, 0, layout).routed, reference);
  EXPECT_NE(MoeRouter(moe, 2, 1).route(1, 0, layout).routed, reference);
  EXPECT_NE(MoeRouter(moe, 2, 1).route(0, 1, layout).routed, reference);
}

TEST(ExpertLoads, RanksReceiveWhatTheirGroupRoutesToTheirExperts) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const ExpertLoads loads = MoeRouter(spec(16, 2, 1.0, 0.3), 1, seed)
                                  .route(0, 0, layout_of_counts(std::vector<std::int64_t>(8, 4096)));
    for (const int degree : {1, 2, 4, 8}) {
      const std::vector<std::int64_t> received = tokens_received_per_rank(loads, degree);
      EXPECT_EQ(std::accumulate(received.begin(), received.end(), std::int64_t{0}), loads.total_routed());
    }
    // Degree 1: every rank holds every expert and receives only its own tokens' choices.
    EXPECT_EQ(tokens_received_per_rank(loads, 1), std::vector<std::int64_t>(8, 4096 * 2));
  }
  const ExpertLoads loads(6, 8);
  EXPECT_THROW((void)tokens_received_per_rank(loads, 4), std::invalid_argument);  // 4 does not divide 6 ranks
  EXPECT_THROW((void)tokens_received_per_rank(ExpertLoads(8, 6), 4), std::invalid_argument);
}

TEST(MoeRouter, RefusesWhatTheLoaderWouldHaveRefused) {
  EXPECT_THROW(MoeRouter(MoeSpec{}, 4, 1), std::invalid_argument);  // dense
  EXPECT_THROW(MoeRouter(spec(4, 5), 4, 1), std::invalid_argument);
  EXPECT_THROW(MoeRouter(spec(4, 2), 0, 1), std::invalid_argument);
  const MoeRouter router(spec(4, 2), 4, 1);
  EXPECT_THROW((void)router.route(0, 4, {}), std::out_of_range);
  EXPECT_THROW((void)router.route(0, 0, {{{0, -1}}}), std::invalid_argument);
}

}  // namespace
}  // namespace zb

namespace zb {
namespace {

// The layer a run's one-layer Program takes from the router (docs/MOE.md, "One layer stands for all") is a
// uniform draw over the layers, the same for the same (seed, iteration), and differs across iterations: over
// 16,000 iterations each of 16 layers is drawn 1000 ± 5 sd times.
TEST(MoeRouter, SampledLayerIsUniformOverTheLayersAndDeterministic) {
  for (const std::uint64_t seed : {1ULL, 77ULL}) {
    const MoeRouter router(spec(8, 2), 16, seed);
    std::vector<int> drawn(16, 0);
    for (int iteration = 0; iteration < 16000; ++iteration) {
      const int layer = router.sampled_layer(iteration);
      ASSERT_GE(layer, 0);
      ASSERT_LT(layer, 16);
      ++drawn[static_cast<std::size_t>(layer)];
      EXPECT_EQ(layer, router.sampled_layer(iteration));
    }
    for (int l = 0; l < 16; ++l) {
      EXPECT_GT(drawn[static_cast<std::size_t>(l)], 850) << "seed " << seed << " layer " << l;
      EXPECT_LT(drawn[static_cast<std::size_t>(l)], 1150) << "seed " << seed << " layer " << l;
    }
  }
}

}  // namespace
}  // namespace zb
