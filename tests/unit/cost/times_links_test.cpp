// Kernel and transfer times, and the links the planner sees (NIC sharing, routed inter-node aggregate).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/cost/iteration_cost.hpp"
#include "core/cost/pointwise_cost.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

constexpr double kPeakH200 = 989e12;
// The default sustained_compute_fraction: tensor-core kernels inside a training step run at this share of
// their standalone rate (fitted end to end, hardware_profile.cpp).
constexpr double kSustained = 0.68;

CostModel llama_7b_on(const ClusterSpec& cluster) {
  return CostModel(cluster, test::llama_7b());
}

TEST(CostTimes, AttentionTimeHasShapeTermAndOverhead) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  // At q = attention_half_tokens (256) efficiency is half of 0.60 (sustained at kSustained of that).
  EXPECT_DOUBLE_EQ(cost.attention_time(1e12, 256), 1e12 / (kPeakH200 * 0.60 * kSustained * 0.5) + 8e-6);
  // Large calls approach the full efficiency.
  const double q = 65536;
  EXPECT_DOUBLE_EQ(cost.attention_time(1e12, q),
                   1e12 / (kPeakH200 * 0.60 * kSustained * q / (q + 256)) + 8e-6);
  EXPECT_EQ(cost.attention_time(0, 4096), 0.0);
}

TEST(CostTimes, SmallChunksRunSlowerPerFlop) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  // The same pairs in 16 calls of 256 query rows take longer than in one call of 4096.
  const double one_call = cost.attention_time(cost.attention_fwd_flops(4096.0 * 4096), 4096);
  const double sixteen_calls = 16 * cost.attention_time(cost.attention_fwd_flops(256.0 * 4096), 256);
  EXPECT_GT(sixteen_calls, 1.8 * one_call);
}

// A varlen call is charged per query tile: at the equivalent query length, one call over any mix of
// tiles costs exactly what the tiles cost one by one (less their per-call overheads), for random mixes.
TEST(CostTimes, VarlenCallCostsTheSumOfItsTilesAtTheEquivalentQueryLength) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double overhead =
      cost.attention_time(1, 1e9) - 1 / (kPeakH200 * 0.60 * kSustained * 1e9 / (1e9 + 256));
  for (unsigned seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> rows(1, 131072), count(1, 40);
    EquivalentQTokens q;
    double flops = 0, separately = 0;
    for (int i = count(rng); i > 0; --i) {
      const double r = rows(rng), pairs = r * (r + 1) / 2;
      q.add(pairs, r);
      flops += cost.attention_fwd_flops(pairs);
      separately += cost.attention_time(cost.attention_fwd_flops(pairs), r) - overhead;
    }
    EXPECT_NEAR(cost.attention_time(flops, q.value()) - overhead, separately, 1e-9 * separately)
        << "seed " << seed;
  }
}

// The rule the mean length broke: a 128k document among 130 short ones runs at its own efficiency.
TEST(CostTimes, ALongDocumentKeepsItsEfficiencyAmongShortOnes) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double long_pairs = 131072.0 * 131073 / 2, short_pairs = 512.0 * 513 / 2;
  EquivalentQTokens mixed;
  mixed.add(long_pairs, 131072);
  for (int i = 0; i < 130; ++i) mixed.add(short_pairs, 512);
  const double together =
      cost.attention_time(cost.attention_fwd_flops(long_pairs + 130 * short_pairs), mixed.value());
  const double alone = cost.attention_time(cost.attention_fwd_flops(long_pairs), 131072) +
                       cost.attention_time(cost.attention_fwd_flops(130 * short_pairs), 512);
  EXPECT_NEAR(together, alone - 8e-6, 1e-9);  // one call: one overhead instead of two
}

TEST(CostTimes, FullCausal4096ForwardAttentionOnH200) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double flops = 4.0 * 4096 * (4096.0 * 4097.0 / 2.0);
  // 137.47 GFLOP at 989e12·0.6·0.68·4096/4352 = 379.8 TFLOP/s → 362.0 µs, + 8 µs.
  EXPECT_NEAR(cost.attention_time(flops, 4096), 370.0e-6, 0.1e-6);
}

TEST(CostTimes, GemmTime) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  // m = gemm_half_rows = 128: half of 0.75 efficiency (sustained at kSustained of that).
  EXPECT_DOUBLE_EQ(cost.gemm_time(128, 4096, 4096),
                   2.0 * 128 * 4096 * 4096 / (kPeakH200 * 0.75 * kSustained * 0.5) + 5e-6);
  EXPECT_EQ(cost.gemm_time(0, 4096, 4096), 0.0);
}

