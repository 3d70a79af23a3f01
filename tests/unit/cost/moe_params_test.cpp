// The cost model of a mixture-of-experts model (docs/MOE.md, "The MoE layer in the cost model"): its
// parameter counts against the figures the models' releases state, its FLOPs and GEMM shapes at balanced
// routing, and what the expert degree does to one GPU's memory, over random MoE shapes.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/common/rng.hpp"
#include "core/cost/cost_model.hpp"
#include "core/cost/iteration_cost.hpp"
#include "core/cost/model_params.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

TEST(MoeParams, MixtralHasThe46_7BParametersAnd12_9BActiveItsReleaseStates) {
  const ModelParams p = count_params(test::mixtral_8x7b());
  // Per layer: attention 4096·(4096 + 2·1024) + 4096² = 41,943,040; router 4096·8; an expert 3·4096·14336.
  const double attention = 41'943'040.0, router = 32'768.0, expert = 176'160'768.0;
  EXPECT_DOUBLE_EQ(p.stored_per_layer, attention + router + 8 * expert);
  EXPECT_DOUBLE_EQ(p.active_per_layer, attention + router + 2 * expert);
  EXPECT_DOUBLE_EQ(p.gemm_per_layer, attention + 2 * expert);
  EXPECT_NEAR(p.total / 1e9, 46.7, 0.05);
  EXPECT_NEAR(p.active / 1e9, 12.9, 0.05);
}

TEST(MoeParams, QwenMoeHasThe14_3BParametersAnd2_7BActiveItsReleaseStates) {
  const ModelParams p = count_params(test::qwen_moe_a2_7b());
  EXPECT_NEAR(p.total / 1e9, 14.3, 0.05);
  EXPECT_NEAR(p.active / 1e9, 2.7, 0.05);
}

TEST(MoeParams, ADenseModelStoresUsesAndHoldsTheSameParameters) {
  const ModelParams p = count_params(test::llama_7b());
  EXPECT_DOUBLE_EQ(p.total, 6'738'149'376.0);
  EXPECT_DOUBLE_EQ(p.active, p.total);
  EXPECT_DOUBLE_EQ(p.per_gpu, p.total);
  EXPECT_DOUBLE_EQ(p.stored_per_layer, p.gemm_per_layer);
  EXPECT_EQ(p.routed_per_gpu, 0.0);
}

TEST(MoeParams, TheExpertDegreeSplitsTheRoutedExpertsAndNothingElse) {
  const ModelSpec mixtral = test::mixtral_8x7b();
  const ModelParams whole = count_params(mixtral, 1);
  const double expert = 3.0 * 4096 * 14336;
  for (const int e : {2, 4, 8}) {
    const ModelParams split = count_params(mixtral, e);
    EXPECT_DOUBLE_EQ(split.total, whole.total) << e;
    EXPECT_DOUBLE_EQ(split.active, whole.active) << e;
    EXPECT_DOUBLE_EQ(split.per_gpu_per_layer, whole.per_gpu_per_layer - (8.0 - 8.0 / e) * expert) << e;
    EXPECT_DOUBLE_EQ(split.routed_per_gpu, mixtral.layers * 8.0 / e * expert) << e;
  }
}

// Over random MoE shapes: the GEMMs a token passes are its attention and (top-k + shared) experts; what a
// token uses is at most what is stored; a GPU holds less as the expert degree grows, never less than the
// replicated part.
TEST(MoeParams, CountsAreOrderedOverRandomShapes) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    ModelSpec m = test::llama_7b();
    m.layers = 1 + static_cast<int>(rng.below(48));
    m.heads = 1 + static_cast<int>(rng.below(32));
    m.hidden = m.heads * 64 * (1 + static_cast<int>(rng.below(3)));
    m.kv_heads = m.heads;
    m.vocab = static_cast<int>(rng.below(200'000));
    m.moe.experts = 1 << rng.below(8);  // 1 … 128
    m.moe.top_k = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(m.moe.experts)));
    m.moe.shared_experts = static_cast<int>(rng.below(5));
    m.moe.expert_ffn_hidden = 64 * (1 + static_cast<int>(rng.below(256)));
    const double h = m.hidden, expert = 3.0 * h * m.moe.expert_ffn_hidden;
    const ModelParams one = count_params(m, 1);
    EXPECT_DOUBLE_EQ(one.gemm_per_layer,
                     2.0 * h * h + 2.0 * h * m.kv_hidden() + (m.moe.top_k + m.moe.shared_experts) * expert)
        << seed;
    EXPECT_LE(one.active, one.total) << seed;
    EXPECT_DOUBLE_EQ(one.per_gpu, one.total) << seed;
    double previous = one.per_gpu;
    for (int e = 2; e <= m.moe.experts; e *= 2) {
      const ModelParams split = count_params(m, e);
      EXPECT_LT(split.per_gpu, previous) << seed << " e=" << e;
      EXPECT_GE(split.per_gpu, one.per_gpu - one.routed_per_gpu) << seed << " e=" << e;
      previous = split.per_gpu;
    }
  }
}

