// The gradient buckets sharing the NICs with the layers' traffic (docs/METRICS.md, "The whole
// iteration"): the max-min shares, hand-computed overlaps, no change where the layers use no NIC or the
// profile's interference is off, and the compute multipliers of the simulator's jitter.
#include <gtest/gtest.h>

#include "core/cost/iteration_cost.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

using test::dgx_h200;
using test::llama_7b;

std::vector<BucketCollectiveSeconds> formula_seconds(const CostModel& cost, const WholeIterationSetup& s) {
  return formula_buckets_seconds(cost, s);
}

// Two layers of 1 s, nothing else (no embedding or head: no ranks), one all-NIC bucket of `seconds`
// ready after the first layer, all-reduce (no forward gathers).
WholeIterationSetup two_layers() {
  WholeIterationSetup s;
  s.layers = 2;
  s.sync = GradientSync::all_reduce;
  s.buckets = {{1.0, 1}};
  return s;
}

BucketCollectiveSeconds all_nic(double seconds, double fixed_share = 0) {
  BucketCollectiveSeconds b;
  b.reduce_scatter = b.reduce_scatter_nic = seconds;
  b.nic_fixed_share = fixed_share;
  return b;
}

HardwareProfile interference(bool on) {
  HardwareProfile p;
  p.interference = on ? 1 : 0;
  return p;
}