TEST(CostTimes, LinearTimesSumTheLayerGemmsAndItsMemoryBoundKernels) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double tokens = 8192;
  const double rate = kPeakH200 * 0.75 * kSustained * tokens / (tokens + 128);
  // Four forward GEMMs (QKV, O, gate+up, down), all with m = tokens, so their FLOPs add up to the
  // layer's linear FLOPs; backward does 2× those FLOPs in twice as many calls. Then the norms, RoPE,
  // residual adds, SwiGLU and layout copies at the streaming HBM bandwidth.
  EXPECT_NEAR(cost.linear_fwd_time(tokens),
              cost.linear_fwd_flops(tokens) / rate + 4 * 5e-6 + pointwise_fwd_time(cost, tokens), 1e-12);
  EXPECT_NEAR(cost.linear_bwd_time(tokens),
              cost.linear_bwd_flops(tokens) / rate + 8 * 5e-6 + pointwise_bwd_time(cost, tokens), 1e-12);
  EXPECT_EQ(cost.linear_fwd_time(0), 0.0);
  EXPECT_EQ(cost.linear_bwd_time(0), 0.0);
}

TEST(CostTimes, MemoryBoundKernelsByHand) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double h = 4096, f = 11008, beta = 2, bandwidth = 4.8e12 * 0.8;  // MHA: KV width = h
  // Forward: norm 2h, RoPE 2·2h, Q/K/V layout 2·3h, O layout 2h, residual 3h, norm 2h, SwiGLU 3f, residual
  // 3h.
  EXPECT_DOUBLE_EQ(pointwise_fwd_bytes_per_token(cost),
                   (2 * h + 4 * h + 6 * h + 2 * h + 3 * h + 2 * h + 3 * f + 3 * h) * beta);
  // Backward: two norms 2·3h, two residual junctions 2·3h, SwiGLU 5f, RoPE 2·2h, dO 2h, dQ/dK/dV 2·3h.
  EXPECT_DOUBLE_EQ(pointwise_bwd_bytes_per_token(cost),
                   (6 * h + 6 * h + 5 * f + 4 * h + 2 * h + 6 * h) * beta);
  EXPECT_DOUBLE_EQ(streaming_memory_bandwidth(cost), bandwidth);
  EXPECT_NEAR(pointwise_fwd_time(cost, 1000), 1000 * pointwise_fwd_bytes_per_token(cost) / bandwidth, 1e-15);
  // llama-7b: 246 kB forward, 307 kB backward per token and layer: 64 and 80 ns on an H200, against 546 and
  // 1092 ns of GEMMs at 0.75 of peak.
  EXPECT_NEAR(pointwise_fwd_time(cost, 1) * 1e9, 64.1, 0.1);
  EXPECT_NEAR(pointwise_bwd_time(cost, 1) * 1e9, 79.9, 0.1);
}

TEST(CostTimes, EachLayerGemmCarriesItsParameterShareOfTheMemoryBoundKernels) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double tokens = 3000;
  double forward = 0, backward = 0;
  for (const CostModel::GemmShape& g : cost.layer_gemms()) {
    forward += pointwise_share_fwd_time(cost, tokens, g.n, g.k);
    backward += pointwise_share_bwd_time(cost, tokens, g.n, g.k);
  }
  EXPECT_NEAR(forward, pointwise_fwd_time(cost, tokens), 1e-15);
  EXPECT_NEAR(backward, pointwise_bwd_time(cost, tokens), 1e-15);
  // Tensor parallelism 4 splits each GEMM's n (column-parallel) or k (row-parallel): each GPU carries a
  // quarter.
  const CostModel::GemmShape qkv = cost.layer_gemms()[0];
  EXPECT_NEAR(pointwise_share_fwd_time(cost, tokens, qkv.n / 4, qkv.k),
              pointwise_share_fwd_time(cost, tokens, qkv.n, qkv.k) / 4, 1e-15);
  EXPECT_EQ(pointwise_share_fwd_time(cost, 0, qkv.n, qkv.k), 0.0);
}

