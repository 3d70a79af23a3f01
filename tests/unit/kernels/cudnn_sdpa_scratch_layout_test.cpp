// The backward's ragged layout as SdpaPlan::build gives it to cuDNN (kernels/cuda_sdpa.hpp,
// SdpaBuildOptions::graph_local_scratch and packed_inputs), checked on the host without a GPU. The first
// H200 run (docs/gpu-runs/2026-12-04-h200) gave wrong dQ, and only dQ, on the cases whose offsets were not
// the prefix sums of the entries' lengths; so every offset of every graph (Q, O, LSE, K/V and the
// gradients) must be such a prefix sum from 0, each graph's scratch rows one contiguous range, and the
// graphs' scratch ranges disjoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels {
namespace {

using cuda::ElementType;
using cuda::SdpaBuildOptions;
using cuda::SdpaGraphRows;

std::vector<SdpaGraphRows> backward_graphs(const AttentionShape& shape,
                                           const std::vector<AttentionBlockDesc>& blocks,
                                           const SdpaBuildOptions& options = {}) {
  std::vector<SdpaGraphRows> graphs;
  const Status s = cuda::sdpa_plan_graph_rows(shape, blocks, ElementType::bf16, true, options, graphs);
  EXPECT_TRUE(s.ok()) << s.message();
  return graphs;
}

// Offsets that start at 0 and grow by each entry's length: what a kernel that derives rows from the
// lengths' prefix sums and one that reads the offsets both agree on.
bool prefix_sums_from_zero(const std::vector<std::int64_t>& offsets,
                           const std::vector<std::int64_t>& counts) {
  std::int64_t next = 0;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] != next) return false;
    next += counts[i];
  }
  return true;
}

std::int64_t total(const std::vector<std::int64_t>& counts) {
  std::int64_t sum = 0;
  for (std::int64_t c : counts) sum += c;
  return sum;
}

void expect_graph_local(const std::vector<SdpaGraphRows>& graphs, const std::string& what) {
  std::vector<std::pair<std::int64_t, std::int64_t>> q_ranges, kv_ranges;
  for (std::size_t g = 0; g < graphs.size(); ++g) {
    const SdpaGraphRows& rows = graphs[g];
    EXPECT_TRUE(prefix_sums_from_zero(rows.dq_rows, rows.q_counts))
        << what << ": graph " << g << " dQ offsets";
    EXPECT_TRUE(prefix_sums_from_zero(rows.dkv_rows, rows.kv_counts))
        << what << ": graph " << g << " dK/dV offsets";
    if (rows.packed) {  // the inputs too: Q/O/LSE and K/V offsets into the packed buffers
      EXPECT_TRUE(prefix_sums_from_zero(rows.q_rows, rows.q_counts))
          << what << ": graph " << g << " Q offsets";
      EXPECT_TRUE(prefix_sums_from_zero(rows.out_rows, rows.q_counts))
          << what << ": graph " << g << " O offsets";
      EXPECT_TRUE(prefix_sums_from_zero(rows.kv_rows, rows.kv_counts))
          << what << ": graph " << g << " K/V offsets";
      EXPECT_EQ(rows.source_q_rows.size(), rows.q_counts.size()) << what;
    }
    q_ranges.emplace_back(rows.scratch_q_base, rows.scratch_q_base + total(rows.q_counts));
    kv_ranges.emplace_back(rows.scratch_kv_base, rows.scratch_kv_base + total(rows.kv_counts));
  }
  for (auto* ranges : {&q_ranges, &kv_ranges}) {
    std::sort(ranges->begin(), ranges->end());
    for (std::size_t i = 1; i < ranges->size(); ++i)
      EXPECT_LE((*ranges)[i - 1].second, (*ranges)[i].first) << what << ": two graphs share scratch rows";
  }
}

TEST(CudnnSdpaScratchLayout, GpuCheckCasesGiveEveryGraphPrefixSumOffsetsFromZero) {
  for (const gpucheck::SdpaCase& c : gpucheck::sdpa_standard_cases()) {
    const auto& blocks = c.backward_blocks.empty() ? c.blocks : c.backward_blocks;
    expect_graph_local(backward_graphs(c.shape, blocks), c.name);
    expect_graph_local(backward_graphs(c.shape, blocks, {true, true, true, true}),
                       c.name + " (one entry per call)");
    for (const SdpaGraphRows& rows : backward_graphs(c.shape, blocks)) EXPECT_TRUE(rows.packed) << c.name;
  }
}

TEST(CudnnSdpaScratchLayout, SharedScratchIsTheLayoutOfTheFirstGpuRun) {
  // The context-parallel cut mixes bottom-right and full entries in block order: with one scratch in
  // entry order across graphs, a graph's dQ offsets have gaps (the layout that measured wrong dQ).
  for (const gpucheck::SdpaCase& c : gpucheck::sdpa_standard_cases()) {
    if (c.name.rfind("context-parallel cut bf16", 0) != 0) continue;
    bool some_graph_not_prefix = false;
    for (const SdpaGraphRows& rows : backward_graphs(c.shape, c.blocks, {true, false, false, false}))
      some_graph_not_prefix |= !prefix_sums_from_zero(rows.dq_rows, rows.q_counts);
    EXPECT_TRUE(some_graph_not_prefix);
  }
}

// Random ragged backward lists as an executor packs them (each block its own Q, K/V and O rows): random
// query slices against random key ranges, causal or full, so both mask kinds interleave.
TEST(CudnnSdpaScratchLayout, RandomBlockListsOverSeeds) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const auto uniform = [&](std::int64_t lo, std::int64_t hi) {
      return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    AttentionShape shape{8, 2, 128, 0, 0, 0};
    std::vector<AttentionBlockDesc> blocks;
    const int count = static_cast<int>(uniform(1, 12));
    for (int b = 0; b < count; ++b) {
      AttentionBlockDesc d;
      d.q_position = uniform(0, 2000);
      d.q_count = uniform(1, 300);
      d.kv_position = uniform(0, d.q_position + d.q_count);
      d.kv_count = uniform(1, 400);
      d.mask = uniform(0, 3) == 0 ? AttentionMask::full : AttentionMask::causal;
      d.q_row = shape.q_tokens;
      d.kv_row = shape.kv_tokens;
      d.out_row = d.q_row;
      shape.q_tokens += d.q_count;
      shape.kv_tokens += d.kv_count;
      blocks.push_back(d);
    }
    shape.out_rows = shape.q_tokens;
    expect_graph_local(backward_graphs(shape, blocks), "seed " + std::to_string(seed));
  }
}

}  // namespace
}  // namespace zb::kernels
