// The whole-iteration parts (core/cost/iteration_cost.hpp) against hand-computed values: Megatron's
// buckets, the embedding and head, the optimizer step, and how much of the gradient synchronisation the
// backward and the next forward hide.
#include <gtest/gtest.h>

#include <numeric>

#include "core/config/presets.hpp"
#include "core/cost/iteration_cost.hpp"

namespace zb {
namespace {

ClusterSpec dgx_h200(int nodes) {
  ClusterSpec c = find_cluster_preset("dgx-h200")->spec;
  c.nodes = nodes;
  return c;
}

ModelSpec llama_7b() {
  return find_model_preset("llama-7b")->spec;
}

std::vector<BucketCollectiveSeconds> formula_seconds(const CostModel& cost, const WholeIterationSetup& s) {
  std::vector<BucketCollectiveSeconds> out;
  for (const GradientBucket& b : s.buckets)
    out.push_back(formula_bucket_seconds(cost, s, b.params * s.bytes_per_gradient));
  return out;
}

TEST(WholeIteration, BucketsFollowMegatronsDefaultAndCoverEveryParameter) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  EXPECT_EQ(s.dp.members_per_node, 8);
  EXPECT_EQ(s.dp.nodes, 2);
  EXPECT_DOUBLE_EQ(s.bucket_params, 40e6);  // max(40M, 1M · 16)
  const double params = std::accumulate(s.buckets.begin(), s.buckets.end(), 0.0,
                                        [](double a, const GradientBucket& b) { return a + b.params; });
  EXPECT_NEAR(params, cost.total_params(), 1.0);
  EXPECT_EQ(s.buckets.size(), static_cast<std::size_t>(std::ceil(cost.total_params() / 40e6)));
  // The LM head (32000 · 4096 = 131M parameters) fills the first three buckets alone; the embedding is last.
  EXPECT_EQ(s.buckets[0].ready_after, 0);
  EXPECT_EQ(s.buckets[2].ready_after, 0);
  EXPECT_EQ(s.buckets[3].ready_after, 1);
  EXPECT_EQ(s.buckets.back().ready_after, cost.model().layers + 1);
  // 64 data-parallel GPUs: 1M per rank exceeds 40M.
  EXPECT_DOUBLE_EQ(whole_iteration_setup(CostModel(dgx_h200(8), llama_7b()), 1).bucket_params, 64e6);
}

TEST(WholeIteration, HierarchicalRingStepsByFormula) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const double bytes = 80e6;
  const BucketCollectiveSeconds b = formula_bucket_seconds(cost, s, bytes);
  // 7 NVLink steps of 10 MB, then 1 NIC step of 5 MB (each GPU on its own 50 GB/s NIC), at 90 % of nominal;
  // each step pays its link's latency (2 µs, 5 µs) and the default per-message overhead (1 µs, 4.5 µs).
  const double expected = 7 * (3e-6 + 10e6 / (450e9 * 0.9)) + (9.5e-6 + 5e6 / (50e9 * 0.9));
  EXPECT_NEAR(b.reduce_scatter, expected, 1e-12);
  EXPECT_DOUBLE_EQ(b.all_gather, b.reduce_scatter);
  // One node: no NIC step.
  const CostModel one(dgx_h200(1), llama_7b());
  EXPECT_NEAR(formula_bucket_seconds(one, whole_iteration_setup(one, 1), bytes).reduce_scatter,
              7 * (3e-6 + 10e6 / (450e9 * 0.9)), 1e-12);
}

TEST(WholeIteration, EmbeddingHeadAndOptimizerByHand) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const double tokens = 65536;
  const std::vector<double> per_rank(16, tokens);
  const WholeIterationParts p =
      whole_iteration_parts(cost, s, per_rank, {1.0, 2.0}, formula_seconds(cost, s));
  const double h = 4096, v = 32000, beta = 2, bw = 4.8e12 * 0.8;
  const double gemm = cost.gemm_time(tokens, v, h);
  const double overhead = cost.profile().gemm_call_overhead;
  const double expected = 2 * tokens * h * beta / bw                      // lookup
                          + 2 * tokens * h * beta / bw                    // final RMSNorm
                          + gemm + tokens * v * (beta + 8) / bw           // logits, loss forward
                          + tokens * v * (4 + beta) / bw                  // loss backward
                          + 2 * (gemm - overhead) + 2 * overhead          // dgrad + wgrad
                          + 3 * tokens * h * beta / bw                    // final RMSNorm backward
                          + (3 * tokens * h * beta + v * h * beta) / bw;  // scatter-add, dense gradient
  EXPECT_NEAR(p.embedding_and_head_critical, expected, 1e-12);
  EXPECT_NEAR(p.embedding_and_head[5], expected, 1e-12);
  EXPECT_DOUBLE_EQ(p.head_flops, 16 * 3 * 2 * tokens * h * v);
  // ZeRO-1 over 16 GPUs: Adam reads and writes 12 bytes of fp32 state, reads the gradient, writes the weight.
  EXPECT_NEAR(p.optimizer, cost.total_params() / 16 * 28 / bw, 1e-12);
  EXPECT_DOUBLE_EQ(p.added_seconds(), p.embedding_and_head_critical + p.gradient_sync_exposed + p.optimizer);
}

