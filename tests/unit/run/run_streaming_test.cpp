// `run` draws each iteration's batch when the iteration runs and keeps only what the reports need of it
// (core/workload/batch_record.hpp): the record must say exactly what the batches were, for every iteration,
// as if they had been stored. `run --plan` finds its iteration the same way, one batch at a time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/cost/cost_model.hpp"
#include "core/run/run_plan.hpp"
#include "core/run/run_scenario.hpp"
#include "core/strategies/strategy.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

constexpr int kIterations = 9;

Scenario small_scenario() {
  return parse_scenario(R"({"name": "streaming", "cluster": {"preset": "dgx-h200", "nodes": 1},
                            "model": {"preset": "llama-7b"},
                            "workload": {"dataset": "wikipedia", "tokens_per_iteration": 65536, "iterations": )" +
                            std::to_string(kIterations) + R"(},
                            "systems": ["packing-dp", "ring-cp"]})",
                        "streaming.json");
}

void expect_same(const BatchSummary& got, const BatchSummary& drawn) {
  EXPECT_EQ(got.iteration, drawn.iteration);
  EXPECT_EQ(got.documents, drawn.documents);
  EXPECT_EQ(got.tokens, drawn.tokens);
  EXPECT_EQ(got.longest, drawn.longest);
  EXPECT_EQ(got.lengths_fnv1a, drawn.lengths_fnv1a);
}

TEST(RunStreaming, TheRecordDescribesEveryIterationsBatchAsDrawn) {
  const Scenario s = small_scenario();
  const RunResult run = run_scenario(s);
  const Workload workload(s);
  ASSERT_EQ(run.workload.batches.size(), static_cast<std::size_t>(kIterations))
      << "one record per iteration, not per system";
  std::int64_t documents = 0;
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE("iteration " + std::to_string(i));
    const BatchSummary drawn = summarize_batch(workload.batch(i));
    expect_same(run.workload.batches[static_cast<std::size_t>(i)], drawn);
    EXPECT_EQ(drawn.tokens, 65536);
    documents += drawn.documents;
  }
  EXPECT_EQ(run.workload.lengths.documents(), documents);
  EXPECT_DOUBLE_EQ(run.workload.lengths.tokens(), 65536.0 * kIterations);
  for (const SystemResult& system : run.systems)
    EXPECT_EQ(system.iterations.size(), static_cast<std::size_t>(kIterations));
}

TEST(RunPlanStreaming, FindsThePlansIterationAndRecordsEveryBatch) {
  const Scenario s = small_scenario();
  const Workload workload(s);
  const CostModel cost(s.cluster, s.model, s.hardware_profile.profile);
  const plan::Plan p = make_strategy(s.systems[1], s, cost)->make_plan(workload.batch(4));
  EXPECT_EQ(match_plan_to_scenario(p, "p.json", s, workload), 4);

  std::vector<int> seen;
  EXPECT_EQ(match_plan_to_scenario(p, "p.json", s, workload,
                                   [&seen](const Batch& b) { seen.push_back(b.iteration); }),
            4);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}))
      << "every iteration, in order, past the match";

  const RunResult run = run_plan(s, p, "p.json");
  ASSERT_EQ(run.workload.batches.size(), static_cast<std::size_t>(kIterations));
  for (int i = 0; i < kIterations; ++i)
    expect_same(run.workload.batches[static_cast<std::size_t>(i)], summarize_batch(workload.batch(i)));
  ASSERT_EQ(run.systems.size(), 1u);
  ASSERT_EQ(run.systems[0].iterations.size(), 1u);
  EXPECT_EQ(run.systems[0].iterations[0].iteration, 4);
}

TEST(RunPlanStreaming, APlanOfNoIterationsBatchNamesTheRangeAndIterationZero) {
  const Scenario s = small_scenario();
  const Workload workload(s);
  const CostModel cost(s.cluster, s.model, s.hardware_profile.profile);
  Batch other = workload.batch(0);
  other.lengths.back() += 1;
  const plan::Plan p = make_strategy(s.systems[1], s, cost)->make_plan(other);
  try {
    (void)match_plan_to_scenario(p, "p.json", s, workload);
    ADD_FAILURE() << "a plan of no iteration's batch was matched";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].where.json_path, "sequences");
    EXPECT_NE(e.problems()[0].what.find("(iterations 0..8); iteration 0's batch has"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zb
