// Dataset presets: sampled quantiles against each preset's documented targets, analytic means against
// the sources, and the wikipedia fit against the real lengths file.
#include "core/workload/datasets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "core/workload/lengths_file.hpp"
#include "core/workload/samplers.hpp"
#include "core/workload/stats.hpp"
#include "test_helpers.hpp"

namespace zb {
namespace {

using testing::draw_many;

constexpr std::size_t kDocuments = 200000;  // p99 then rests on 2,000 documents: ~1-2% sampling error

LengthStats sample_preset(const DatasetPreset& preset, std::uint64_t seed = 17) {
  return compute_length_stats(draw_many(*make_dataset_sampler(preset), kDocuments, seed));
}

void expect_within(double measured, double target, double tolerance, const std::string& what) {
  EXPECT_NEAR(measured / target, 1.0, tolerance)
      << what << ": measured " << measured << ", target " << target;
}

TEST(DatasetPresets, TableHasTheDocumentedPresetsWithUniqueNames) {
  std::set<std::string> names;
  for (const auto& preset : dataset_presets()) {
    EXPECT_TRUE(names.insert(preset.name).second) << preset.name;
    EXPECT_FALSE(preset.source.empty()) << preset.name;
    EXPECT_FALSE(preset.assumptions.empty()) << preset.name;
    EXPECT_FALSE(preset.components.empty()) << preset.name;
  }
  for (const char* name : {"wikipedia", "commoncrawl", "github", "arxiv", "prolong64k", "bimodal-long"}) {
    EXPECT_NE(find_dataset(name), nullptr) << name;
  }
  EXPECT_EQ(find_dataset("nope"), nullptr);
  EXPECT_NE(dataset_names().find("bimodal-long"), std::string::npos);
}

TEST(DatasetPresets, SampledQuantilesMeetEachPresetsTargets) {
  for (const auto& preset : dataset_presets()) {
    const auto stats = sample_preset(preset);
    expect_within(stats.quantiles.p50, preset.targets.p50, preset.tolerance, preset.name + " p50");
    expect_within(stats.quantiles.p90, preset.targets.p90, preset.tolerance, preset.name + " p90");
    expect_within(stats.quantiles.p99, preset.targets.p99, preset.tolerance, preset.name + " p99");
  }
}

TEST(DatasetPresets, AnalyticMeansMatchTheSources) {
  for (const auto& preset : dataset_presets()) {
    const double mean = analytic_mean(preset);
    EXPECT_TRUE(std::isfinite(mean)) << preset.name;
    if (preset.source_mean) expect_within(mean, *preset.source_mean, 0.05, preset.name + " mean");
  }
}

TEST(DatasetPresets, Prolong64kTakesItsTokenSharesFromTheTable) {
  const DatasetPreset& preset = *find_dataset("prolong64k");
  ASSERT_EQ(preset.shares_of, ShareOf::tokens);
  const auto weights = document_weights(preset);
  const double mean = analytic_mean(preset);
  double long_share = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double token_share = weights[i] * analytic_mean(preset.components[i].distribution) / mean;
    EXPECT_NEAR(token_share, preset.components[i].share, 1e-12) << preset.components[i].label;
    if (i > 0) long_share += token_share;
  }
  EXPECT_NEAR(long_share, 0.60, 1e-12);  // 60% of tokens from long sources
  // Books have a median of 90K tokens: about half of the book documents are above 64K.
  EXPECT_GT(weights[1], 0.003);
}

TEST(DatasetPresets, BimodalLongMatchesByteScalesShares) {
  const auto lengths = draw_many(*make_dataset_sampler(*find_dataset("bimodal-long")), kDocuments, 23);
  const auto at_most_4k = std::count_if(lengths.begin(), lengths.end(), [](auto s) { return s <= 4096; });
  const auto at_least_2m =
      std::count_if(lengths.begin(), lengths.end(), [](auto s) { return s >= (1 << 21); });
  EXPECT_NEAR(static_cast<double>(at_most_4k) / kDocuments, 0.80, 0.01);
  // 0.05% of 200K is 100 documents; ±40% covers four standard deviations of the count.
  EXPECT_NEAR(static_cast<double>(at_least_2m) / kDocuments, 0.0005, 0.0002);
}

TEST(DatasetPresets, DescribeStatesFitSourceAndTargets) {
  for (const auto& preset : dataset_presets()) {
    const std::string text = describe(preset);
    EXPECT_NE(text.find(preset.name), std::string::npos);
    EXPECT_NE(text.find("source: "), std::string::npos) << text;
    EXPECT_NE(text.find("target quantiles"), std::string::npos) << text;
    EXPECT_NE(text.find("lognormal"), std::string::npos) << text;
  }
  EXPECT_NE(describe(*find_dataset("prolong64k")).find("mixture"), std::string::npos);
}

TEST(DatasetPresets, WikipediaFitMatchesTheRealLengthsFile) {
  const std::filesystem::path file = std::filesystem::path(ZB_SHARED_DATA_DIR) / "wikipedia-doc-lengths.txt";
  if (!std::filesystem::exists(file)) {
    GTEST_SKIP() << "real Wikipedia lengths not found at " << file.string()
                 << " (the shared data folder is not next to this checkout)";
  }
  const auto real = compute_length_stats(read_lengths_file(file));
  const DatasetPreset& preset = *find_dataset("wikipedia");
  // The documented targets are this file's quantiles (to the rounding of the interpolation).
  expect_within(real.quantiles.p50, preset.targets.p50, 0.005, "file p50 vs documented");
  expect_within(real.quantiles.p90, preset.targets.p90, 0.005, "file p90 vs documented");
  expect_within(real.quantiles.p99, preset.targets.p99, 0.005, "file p99 vs documented");
  expect_within(real.mean, *preset.source_mean, 0.005, "file mean vs documented");

  const auto fit = sample_preset(preset, 99);
  expect_within(fit.quantiles.p50, real.quantiles.p50, preset.tolerance, "fit p50 vs file");
  expect_within(fit.quantiles.p90, real.quantiles.p90, preset.tolerance, "fit p90 vs file");
  expect_within(fit.quantiles.p99, real.quantiles.p99, preset.tolerance, "fit p99 vs file");
  // Not a target, but the reason long-context work needs a tail: the fit must put a comparable share
  // of attention work above 4K as the real corpus does (94% real).
  EXPECT_NEAR(fit.above[0].attention, real.above[0].attention, 0.05);
  std::cout << "real:\n" << format_length_stats(real) << "fit:\n" << format_length_stats(fit);
}

}  // namespace
}  // namespace zb