TEST(WholeIteration, LongLayersHideAllButTheLastBucketsOfEachPass) {
  const CostModel cost(dgx_h200(2), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const auto seconds = formula_seconds(cost, s);
  const std::vector<double> tokens(16, 0.0);  // no embedding or head work: only the layers hide collectives
  const WholeIterationParts p = whole_iteration_parts(cost, s, tokens, {10.0, 20.0}, seconds);
  // What nothing can hide: the buckets of the first layer and the input embedding, complete only when the
  // backward ends, and their all-gathers, which the forward needs before it starts. Without tokens the
  // embedding's backward only writes its dense gradient, which hides that much of the first layer's.
  double tail = 0;
  for (std::size_t k = 0; k < s.buckets.size(); ++k) {
    if (s.buckets[k].ready_after >= s.layers) tail += seconds[k].reduce_scatter + seconds[k].all_gather;
  }
  const double dense_gradient_write = 32000.0 * 4096 * 2 / (4.8e12 * 0.8);
  EXPECT_GT(tail, dense_gradient_write);
  EXPECT_NEAR(p.gradient_sync_exposed, tail - dense_gradient_write, 1e-12);
  double total = 0;
  for (const auto& b : seconds) total += b.reduce_scatter + b.all_gather;
  EXPECT_NEAR(p.gradient_sync_total, total, 1e-12);
  // Layers too short to hide anything: everything but what the head's and embedding's compute overlaps.
  const WholeIterationParts bare = whole_iteration_parts(cost, s, tokens, {1e-9, 1e-9}, seconds);
  EXPECT_GT(bare.gradient_sync_exposed, 0.99 * total - 100 * 2e-9);
  EXPECT_LE(bare.gradient_sync_exposed, total);
}

TEST(WholeIteration, GradientSyncGrowsWithTheDataParallelWorldAndTheModel) {
  const auto total_for = [](const ClusterSpec& c, const ModelSpec& m) {
    const CostModel cost(c, m);
    const WholeIterationSetup s = whole_iteration_setup(cost, 1);
    return whole_iteration_parts(cost, s, std::vector<double>(static_cast<std::size_t>(c.world_size()), 0.0),
                                 {1e-3, 1e-3}, formula_seconds(cost, s))
        .gradient_sync_exposed;
  };
  const double two = total_for(dgx_h200(2), llama_7b());
  EXPECT_GT(total_for(dgx_h200(8), llama_7b()), two);  // (n−1)/n of the shard crosses NICs
  EXPECT_GT(total_for(dgx_h200(2), find_model_preset("llama-13b")->spec), 1.5 * two);  // ~2× the parameters
}

TEST(WholeIteration, PlainDataParallelAllReducesAndStepsEveryParameter) {
  HardwareProfile replicated;
  replicated.model_state_shards = 1;
  const CostModel cost(dgx_h200(2), llama_7b(), replicated);
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  EXPECT_EQ(s.sync, GradientSync::all_reduce);
  const BucketCollectiveSeconds b = formula_bucket_seconds(cost, s, 80e6);
  const CostModel zero1(dgx_h200(2), llama_7b());
  const BucketCollectiveSeconds z = formula_bucket_seconds(zero1, whole_iteration_setup(zero1, 1), 80e6);
  EXPECT_NEAR(b.reduce_scatter, z.reduce_scatter + z.all_gather, 1e-15);
  EXPECT_EQ(b.all_gather, 0.0);
  const WholeIterationParts p =
      whole_iteration_parts(cost, s, std::vector<double>(16, 0.0), {1.0, 1.0}, formula_seconds(cost, s));
  EXPECT_NEAR(p.optimizer, cost.total_params() * 28 / (4.8e12 * 0.8), 1e-12);
}

TEST(WholeIteration, ForwardOnlyHasNoBackwardPartsAndTheSlowestRankSetsTheHead) {
  const CostModel cost(dgx_h200(1), llama_7b());
  const WholeIterationSetup s = whole_iteration_setup(cost, 1);
  const WholeIterationParts p =
      whole_iteration_parts(cost, s, {1000, 4000, 0, 0, 0, 0, 0, 0}, {1.0, 0.0}, {});
  EXPECT_EQ(p.gradient_sync_exposed, 0.0);
  EXPECT_EQ(p.optimizer, 0.0);
  EXPECT_DOUBLE_EQ(p.embedding_and_head_critical, p.embedding_and_head[1]);
  EXPECT_GT(p.embedding_and_head[1], p.embedding_and_head[0]);
  EXPECT_EQ(p.embedding_and_head[2], 0.0);
  EXPECT_DOUBLE_EQ(p.head_flops, 2.0 * 5000 * 4096 * 32000);
}

}  // namespace
}  // namespace zb
