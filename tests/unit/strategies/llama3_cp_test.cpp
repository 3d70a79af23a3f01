// llama3-cp as a specification (docs/STRATEGIES.md "llama3-cp"): CP groups of C consecutive ranks, every
// document zigzag-sharded over its group, one K/V all-gather per rank and pack that the attention waits
// for, each query chunk against every earlier key of its document, the gathered K/V counted in memory,
// auto = the smallest power of two whose group holds the longest document, documents dealt as
// uniform-cp deals them; lowered, the backward re-gathers K/V and reduce-scatters dK/dV.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

struct Planned {
  Scenario scenario;
  CostModel cost;
  plan::Plan plan;
  Planned(Scenario s, const SystemSpec& sys, std::vector<std::int64_t> lengths)
      : scenario(std::move(s)), cost(scenario.cluster, scenario.model) {
    plan = make_strategy(sys, scenario, cost)->make_plan(test::batch_of(std::move(lengths)));
  }
};

Scenario two_nodes() {
  return test::preset_scenario("dgx-h200", 2, "llama-7b");
}
std::int64_t capacity_of(const Scenario& s) {
  return CostModel(s.cluster, s.model).token_capacity_per_gpu();
}

const plan::Op* find_op(const plan::RankOps& r, plan::OpKind kind, int micro_batch) {
  for (const plan::Op& op : r.ops)
    if (op.kind == kind && op.micro_batch == micro_batch) return &op;
  return nullptr;
}

TEST(Llama3Cp, EveryDocumentIsZigzagShardedOverItsGroupOfConsecutiveRanks) {
  const Planned p(two_nodes(), test::system("llama3-cp", {{"degree", 4}}), {40000, 9000, 777, 31, 5, 2});
  ASSERT_TRUE(p.plan.feasible());
  EXPECT_EQ(p.plan.info.at("degree"), 4);
  EXPECT_EQ(p.plan.info.at("groups"), 4);
  for (const plan::Group& g : p.plan.groups) {
    ASSERT_EQ(g.ranks.size(), 4u);
    EXPECT_EQ(g.ranks.front() % 4, 0);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(g.ranks[static_cast<std::size_t>(i)], g.ranks.front() + i);
      for (const int seq : g.sequences) {
        const auto length = p.plan.sequences[static_cast<std::size_t>(seq)].length;
        for (const plan::Shard& mine : plan::owned_shards(seq, length, 4, i)) {
          const auto& held =
              p.plan.attention_layout[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(i)])].shards;
          bool found = false;
          for (const plan::Shard& s : held)
            found |= s.seq == mine.seq && s.begin == mine.begin && s.end == mine.end;
          EXPECT_TRUE(found) << "seq " << seq << " chunk [" << mine.begin << ", " << mine.end
                             << ") not on position " << i;
        }
      }
    }
  }
}

// One collective instruction per rank and pack: an all_gather over the group's ranks carrying the rank's
// own K/V, which the attention depends on (exposed); no point-to-point transfers at all.
TEST(Llama3Cp, OneExposedKvAllGatherPerRankAndPackFeedsTheAttention) {
  const Planned p(two_nodes(), test::system("llama3-cp", {{"degree", 8}}), {30000, 12000, 3000, 64});
  ASSERT_TRUE(p.plan.feasible());
  for (const plan::RankOps& r : p.plan.ranks) {
    int gathers = 0;
    for (const plan::Op& op : r.ops) {
      EXPECT_TRUE(op.kind != plan::OpKind::send && op.kind != plan::OpKind::recv);
      if (op.kind != plan::OpKind::collective) continue;
      ++gathers;
      EXPECT_EQ(op.collective, plan::CollectiveKind::all_gather);
      const plan::Group& g = p.plan.groups[static_cast<std::size_t>(op.group)];
      EXPECT_EQ(op.collective_ranks, g.ranks);
      const auto pos = static_cast<int>(std::find(g.ranks.begin(), g.ranks.end(), r.rank) - g.ranks.begin());
      std::int64_t tokens = 0;
      for (const int seq : g.sequences)
        for (const plan::Shard& s :
             plan::owned_shards(seq, p.plan.sequences[static_cast<std::size_t>(seq)].length, 8, pos))
          tokens += s.size();
      EXPECT_EQ(op.bytes, static_cast<std::int64_t>(p.cost.kv_bytes(static_cast<double>(tokens))));
      const plan::Op* attn = find_op(r, plan::OpKind::attention, op.micro_batch);
      ASSERT_NE(attn, nullptr) << "rank " << r.rank;
      EXPECT_EQ(attn->deps, std::vector<int>{op.id})
          << "the attention waits for the all-gather, and only for it";
    }
    EXPECT_EQ(gathers, p.plan.micro_batches) << "rank " << r.rank;
  }
}

