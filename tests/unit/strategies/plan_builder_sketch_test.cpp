// PlanBuilder's compute-only sketch (set_compute_only), as a specification. Given the same calls it writes
// the whole build's compute ops (kind, name and sizes, in the same order on every rank) and the same
// layouts, and no transfer, collective or route; so its predicted_floor is the whole plan's, which is what
// lets Zeppelin's planner bound a candidate before building it (core/strategies/zeppelin/zeppelin.cpp).
// Random micro-batches written the way Zeppelin writes them: local sequences, intra-node rings, a routed
// inter-node ring and a head-parallel group (Ulysses or USP), the remap both ways and the engine filling
// ring waits with local calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "core/strategies/head_parallel.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/zeppelin/engine.hpp"
#include "core/strategies/zeppelin/remap.hpp"
#include "core/strategies/zeppelin/routing.hpp"
#include "support.hpp"

namespace zb {
namespace {

bool is_compute(const plan::Op& op) {
  return op.kind == plan::OpKind::attention || op.kind == plan::OpKind::gemm;
}

// Two micro-batches on 4 nodes of 8 GPUs: per micro-batch an inter-node ring over nodes 0-1, one or two
// intra-node rings on nodes 2-3 of random degree, a head-parallel group on nodes 2-3, and up to four local
// sequences per GPU.
plan::Plan random_plan(const CostModel& cost, std::uint32_t seed, bool compute_only) {
  std::mt19937 rng(seed);
  const auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int world = cost.cluster().world_size(), gpn = cost.cluster().gpus_per_node;
  PlanBuilder b(cost, "zeppelin", "zeppelin");
  b.set_compute_only(compute_only);
  zeppelin::Router router(cost.cluster());
  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  for (int mb = 0; mb < 2; ++mb) {
    std::vector<int> rings, locals;
    std::vector<int> inter;
    for (int r = 0; r < 2 * gpn; ++r) inter.push_back(r);
    rings.push_back(
        b.add_group(plan::Level::inter_node, inter, {b.add_sequence(pick(40000, 90000), mb)}, mb));
    for (int node = 2; node < 4; ++node) {
      for (int ring = 0; ring < pick(1, 2); ++ring) {
        std::vector<int> members(static_cast<std::size_t>(gpn));
        for (int i = 0; i < gpn; ++i) members[static_cast<std::size_t>(i)] = node * gpn + i;
        std::shuffle(members.begin(), members.end(), rng);
        members.resize(static_cast<std::size_t>(pick(2, gpn)));
        std::sort(members.begin(), members.end());
        std::vector<int> seqs;
        for (int s = 0; s < pick(1, 3); ++s) seqs.push_back(b.add_sequence(pick(8000, 30000), mb));
        rings.push_back(b.add_group(plan::Level::intra_node, members, seqs, mb));
      }
    }
    for (int r = 0; r < world; ++r) {
      std::vector<int> seqs;
      for (int s = 0; s < pick(0, 4); ++s) seqs.push_back(b.add_sequence(pick(64, 6000), mb));
      if (!seqs.empty()) locals.push_back(b.add_group(plan::Level::local, {r}, seqs, mb));
    }
    // A head-parallel group among the rings, as `heads: auto` places one: plain Ulysses on four GPUs of
    // node 3, or USP's two u-groups of four on nodes 2 and 3 (its ring between them routed).
    const int ring_of_slices = pick(1, 2);
    std::vector<int> members;
    for (int q = 0; q < ring_of_slices; ++q)
      for (int m = 0; m < 4; ++m) members.push_back((3 - ring_of_slices + 1 + q) * gpn + m);
    std::vector<int> hp_seqs;
    for (int s = 0; s < pick(1, 2); ++s) hp_seqs.push_back(b.add_sequence(pick(20000, 60000), mb));
    HeadParallelGroup hp =
        add_head_parallel_group(b, cost, {4, ring_of_slices, cost.model().kv_heads}, members, hp_seqs, mb);
    const int hp_id = ring_of_slices == 1 ? hp.u_groups.front() : hp.rings.front();
    std::map<int, HeadParallelGroup> heads{{hp_id, std::move(hp)}};
    rings.push_back(hp_id);
    std::vector<int> groups = rings;
    groups.insert(groups.end(), locals.begin(), locals.end());

    std::vector<std::vector<plan::Shard>> attn(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
      for (const auto& s : b.plan().attention_layout[static_cast<std::size_t>(r)].shards) {
        if (b.plan().sequences[static_cast<std::size_t>(s.seq)].micro_batch == mb)
          attn[static_cast<std::size_t>(r)].push_back(s);
      }
    }
    const zeppelin::RemapPlan remap = zeppelin::balance_tokens(attn, gpn);
    std::vector<int> ready(static_cast<std::size_t>(world), -1);
    std::vector<std::vector<int>> after_qkv(static_cast<std::size_t>(world));
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(world), 0);
    for (int r = 0; r < world; ++r) {
      for (const auto& s : remap.linear[static_cast<std::size_t>(r)])
        tokens[static_cast<std::size_t>(r)] += s.size();
      const int prev = last_op[static_cast<std::size_t>(r)];
      ready[static_cast<std::size_t>(r)] =
          b.add_qkv_gemm(r, tokens[static_cast<std::size_t>(r)],
                         prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
      after_qkv[static_cast<std::size_t>(r)] = {ready[static_cast<std::size_t>(r)]};
    }
    const auto to_attention =
        b.add_remap(remap.moves, plan::RemapDirection::to_attention, after_qkv, cost.qkv_bytes(1), mb);
    for (int r = 0; r < world; ++r) {
      if (to_attention[static_cast<std::size_t>(r)] >= 0)
        ready[static_cast<std::size_t>(r)] = to_attention[static_cast<std::size_t>(r)];
    }
    const auto route = [&](int src, int dst, std::int64_t bytes, int step) {
      return router.route(src, dst, bytes, mb * 1'000'000 + step);
    };
    const auto attention = zeppelin::emit_attention(b, cost, {}, groups, ready, route, heads);
    const auto to_linear =
        b.add_remap(remap.moves, plan::RemapDirection::to_linear, attention, cost.hidden_bytes(1), mb);
    for (int r = 0; r < world; ++r) {
      std::vector<int> deps = attention[static_cast<std::size_t>(r)];
      if (to_linear[static_cast<std::size_t>(r)] >= 0) deps.push_back(to_linear[static_cast<std::size_t>(r)]);
      last_op[static_cast<std::size_t>(r)] =
          b.add_output_gemms(r, tokens[static_cast<std::size_t>(r)], deps, mb);
      b.add_linear_shards(r, remap.linear[static_cast<std::size_t>(r)]);
    }
    b.add_remap_moves(remap.moves);
  }
  b.set_micro_batches(2);
  return b.finish_unpredicted();
}

std::vector<std::int64_t> shard_tokens(const std::vector<plan::RankLayout>& layout) {
  std::vector<std::int64_t> out;
  for (const auto& rank : layout) out.push_back(rank.tokens());
  return out;
}

TEST(PlanBuilderSketch, WritesTheWholeBuildsComputeAndLayoutsAndNothingElse) {
  const Scenario s = test::preset_scenario("dgx-h200", 4, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    const plan::Plan whole = random_plan(cost, seed, false);
    const plan::Plan sketch = random_plan(cost, seed, true);
    std::size_t transfers = 0;
    ASSERT_EQ(whole.ranks.size(), sketch.ranks.size());
    for (std::size_t r = 0; r < whole.ranks.size(); ++r) {
      std::vector<const plan::Op*> compute;
      for (const plan::Op& op : whole.ranks[r].ops) {
        if (is_compute(op))
          compute.push_back(&op);
        else
          ++transfers;
      }
      const auto& mine = sketch.ranks[r].ops;
      ASSERT_EQ(mine.size(), compute.size()) << "seed " << seed << ", rank " << r;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const plan::Op& a = *compute[i];
        const plan::Op& o = mine[i];
        EXPECT_TRUE(is_compute(o)) << "seed " << seed << ", rank " << r << ": the sketch wrote " << o.name;
        EXPECT_EQ(o.kind, a.kind) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.name, a.name) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.pairs, a.pairs) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.q_tokens, a.q_tokens) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_TRUE(o.heads.begin == a.heads.begin && o.heads.end == a.heads.end)
            << "seed " << seed << ", rank " << r << ", op " << i << ": heads";
        EXPECT_EQ(o.blocks.size(), a.blocks.size()) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.m, a.m) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.n, a.n) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.k, a.k) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.step, a.step) << "seed " << seed << ", rank " << r << ", op " << i;
        EXPECT_EQ(o.micro_batch, a.micro_batch) << "seed " << seed << ", rank " << r << ", op " << i;
      }
    }
    EXPECT_GT(transfers, 0U) << "seed " << seed << ": the whole build wrote no transfer to leave out";
    EXPECT_EQ(shard_tokens(sketch.attention_layout), shard_tokens(whole.attention_layout)) << "seed " << seed;
    EXPECT_EQ(shard_tokens(sketch.linear_layout), shard_tokens(whole.linear_layout)) << "seed " << seed;
    // Exactly, not within a tolerance: the planner skips by this number, and the plans must not change.
    EXPECT_EQ(predicted_floor(sketch, cost, Passes::fwd_bwd), predicted_floor(whole, cost, Passes::fwd_bwd))
        << "seed " << seed;
    EXPECT_GT(predicted_floor(whole, cost, Passes::fwd_bwd), 0.0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace zb