TEST(MoeCost, LinearFlopsAndGemmShapesAreATokensTopKAndSharedExperts) {
  const CostModel cost(test::dgx_h200(1), test::qwen_moe_a2_7b());
  // A token passes 4 routed and 4 shared experts of 1408: an FFN 11264 wide.
  const auto gemms = cost.layer_gemms();
  EXPECT_EQ(std::string(gemms[2].name), "mlp_up");
  EXPECT_DOUBLE_EQ(gemms[2].n, 2.0 * 8 * 1408);
  EXPECT_DOUBLE_EQ(gemms[3].k, 8.0 * 1408);
  double macs = 0;
  for (const CostModel::GemmShape& g : gemms) macs += g.n * g.k;
  EXPECT_DOUBLE_EQ(macs, cost.gemm_params_per_layer());
  EXPECT_DOUBLE_EQ(cost.linear_fwd_flops(1000), 2.0 * 1000 * macs);
  // The router is stored and used, but is not among the timed GEMMs.
  EXPECT_DOUBLE_EQ(cost.params().active_per_layer, macs + 2048.0 * 60);
}

TEST(MoeCost, SpreadingTheExpertsOverMoreGpusLeavesRoomForMoreTokens) {
  // Mixtral's 46.7B parameters do not fit a 141 GiB H200 whole (their bf16 weights and gradients alone
  // are 187 GB); with the experts split over the node's 8 GPUs each holds 7.2B and has room for tokens.
  const ClusterSpec node = test::dgx_h200(1);
  const CostModel whole(node, test::mixtral_8x7b(), HardwareProfile{}, 1);
  const CostModel split(node, test::mixtral_8x7b(), HardwareProfile{}, 8);
  EXPECT_LT(split.model_state_bytes_per_gpu(), whole.model_state_bytes_per_gpu() / 2);
  EXPECT_EQ(whole.token_capacity_per_gpu(), 0);
  EXPECT_GT(split.token_capacity_per_gpu(), whole.token_capacity_per_gpu());
  // A routed expert's optimizer shards over its expert-data-parallel group (8 / 8 = 1 GPU here): its
  // 12 sharded bytes per parameter stay whole on the GPU that holds it.
  const ModelParams p = count_params(test::mixtral_8x7b(), 8);
  const double dense = p.per_gpu - p.routed_per_gpu;
  EXPECT_NEAR(split.model_state_bytes_per_gpu(), p.per_gpu * 4 + 12 * (dense / 8 + p.routed_per_gpu), 1.0);
}

TEST(MoeCost, ATokenKeepsItsExpertsActivationsBesidesTheAttentions) {
  // Mixtral: 15·h outside the MLP, and for the FFN 3h + 2 routed experts of (4h + 6·14336) + 4·8 bytes
  // in place of Korthikanti's 19h: 4096·(15 + 3) + 2·(4·4096 + 6·14336) + 32 = 278,560 bytes per layer.
  const CostModel mixtral(test::dgx_h200(1), test::mixtral_8x7b());
  EXPECT_DOUBLE_EQ(mixtral.activation_bytes_per_token(), 32.0 * 278'560.0);
  // The dense model with the same attention keeps 34·h per layer: the MoE layer keeps about twice that.
  const CostModel dense(test::dgx_h200(1), test::llama3_8b());
  EXPECT_NEAR(mixtral.activation_bytes_per_token() / dense.activation_bytes_per_token(), 2.0, 0.05);
}

TEST(MoeCost, AnExpertDegreeThatDoesNotDivideTheExpertsIsAnInputErrorAtItsKey) {
  try {
    (void)CostModel(test::dgx_h200(1), test::mixtral_8x7b(), HardwareProfile{}, 3);
    FAIL() << "an expert degree of 3 for 8 experts was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.expert"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)CostModel(test::dgx_h200(1), test::llama_7b(), HardwareProfile{}, 2), Error);
}