// Each query chunk [a, b) of a document computes against keys [0, b) of the same document, causally:
// coverage (every pair once, on the query's owner, with keys that arrived) is plan::verify's.
TEST(Llama3Cp, EachQueryChunkComputesAgainstEveryEarlierKeyOfItsDocument) {
  const Planned p(two_nodes(), test::system("llama3-cp", {{"degree", 4}}), {1001, 64, 7, 3});
  ASSERT_TRUE(p.plan.feasible());
  for (const plan::RankOps& r : p.plan.ranks) {
    for (const plan::Op& op : r.ops) {
      if (op.kind != plan::OpKind::attention) continue;
      for (const plan::AttentionBlock& b : op.blocks) {
        EXPECT_EQ(b.k0, 0);
        EXPECT_EQ(b.k1, b.q1);
        EXPECT_EQ(b.mask, plan::Mask::causal);
      }
    }
  }
  plan::VerifyOptions options;
  options.token_capacity = p.cost.token_capacity_per_gpu();
  const auto problems = plan::verify(p.plan, options);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// "per-batch" applies the launch rule (the smallest power of two whose group holds the document) to each
// batch's longest document; "auto" applies it once to max_seq_len (degree_at_launch_test.cpp).
TEST(Llama3Cp, PerBatchIsTheSmallestPowerOfTwoWhoseGroupHoldsTheLongestDocument) {
  const Scenario s = two_nodes();
  const std::int64_t m = capacity_of(s);
  const std::map<std::int64_t, int> expected{{m / 2, 1},     {m + 1, 2}, {3 * m / 2, 2},
                                             {5 * m / 2, 4}, {6 * m, 8}, {12 * m, 16}};
  for (const auto& [longest, degree] : expected) {
    const Planned p(s, test::system("llama3-cp", {{"degree", "per-batch"}}), {longest, 1000, 17});
    ASSERT_TRUE(p.plan.feasible()) << "longest " << longest;
    EXPECT_EQ(p.plan.info.at("degree"), degree) << "longest " << longest << " with M = " << m;
    EXPECT_EQ(p.plan.info.at("degree_choice"), "per-batch");
  }
}

// A document whose zigzag share fits C GPUs but not with the others' K/V gathered beside it is an OOM
// (uniform-cp, which never holds the whole group's K/V, fits it).
TEST(Llama3Cp, TheGatheredKvOfTheWholeGroupCountsInMemory) {
  const Scenario s = two_nodes();
  const std::int64_t m = capacity_of(s);
  const std::int64_t longest =
      2 * m - (2 * m) % 4;  // C = 2: shares of exactly M (padding to 2C adds nothing)
  const Planned gathered(s, test::system("llama3-cp", {{"degree", 2}}), {longest, 100});
  ASSERT_FALSE(gathered.plan.feasible());
  EXPECT_GT(gathered.plan.oom.front().tokens_needed, gathered.plan.oom.front().token_capacity);
  EXPECT_EQ(gathered.plan.info.at("oversized_document").at("index"), 0);
  const Planned ring(s, test::system("uniform-cp", {{"degree", 2}}), {longest, 100});
  EXPECT_TRUE(ring.plan.feasible());
  // Packs are sized to what a rank holds with the gathered K/V: every rank's need fits M.
  const double kv_per_token = gathered.cost.kv_bytes(1.0) / gathered.cost.activation_bytes_per_token();
  const std::int64_t pack = gathered.plan.info.at("oversized_document").at("pack_capacity_tokens");
  EXPECT_LE(static_cast<double>(pack) / 2 + static_cast<double>(pack) / 2 * kv_per_token,
            static_cast<double>(m));
  EXPECT_GT(static_cast<double>(pack + 1) / 2 + static_cast<double>(pack + 1) / 2 * kv_per_token,
            static_cast<double>(m));
}

// The same balanced (LPT) dealing as uniform-cp: on a batch that memory does not constrain, every document
// goes to the same group at the same degree.
TEST(Llama3Cp, DealsDocumentsToGroupsAsUniformCpDoes) {
  const Scenario s = two_nodes();
  const std::vector<std::int64_t> docs{20000, 9000, 8000, 4000, 4000, 1000, 700, 64, 3, 12000, 16000};
  for (const char* dealing : {"balanced", "round-robin"}) {
    const Planned llama(s, test::system("llama3-cp", {{"degree", 4}, {"dealing", dealing}}), docs);
    const Planned uniform(s, test::system("uniform-cp", {{"degree", 4}, {"dealing", dealing}}), docs);
    std::multiset<std::pair<std::int64_t, int>> a, b;  // (length, first rank of its group)
    for (const plan::Group& g : llama.plan.groups)
      for (const int seq : g.sequences)
        a.insert({llama.plan.sequences[static_cast<std::size_t>(seq)].length, g.ranks[0]});
    for (const plan::Group& g : uniform.plan.groups)
      for (const int seq : g.sequences)
        b.insert({uniform.plan.sequences[static_cast<std::size_t>(seq)].length, g.ranks[0]});
    EXPECT_EQ(a, b) << dealing;
  }
}

// Lowered with a backward pass: the forward all-gather carries each member's K|V to every other member;
// the backward gathers K/V again (only the local K/V was kept), its attention reads what arrived, and the
// adjoint reduce-scatter carries every member's partial dK|dV of a rank's keys to that rank.
TEST(Llama3Cp, TheBackwardReGathersKvAndReduceScattersDkDv) {
  const Planned p(two_nodes(), test::system("llama3-cp", {{"degree", 4}}), {5000, 300, 2});
  ASSERT_TRUE(p.plan.feasible());
  const lower::Program program = lower::lower(p.plan, p.cost, {.backward = true});
  EXPECT_TRUE(lower::verify(program).empty());
  std::map<std::pair<lower::CollectiveKind, Pass>, int> kinds;
  for (const lower::Collective& col : program.collectives) {
    ++kinds[{col.kind, col.pass}];
    ASSERT_GE(col.group, 0);
    EXPECT_EQ(col.messages.size(), 12u) << "4 members, one message to each other member";
    for (const int m : col.messages) {
      const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
      const bool scatter = col.kind == lower::CollectiveKind::reduce_scatter;
      EXPECT_EQ(msg.kv_owner, scatter ? msg.dst : msg.src);
      for (const lower::Slice& s : msg.slices) {
        EXPECT_TRUE(scatter ? (s.tensor == lower::Tensor::dK || s.tensor == lower::Tensor::dV)
                            : (s.tensor == lower::Tensor::K || s.tensor == lower::Tensor::V));
      }
    }
  }
  const int packs = p.plan.info.at("packs");
  EXPECT_EQ((kinds[{lower::CollectiveKind::all_gather, Pass::fwd}]), packs);
  EXPECT_EQ((kinds[{lower::CollectiveKind::all_gather, Pass::bwd}]), packs);
  EXPECT_EQ((kinds[{lower::CollectiveKind::reduce_scatter, Pass::bwd}]), packs);
  for (const lower::RankProgram& rp : program.ranks) {
    for (const lower::Instr& in : rp.instrs) {
      if (in.kind != lower::InstrKind::attention) continue;
      EXPECT_EQ(in.reads.size(), 3u) << "the K/V of the 3 other members";
      for (const int m : in.reads)
        EXPECT_EQ(program
                      .collectives[static_cast<std::size_t>(
                          program.messages[static_cast<std::size_t>(m)].collective)]
                      .pass,
                  in.pass);
    }
  }
}

TEST(Llama3Cp, DegreeOneIsPlainDataParallelismWithoutCollectives) {
  const Planned p(two_nodes(), test::system("llama3-cp", {{"degree", 1}}), {9000, 300, 2});
  ASSERT_TRUE(p.plan.feasible());
  for (const plan::RankOps& r : p.plan.ranks)
    for (const plan::Op& op : r.ops) EXPECT_NE(op.kind, plan::OpKind::collective);
}

}  // namespace
}  // namespace zb
