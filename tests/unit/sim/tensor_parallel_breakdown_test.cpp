// Tensor parallelism in the simulator: a TP plan's sequence-parallel collectives run on NVLink and show
// as their own part of the breakdown; without TP that part is zero and the same strategy moves nothing on
// NVLink (uniform-cp at degree 1 has no ring).
#include <gtest/gtest.h>

#include "core/config/presets.hpp"
#include "core/metrics/metrics.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

struct TpRun {
  RunMetrics metrics;
  double nvlink_bytes = 0;
};

TpRun run_uniform_cp(int tensor) {
  Scenario s = sim_test::scenario(find_cluster_preset("dgx-h200")->spec, Passes::fwd_bwd);
  s.parallelism.tensor = tensor;
  const CostModel cost(s.cluster, s.model);
  SystemSpec system;
  system.name = system.label = "uniform-cp";
  system.options = {{"degree", 1}};
  Batch batch;
  batch.lengths = {8192, 8192, 4096, 4096, 2048, 2048, 1024, 1024};
  const plan::Plan p = make_strategy(system, s, cost)->make_plan(batch);
  EXPECT_TRUE(p.feasible());
  const Trace t = execute(*make_executor(Backend::sim), p, s, cost);
  TpRun run{compute_run_metrics(p, t, cost, s, 10), 0.0};
  for (const LinkLoad& l : t.links) {
    if (l.kind == LinkKind::nvlink_out) run.nvlink_bytes += l.bytes;
  }
  return run;
}

TEST(TensorParallelInTheSimulator, CollectivesRunOnNvlinkAndHaveTheirOwnBreakdownPart) {
  const TpRun plain = run_uniform_cp(1);
  EXPECT_EQ(plain.metrics.critical_rank_breakdown.tensor_parallel, 0.0);
  EXPECT_EQ(plain.nvlink_bytes, 0.0);

  const TpRun tp = run_uniform_cp(4);
  EXPECT_GT(tp.metrics.critical_rank_breakdown.tensor_parallel, 0.0);
  EXPECT_GT(tp.metrics.mean_breakdown.tensor_parallel, 0.0);
  EXPECT_GT(tp.nvlink_bytes, 0.0);
  EXPECT_NEAR(tp.metrics.critical_rank_breakdown.total(), tp.metrics.iteration_seconds, 1e-9);
  // Four GPUs per group split each GEMM four ways: the layers' GEMM time per GPU shrinks although each
  // GPU now also waits on the group's collectives.
  EXPECT_LT(tp.metrics.critical_rank_breakdown.linear, plain.metrics.critical_rank_breakdown.linear);
}

}  // namespace
}  // namespace zb