// The gradient buckets of an MoE model: the dense parameters' over the data-parallel world as before, the
// routed experts' in buckets of their own over the expert-data-parallel group of N/(t·e) GPUs, every
// parameter a GPU holds in exactly one bucket, launched in backward order; over random expert degrees,
// tensor degrees and cluster sizes.
TEST(MoeGradientSync, RoutedExpertsSyncOverTheirExpertDataParallelGroupInBucketsOfTheirOwn) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed);
    ModelSpec m = test::mixtral_8x7b();
    m.layers = 1 + static_cast<int>(rng.below(8));
    m.moe.experts = 8 << rng.below(3);  // 8, 16, 32
    const int nodes = 1 << rng.below(4);
    const int t = 1 << rng.below(3);  // 1, 2, 4
    const int world = nodes * 8 / t;
    int e = 1 << rng.below(6);
    while (e > 1 && (m.moe.experts % e != 0 || world % e != 0)) e /= 2;
    const CostModel cost(test::dgx_h200(nodes), m, HardwareProfile{}, e);
    const WholeIterationSetup s = whole_iteration_setup(cost, t);
    EXPECT_EQ(s.expert_dp.size(), world / e) << seed;
    EXPECT_EQ(s.dp.size(), world) << seed;
    double dense = 0, routed = 0;
    int previous = 0;
    for (const GradientBucket& b : s.buckets) {
      (b.expert ? routed : dense) += b.params;
      EXPECT_GE(b.ready_after, previous) << seed;
      previous = b.ready_after;
      if (b.expert) {
        EXPECT_TRUE(b.ready_after >= 1 && b.ready_after <= m.layers) << seed;
      }
    }
    EXPECT_NEAR(routed, cost.params().routed_per_gpu / t, 1e-6 * routed) << seed;
    EXPECT_NEAR(dense + routed, s.params_per_gpu, 1e-6 * s.params_per_gpu) << seed;
  }
}

TEST(MoeGradientSync, ExpertGroupsInsideANodeOrFillingWholeNodesHaveTheirRingsStrides) {
  ModelSpec m = test::mixtral_8x7b();
  m.moe.experts = 16;
  // 4 nodes of 8, no TP: e = 4 keeps each expert group inside a node, its places every 4th GPU (2 per
  // node); e = 16 fills two nodes, so a place is the same GPU of every other node.
  const WholeIterationSetup inside =
      whole_iteration_setup(CostModel(test::dgx_h200(4), m, HardwareProfile{}, 4), 1);
  EXPECT_EQ(inside.expert_dp.members_per_node, 2);
  EXPECT_EQ(inside.expert_dp.local_stride, 4);
  EXPECT_EQ(inside.expert_dp.nodes, 4);
  const WholeIterationSetup across =
      whole_iteration_setup(CostModel(test::dgx_h200(4), m, HardwareProfile{}, 16), 1);
  EXPECT_EQ(across.expert_dp.members_per_node, 1);
  EXPECT_EQ(across.expert_dp.nodes, 2);
  EXPECT_EQ(across.expert_dp.node_stride, 2);
  // With TP 2 a node holds 4 grid ranks: e = 2 puts a place on every 4th GPU.
  const WholeIterationSetup tp =
      whole_iteration_setup(CostModel(test::dgx_h200(4), m, HardwareProfile{}, 2), 2);
  EXPECT_EQ(tp.expert_dp.members_per_node, 2);
  EXPECT_EQ(tp.expert_dp.local_stride, 4);
}

TEST(MoeGradientSync, ADenseModelHasNoExpertBuckets) {
  const WholeIterationSetup s = whole_iteration_setup(CostModel(test::dgx_h200(2), test::llama_7b()), 1);
  for (const GradientBucket& b : s.buckets) EXPECT_FALSE(b.expert);
  EXPECT_EQ(s.expert_dp.size(), s.dp.size());
}

}  // namespace
}  // namespace zb