TEST(CostTimes, TransferTime) {
  const CostModel cost = llama_7b_on(test::dgx_h200(1));
  const double bytes = 64.0 * 1024 * 1024;  // one llama-7b KV block of 4096 tokens
  // The preset's 2 µs NVLink latency, the default 1 µs per-message overhead, the bytes at 0.9 of 450 GB/s.
  EXPECT_DOUBLE_EQ(cost.transfer_time(bytes, cost.nvlink(), LinkClass::nvlink),
                   2e-6 + 1e-6 + bytes / (450e9 * 0.9));
  EXPECT_EQ(cost.transfer_time(0, cost.nvlink(), LinkClass::nvlink), 0.0);
}

// A calibrated profile gives each link class its own efficiency and per-transfer overhead; a class left
// unset (0) runs at the shared p2p efficiency.
TEST(CostTimes, TransferTimeUsesEachLinkClassesOwnEfficiencyAndOverhead) {
  HardwareProfile profile;
  profile.nic_bandwidth_efficiency = 0.5;
  profile.nic_transfer_overhead = 30e-6;
  profile.nvlink_transfer_overhead = 1e-6;
  const ClusterSpec cluster = test::dgx_h200(2);
  const CostModel cost(cluster, test::llama_7b(), profile);
  const double bytes = 8.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(cost.transfer_time(bytes, cost.nic_per_gpu(), LinkClass::nic),
                   5e-6 + 30e-6 + bytes / (50e9 * 0.5));
  EXPECT_DOUBLE_EQ(cost.transfer_time(bytes, cost.nvlink(), LinkClass::nvlink),
                   2e-6 + 1e-6 + bytes / (450e9 * 0.9));
  EXPECT_DOUBLE_EQ(profile.nvlink_efficiency(), 0.9);
  EXPECT_DOUBLE_EQ(profile.nic_efficiency(), 0.5);
}

TEST(CostLinks, DgxH200HasOneNicPerGpu) {
  const CostModel cost = llama_7b_on(test::dgx_h200(2));
  EXPECT_EQ(cost.max_gpus_per_nic(), 1);
  EXPECT_DOUBLE_EQ(cost.nic_per_gpu().bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(cost.nic_per_gpu().latency, 5e-6);
  // 8 × 50 GB/s = 400 GB/s, below NVLink's 450 GB/s.
  EXPECT_DOUBLE_EQ(cost.routed_internode().bandwidth, 400e9);
  EXPECT_DOUBLE_EQ(cost.routed_internode().latency, 5e-6 + 2 * 2e-6);
}

TEST(CostLinks, A800TwoGpusShareOneNic) {
  const CostModel cost = llama_7b_on(test::a800_4nic(2));
  EXPECT_EQ(cost.max_gpus_per_nic(), 2);
  EXPECT_DOUBLE_EQ(cost.nic_per_gpu().bandwidth, 25e9 / 2);
  // Routing aggregates the node's 4 NICs: 100 GB/s, below the 200 GB/s NVLink.
  EXPECT_DOUBLE_EQ(cost.routed_internode().bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(cost.routed_internode().bandwidth / cost.nic_per_gpu().bandwidth, 8.0);
}

TEST(CostLinks, OversubscriptionDividesBothNicFigures) {
  ClusterSpec cluster = test::a800_4nic(2);
  cluster.oversubscription = 2.0;
  const CostModel cost = llama_7b_on(cluster);
  EXPECT_DOUBLE_EQ(cost.nic_per_gpu().bandwidth, 25e9 / 2 / 2);
  EXPECT_DOUBLE_EQ(cost.routed_internode().bandwidth, 50e9);
}

TEST(CostLinks, RoutedFlowCappedByNvlinkAndPcie) {
  ClusterSpec cluster = test::dgx_h200(2);
  cluster.nvlink.bandwidth = 300e9;
  EXPECT_DOUBLE_EQ(llama_7b_on(cluster).routed_internode().bandwidth, 300e9);
  cluster.pcie_bandwidth = 32e9;  // 8 × 32 GB/s = 256 GB/s of GPU↔NIC PCIe
  EXPECT_DOUBLE_EQ(llama_7b_on(cluster).routed_internode().bandwidth, 256e9);
}

TEST(CostLinks, UnevenMappingUsesTheMostSharedNic) {
  ClusterSpec cluster = test::a800_4nic(1);
  cluster.gpu_to_nic = {0, 0, 0, 1, 2, 2, 3, 3};
  EXPECT_EQ(llama_7b_on(cluster).max_gpus_per_nic(), 3);
  cluster.gpu_to_nic.clear();  // no mapping: spread evenly, 8 GPUs over 4 NICs
  EXPECT_EQ(llama_7b_on(cluster).max_gpus_per_nic(), 2);
}

}  // namespace
}  // namespace zb