TEST(GradSyncSharing, MaxMinShares) {
  EXPECT_DOUBLE_EQ(nic_sharing(0).bucket_share, 1.0);
  EXPECT_DOUBLE_EQ(nic_sharing(0).layer_rate, 1.0);
  // The layers leave 70 %: the bucket takes it, the layers keep their pace.
  EXPECT_DOUBLE_EQ(nic_sharing(0.3).bucket_share, 0.7);
  EXPECT_DOUBLE_EQ(nic_sharing(0.3).layer_rate, 1.0);
  // Both could fill it: half each, the layers lose the 30 % the bucket takes beyond their idle 20 %.
  EXPECT_DOUBLE_EQ(nic_sharing(0.8).bucket_share, 0.5);
  EXPECT_DOUBLE_EQ(nic_sharing(0.8).layer_rate, 0.7);
  EXPECT_DOUBLE_EQ(nic_sharing(1.0).layer_rate, 0.5);
  EXPECT_DOUBLE_EQ(nic_busy_fraction({1e9, 3e9}, 4e9, 1.0), 0.75);
  EXPECT_DOUBLE_EQ(nic_busy_fraction({9e9}, 4e9, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(nic_busy_fraction({}, 4e9, 1.0), 0.0);
}

TEST(GradSyncSharing, HandComputedOverlap) {
  const CostModel cost(dgx_h200(2), llama_7b(), interference(true));
  const WholeIterationSetup s = two_layers();
  // Idle network: the bucket runs in [1, 2) beside the second layer, nothing exposed.
  const WholeIterationParts idle = whole_iteration_parts(cost, s, {}, {1.0, 1.0}, {all_nic(1.0)});
  EXPECT_DOUBLE_EQ(idle.gradient_sync_exposed, 0.0);
  // The layers keep a quarter of the NIC busy: the bucket gets 3/4 while the second layer runs (3/4 of its
  // work by t = 2), then the whole NIC for the last quarter: it ends at 2.25; the layers lose nothing.
  const WholeIterationParts light = whole_iteration_parts(cost, s, {}, {1.0, 1.0, 0.0, 0.25}, {all_nic(1.0)});
  EXPECT_NEAR(light.gradient_sync_exposed, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(light.gradient_sync_contention, 0.0);
  // Saturated: each gets half; the second layer and the bucket both take 2 s, ending at 3 instead of 2.
  const WholeIterationParts full = whole_iteration_parts(cost, s, {}, {1.0, 1.0, 0.0, 1.0}, {all_nic(1.0)});
  EXPECT_NEAR(full.gradient_sync_exposed, 1.0, 1e-12);
  EXPECT_NEAR(full.gradient_sync_contention, 1.0, 1e-12);
  // Half the step is latency and overhead, which sharing does not stretch: the bucket's pace is
  // 1 / (1/2 + (1/2)/(1/2)) = 2/3 while it overlaps the layer, so it ends at 1 + 1.5 = 2.5; the layer has
  // done 0.75 by then at pace 1/2 and ends at 2.75.
  const WholeIterationParts fixed =
      whole_iteration_parts(cost, s, {}, {1.0, 1.0, 0.0, 1.0}, {all_nic(1.0, 0.5)});
  EXPECT_NEAR(fixed.gradient_sync_exposed, 0.75, 1e-12);
  EXPECT_NEAR(fixed.gradient_sync_contention, 0.75, 1e-12);
  // A bucket longer than the layer it overlaps: sharing only while they overlap. u = 1, bucket 3 s from
  // t = 1: both at half pace until the layer ends at 3 (the bucket has done 1 s), then the bucket alone
  // for 2 s more: ends at 5 against 4 on an idle network.
  const WholeIterationParts longer = whole_iteration_parts(cost, s, {}, {1.0, 1.0, 0.0, 1.0}, {all_nic(3.0)});
  EXPECT_NEAR(longer.gradient_sync_exposed, 3.0, 1e-12);
  EXPECT_NEAR(whole_iteration_parts(cost, s, {}, {1.0, 1.0}, {all_nic(3.0)}).gradient_sync_exposed, 2.0,
              1e-12);
}

TEST(GradSyncSharing, OverlapMakesTheIterationSlowerThanTheIndependentModel) {
  const CostModel cost(dgx_h200(2), llama_7b(), interference(true));
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const std::vector<double> tokens(16, 8192);
  const auto seconds = formula_seconds(cost, s);
  // Short layers, so the buckets overlap them and stay partly exposed.
  const LayerWindow idle{2e-3, 5e-3};
  LayerWindow busy = idle;
  busy.forward_nic_busy = 0.6;
  busy.backward_nic_busy = 0.9;
  const WholeIterationParts a = whole_iteration_parts(cost, s, tokens, idle, seconds);
  const WholeIterationParts b = whole_iteration_parts(cost, s, tokens, busy, seconds);
  EXPECT_GT(b.gradient_sync_exposed, a.gradient_sync_exposed);
  EXPECT_GT(b.gradient_sync_contention, 0.0);
  EXPECT_GT(b.added_seconds(), a.added_seconds());
  EXPECT_EQ(b.gradient_sync_total, a.gradient_sync_total);  // the collectives themselves are as before
  // More NIC traffic in the layers, never less exposed.
  LayerWindow busier = busy;
  busier.backward_nic_busy = 1.0;
  EXPECT_GE(whole_iteration_parts(cost, s, tokens, busier, seconds).gradient_sync_exposed,
            b.gradient_sync_exposed);
}

TEST(GradSyncSharing, NoNicTrafficInTheLayersOrInterferenceOffChangesNothing) {
  const std::vector<double> tokens(16, 8192);
  const CostModel on(dgx_h200(2), llama_7b(), interference(true));
  const CostModel off(dgx_h200(2), llama_7b(), interference(false));
  const WholeIterationSetup s = whole_iteration_setup(on, 1);
  const auto seconds = formula_seconds(on, s);
  const LayerWindow idle{2e-3, 5e-3};
  LayerWindow busy = idle;
  busy.forward_nic_busy = busy.backward_nic_busy = 0.9;
  const WholeIterationParts reference = whole_iteration_parts(on, s, tokens, idle, seconds);
  EXPECT_GT(reference.embedding_and_head_critical, 0.0);
  // Interference off: the layers' NIC traffic is ignored, the figures are the independent model's, bit for
  // bit.
  const WholeIterationParts ablation = whole_iteration_parts(off, s, tokens, busy, seconds);
  const WholeIterationParts ablation_idle = whole_iteration_parts(off, s, tokens, idle, seconds);
  EXPECT_EQ(ablation.gradient_sync_exposed, ablation_idle.gradient_sync_exposed);
  EXPECT_EQ(ablation.gradient_sync_contention, 0.0);
  EXPECT_EQ(ablation_idle.gradient_sync_exposed, reference.gradient_sync_exposed);
  EXPECT_EQ(reference.gradient_sync_contention, 0.0);
  // One node: the buckets use no NIC, so the layers' (nonexistent) NIC traffic changes nothing either.
  const CostModel one(dgx_h200(1), llama_7b(), interference(true));
  const WholeIterationSetup s1 = whole_iteration_setup(one, 1);
  const auto seconds1 = formula_seconds(one, s1);
  const std::vector<double> tokens8(8, 8192);
  EXPECT_EQ(whole_iteration_parts(one, s1, tokens8, busy, seconds1).gradient_sync_exposed,
            whole_iteration_parts(one, s1, tokens8, idle, seconds1).gradient_sync_exposed);
}

TEST(GradSyncSharing, FormulaSplitsTheNicSteps) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const BucketCollectiveSeconds b = formula_bucket_seconds(cost, s, 80e6);
  const double nic_step = 9.5e-6 + 5e6 / (50e9 * 0.9);
  EXPECT_NEAR(b.reduce_scatter_nic, nic_step, 1e-15);
  EXPECT_NEAR(b.all_gather_nic, nic_step, 1e-15);
  EXPECT_NEAR(b.nic_fixed_share, 9.5e-6 / nic_step, 1e-12);
  const CostModel one(dgx_h200(1), llama_7b());
  EXPECT_EQ(formula_bucket_seconds(one, whole_iteration_setup(one, 1), 80e6).reduce_scatter_nic, 0.0);
}

TEST(GradSyncSharing, ComputeMultipliersScaleEachRanksEmbeddingHeadAndTheOptimizer) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const std::vector<double> tokens(16, 8192);
  const auto seconds = formula_seconds(cost, s);
  const WholeIterationParts plain = whole_iteration_parts(cost, s, tokens, {2e-3, 5e-3}, seconds);
  std::vector<double> m(16, 1.0);
  m[3] = 1.5;
  m[7] = 0.9;
  const WholeIterationParts scaled = whole_iteration_parts(cost, s, tokens, {2e-3, 5e-3}, seconds, m);
  EXPECT_DOUBLE_EQ(scaled.embedding_and_head[3], 1.5 * plain.embedding_and_head[3]);
  EXPECT_DOUBLE_EQ(scaled.embedding_and_head[7], 0.9 * plain.embedding_and_head[7]);
  EXPECT_DOUBLE_EQ(scaled.embedding_and_head_critical, 1.5 * plain.embedding_and_head_critical);
  EXPECT_DOUBLE_EQ(scaled.optimizer, 1.5 * plain.optimizer);
  // All ones: the same figures.
  const WholeIterationParts ones =
      whole_iteration_parts(cost, s, tokens, {2e-3, 5e-3}, seconds, std::vector<double>(16, 1.0));
  EXPECT_EQ(ones.embedding_and_head_critical, plain.embedding_and_head_critical);
  EXPECT_EQ(ones.optimizer, plain.optimizer);
  EXPECT_EQ(ones.gradient_sync_exposed, plain.gradient_sync_exposed);
}

}  // namespace
}  // namespace zb
