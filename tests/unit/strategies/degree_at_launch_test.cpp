// The fixed-degree baselines fix their degree for the run, as a training job's launch does
// (docs/STRATEGIES.md, "Degree at launch"): "auto" resolves once from the context length (max_seq_len)
// and memory, so batches with very different longest documents run the same degree; "per-batch" keeps
// the idealised re-pick per batch under its own name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

// Two batches of one scenario: only short documents, and one near the context length among them.
struct TwoBatches {
  Scenario scenario = test::preset_scenario("dgx-h200", 2, "llama-7b");
  std::vector<std::int64_t> short_only = std::vector<std::int64_t>(64, 2048);
  std::vector<std::int64_t> with_long;
  TwoBatches() {
    scenario.workload.max_seq_len = 131072;
    with_long = short_only;
    with_long.push_back(120000);
  }
};

// info["<key>"] of the plan `name` (with `options`) makes for `lengths`.
nlohmann::json planned(const TwoBatches& b, const std::string& name, nlohmann::json options,
                       const std::vector<std::int64_t>& lengths, const std::string& key) {
  const CostModel cost(b.scenario.cluster, b.scenario.model);
  const plan::Plan p = make_strategy(test::system(name, std::move(options)), b.scenario, cost)
                           ->make_plan(test::batch_of(lengths));
  return p.info.at(key);
}

TEST(DegreeAtLaunch, AutoIsTheSameDegreeForEveryBatchAndHoldsTheContextLength) {
  const TwoBatches b;
  const CostModel cost(b.scenario.cluster, b.scenario.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  for (const std::string name : {"llama3-cp", "uniform-cp"}) {
    const auto short_degree = planned(b, name, {}, b.short_only, "degree");
    const auto long_degree = planned(b, name, {}, b.with_long, "degree");
    EXPECT_EQ(short_degree, long_degree) << name;
    // The launch degree's groups hold a 128K document (more than one GPU does), even for a batch of 2K ones.
    EXPECT_GT(short_degree.get<int>(), 1) << name;
    EXPECT_GE(short_degree.get<std::int64_t>() * m, 131072) << name;
    EXPECT_EQ(planned(b, name, {}, b.short_only, "degree_choice"), "auto") << name;
  }
  const auto u_short = planned(b, "ulysses", {{"ring", "auto"}}, b.short_only, "cp_degree");
  const auto u_long = planned(b, "ulysses", {{"ring", "auto"}}, b.with_long, "cp_degree");
  EXPECT_EQ(u_short, u_long);
}

TEST(DegreeAtLaunch, PerBatchRepicksFromEachBatchsLongestDocument) {
  const TwoBatches b;
  for (const std::string name : {"llama3-cp", "uniform-cp"}) {
    const nlohmann::json per_batch{{"degree", "per-batch"}};
    EXPECT_EQ(planned(b, name, per_batch, b.short_only, "degree"), 1) << name;  // 2K documents fit one GPU
    EXPECT_GT(planned(b, name, per_batch, b.with_long, "degree").get<int>(), 1) << name;
    EXPECT_EQ(planned(b, name, per_batch, b.short_only, "degree_choice"), "per-batch") << name;
  }
  const nlohmann::json usp{{"degree", "per-batch"}, {"ring", "per-batch"}};
  EXPECT_LT(planned(b, "ulysses", usp, b.short_only, "cp_degree").get<int>(),
            planned(b, "ulysses", usp, b.with_long, "cp_degree").get<int>());
}

// A short context needs no CP at all: the launch degree is 1 (plain data parallelism), however long a
// document a batch with "keep" brings (that one is an OOM, as in the job).
TEST(DegreeAtLaunch, AShortContextLaunchesWithoutContextParallelism) {
  TwoBatches b;
  b.scenario.workload.max_seq_len = 4096;
  EXPECT_EQ(planned(b, "llama3-cp", {}, b.short_only, "degree"), 1);
  EXPECT_EQ(planned(b, "uniform-cp", {}, b.short_only, "degree"), 1);
  const CostModel cost(b.scenario.cluster, b.scenario.model);
  const plan::Plan p =
      make_strategy(test::system("uniform-cp"), b.scenario, cost)->make_plan(test::batch_of(b.with_long));
  EXPECT_FALSE(p.feasible());
}

}  // namespace
}  // namespace zb
