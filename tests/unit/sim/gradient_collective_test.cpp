// The gradient collectives timed on the SimGrid platform agree with the cost model's closed form where
// max-min sharing is exact by hand: NVLink steps alone on their links, NIC steps one GPU per NIC
// (dgx-h200) and two GPUs per NIC (a800-4nic, each at half the NIC).
#include <gtest/gtest.h>

#include "core/cost/iteration_cost.hpp"
#include "core/exec/sim/gradient_collective.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

TEST(GradientCollective, SimulatedRingStepsMatchTheClosedForm) {
  for (const int nics : {8, 4}) {
    const ClusterSpec c = sim_test::cluster(3, 8, nics);
    const CostModel cost(c, sim_test::llama_7b());
    const WholeIterationSetup setup = whole_iteration_setup(cost, 1);
    const sim::RingStepTimes step = sim::simulate_ring_steps(cost, setup, 10e6, 4e6);
    // Latency plus the default per-message overhead (1 µs, 4.5 µs), then the bytes; the two levels' messages
    // queue on separate engines of their senders, so neither waits for the other's overhead.
    EXPECT_NEAR(step.intra_node, 2e-6 + 1e-6 + 10e6 / (450e9 * 0.9), 1e-9) << nics << " NICs";
    const double share = 50e9 / (8 / nics);
    EXPECT_NEAR(step.inter_node, 5e-6 + 4.5e-6 + 4e6 / (share * 0.9), 1e-9) << nics << " NICs";
    EXPECT_NEAR(step.inter_node, inter_node_step_seconds(cost, 4e6), 1e-9);
  }
}

TEST(GradientCollective, EveryBucketAsTheFormulaChargesIt) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  const CostModel cost(c, sim_test::llama_7b());
  const WholeIterationSetup setup = whole_iteration_setup(cost, 1);
  const std::vector<BucketCollectiveSeconds> simulated = sim::simulate_bucket_seconds(cost, setup);
  ASSERT_EQ(simulated.size(), setup.buckets.size());
  for (std::size_t k = 0; k < simulated.size(); ++k) {
    const BucketCollectiveSeconds f =
        formula_bucket_seconds(cost, setup, setup.buckets[k].params * setup.bytes_per_gradient);
    EXPECT_NEAR(simulated[k].reduce_scatter, f.reduce_scatter, 1e-8 * f.reduce_scatter) << "bucket " << k;
    EXPECT_NEAR(simulated[k].all_gather, f.all_gather, 1e-8 * f.all_gather) << "bucket " << k;
  }
}

// An MoE model's routed experts sync over their expert-data-parallel group (every (t·e)-th GPU of a
// node, or the same GPU every e/(g/t)-th node): the simulated ring over that group is what the formula
// charges, for groups inside a node and groups that fill whole nodes.
TEST(GradientCollective, ExpertBucketsRunOverTheirExpertDataParallelGroupAsTheFormulaChargesThem) {
  ModelSpec moe = sim_test::llama_7b();
  moe.moe.experts = 16;
  moe.moe.top_k = 2;
  moe.moe.expert_ffn_hidden = 2048;
  const ClusterSpec c = sim_test::dgx_h200(4);
  for (const int e : {4, 8, 16}) {
    const CostModel cost(c, moe, HardwareProfile{}, e);
    const WholeIterationSetup setup = whole_iteration_setup(cost, 1);
    EXPECT_EQ(setup.expert_dp.size(), 32 / e) << "e=" << e;
    const std::vector<BucketCollectiveSeconds> simulated = sim::simulate_bucket_seconds(cost, setup);
    ASSERT_EQ(simulated.size(), setup.buckets.size());
    int experts = 0;
    for (std::size_t k = 0; k < simulated.size(); ++k) {
      const GradientBucket& b = setup.buckets[k];
      experts += b.expert ? 1 : 0;
      const BucketCollectiveSeconds f =
          formula_bucket_seconds(cost, setup, setup.group_of(b), b.params * setup.bytes_per_gradient);
      EXPECT_NEAR(simulated[k].reduce_scatter, f.reduce_scatter, 1e-8 * f.reduce_scatter)
          << "e=" << e << " bucket " << k;
      EXPECT_NEAR(simulated[k].all_gather, f.all_gather, 1e-8 * f.all_gather) << "e=" << e << " bucket " << k;
    }
    EXPECT_GT(experts, 0) << "e=" << e;
  }
}

}  // namespace
}  // namespace zb
