// What `qualify --backend cuda` and `calibrate --backend cuda` measure on a GPU (core/qualify/gpu_sweeps):
// the shapes, the FLOPs the figures divide by, the memory a shape needs, and the labels.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/link_probes.hpp"
#include "core/qualify/qualify_run.hpp"

namespace zb::qualify {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(GpuSweeps, TheDefaultSweepCoversGemmTo8192AndAttentionFrom1kTo64k) {
  const GpuComputeSweep sweep;
  EXPECT_NO_THROW(validate(sweep));
  EXPECT_EQ(sweep.gemm_sizes, (std::vector<std::int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(sweep.attention_tokens.front(), 1024);
  EXPECT_EQ(sweep.attention_tokens.back(), 65536);
  EXPECT_GE(sweep.repetitions, 5);
  EXPECT_NO_THROW(validate(GpuLinkSweep{}));
}

TEST(GpuSweeps, FlopsAreTheReferenceProbesCounts) {
  EXPECT_DOUBLE_EQ(gemm_flops(8192, 8192, 8192), 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_DOUBLE_EQ(gemm_flops(16, 4096, 11008), 2.0 * 16 * 4096 * 11008);
  // 4 · d · h · T(T+1)/2: QKᵀ and PV over the causal pairs, T = 3 has 6 pairs.
  EXPECT_DOUBLE_EQ(causal_attention_flops(3, 2, 64), 4.0 * 64 * 2 * 6);
  EXPECT_DOUBLE_EQ(causal_attention_flops(65536, 32, 128), 4.0 * 128 * 32 * 65536.0 * 65537.0 / 2);
}

TEST(GpuSweeps, EveryShapeFitsAnH200AndASmallGpuMeasuresWhatFits) {
  const GpuComputeSweep sweep;
  // 64k tokens × 32 heads × 128 in bf16 is 512 MiB per tensor: Q, K, V, O and an 8 MiB fp32 LSE.
  EXPECT_EQ(attention_probe_bytes(65536, 32, 128), 4 * (std::int64_t{512} << 20) + (std::int64_t{8} << 20));
  EXPECT_EQ(gemm_probe_bytes(8192), 3 * (std::int64_t{128} << 20));
  EXPECT_EQ(gemm_sizes_that_fit(sweep, 141 * kGiB), sweep.gemm_sizes);
  EXPECT_EQ(attention_lengths_that_fit(sweep, 141 * kGiB), sweep.attention_tokens);
  // Half of 2 GiB: 16k tokens take 514 MiB, 32k 1028 MiB.
  EXPECT_EQ(attention_lengths_that_fit(sweep, 2 * kGiB),
            (std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(gemm_sizes_that_fit(sweep, 2 * kGiB), sweep.gemm_sizes);
}

TEST(GpuSweeps, ABadSweepNamesItsField) {
  GpuComputeSweep unsorted;
  unsorted.attention_tokens = {4096, 1024};
  EXPECT_THAT([&] { validate(unsorted); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("attention_tokens")));
  GpuComputeSweep odd_head;
  odd_head.head_dim = 100;
  EXPECT_THAT([&] { validate(odd_head); }, testing::ThrowsMessage<Error>(testing::HasSubstr("head_dim")));
  GpuLinkSweep no_repetitions;
  no_repetitions.repetitions = 0;
  EXPECT_THAT([&] { validate(no_repetitions); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("repetitions")));
  try {
    validate(unsorted);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
}

TEST(GpuSweeps, LabelsSayTheShape) {
  EXPECT_EQ(gemm_shape_label(8192), "m=n=k=8192");
  EXPECT_EQ(attention_shape_label(16384, 32, 128), "causal 16384 tokens, 32×128");
  EXPECT_EQ(transfer_shape_label(std::int64_t{256} << 20), "256 MiB");
  EXPECT_EQ(transfer_shape_label(64 << 10), "64 KiB");
  EXPECT_EQ(transfer_shape_label(8), "8 B");
}

TEST(GpuSweeps, TheMedianIsATimeThatHappened) {
  EXPECT_DOUBLE_EQ(median_time({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_time({4, 1, 3, 2}), 2);  // the lower middle one, not 2.5
  EXPECT_DOUBLE_EQ(median_time({}), 0);
}

TEST(GpuSweeps, TheReportKeepsTheSweepsOrderOfShapes) {
  std::vector<Measurement> all;
  for (const int gpu : {0, 1})
    for (const std::int64_t tokens : {2048, 16384})
      all.push_back({.probe = Probe::attention,
                     .subject = "GPU",
                     .shape = attention_shape_label(tokens, 32, 128),
                     .node = 0,
                     .gpu = gpu});
  all.insert(
      all.begin(),
      Measurement{.probe = Probe::p2p_intra, .subject = "node 0 GPU 0 → node 0 GPU 1", .shape = "256 MiB"});
  order_for_report(all);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].shape, "causal 2048 tokens, 32×128");  // not "causal 16384 …", which sorts first as text
  EXPECT_EQ(all[0].gpu, 0);
  EXPECT_EQ(all[1].gpu, 1);
  EXPECT_EQ(all[2].shape, "causal 16384 tokens, 32×128");
  EXPECT_EQ(all[4].probe, Probe::p2p_intra);  // links after the compute figures
}

TEST(RoutedPaths, OnePathPerNicThroughTheFirstGpuMappedToIt) {
  ClusterSpec dgx;
  dgx.nodes = 2;
  dgx.gpus_per_node = 8;
  dgx.nics_per_node = 8;
  dgx.gpu_to_nic = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto paths = routed_paths(dgx);
  ASSERT_EQ(paths.size(), 8u);
  EXPECT_EQ(paths[0], (std::vector<int>{0, 8}));  // GPU 0's own NIC: direct
  EXPECT_EQ(paths[3], (std::vector<int>{0, 3, 11, 8}));
  ClusterSpec shared = dgx;  // two GPUs per NIC (a800-4nic)
  shared.nics_per_node = 4;
  shared.gpu_to_nic = {0, 0, 1, 1, 2, 2, 3, 3};
  const auto four = routed_paths(shared);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[1], (std::vector<int>{0, 2, 10, 8}));
}

}  // namespace
}  // namespace zb::qualify
