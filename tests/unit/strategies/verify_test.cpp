// plan::verify catches deliberately corrupted plans with a message that says what and where.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

using plan::OpKind;

class CorruptedPlan : public ::testing::Test {
 protected:
  plan::Plan make(const std::string& system, std::vector<std::int64_t> lengths,
                  nlohmann::json options = nlohmann::json::object()) {
    scenario_ = test::preset_scenario("dgx-h200", 1, "llama-7b");
    scenario_.cluster.gpus_per_node = 4;
    scenario_.cluster.nics_per_node = 4;
    scenario_.cluster.gpu_to_nic = {0, 1, 2, 3};
    scenario_.cluster.nodes = 2;
    cost_ = std::make_unique<CostModel>(scenario_.cluster, scenario_.model);
    plan::Plan p = make_strategy(test::system(system, std::move(options)), scenario_, *cost_)
                       ->make_plan(test::batch_of(std::move(lengths)));
    EXPECT_TRUE(plan::verify(p).empty()) << "the uncorrupted plan must be valid";
    return p;
  }
  static std::string all(const std::vector<std::string>& problems) {
    std::string s;
    for (const auto& p : problems) s += p + "\n";
    return s;
  }
  static plan::Op* find(plan::Plan& p, OpKind kind, bool ring_form) {
    for (auto& r : p.ranks) {
      for (auto& op : r.ops) {
        if (op.kind == kind && (kind != OpKind::attention || (op.zigzag_kv_rank >= 0) == ring_form))
          return &op;
      }
    }
    return nullptr;
  }
  Scenario scenario_;
  std::unique_ptr<CostModel> cost_;
};

TEST_F(CorruptedPlan, DroppedAttentionBlockLeavesPairsUncomputed) {
  // Zeppelin's own partition (local sequences), not a baseline-shaped candidate.
  plan::Plan p = make("zeppelin", {100, 200, 300, 400, 500, 600, 700, 800});
  plan::Op* op = find(p, OpKind::attention, false);
  ASSERT_NE(op, nullptr);
  const int seq = op->blocks.back().seq;
  op->blocks.pop_back();
  const auto problems = plan::verify(p);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(all(problems).find("sequence " + std::to_string(seq)), std::string::npos) << all(problems);
  EXPECT_NE(all(problems).find("never computed"), std::string::npos) << all(problems);
}

TEST_F(CorruptedPlan, WrongPeerHasNoMatchingRecv) {
  plan::Plan p = make("ring-cp", {4096});
  plan::Op* send = find(p, OpKind::send, false);
  ASSERT_NE(send, nullptr);
  send->peer = (send->peer + 2) % p.world_size;
  const auto problems = plan::verify(p);
  EXPECT_NE(all(problems).find("has no matching recv on rank " + std::to_string(send->peer)),
            std::string::npos)
      << all(problems);
}

TEST_F(CorruptedPlan, AttentionThatDoesNotWaitForItsKvIsCaught) {
  plan::Plan p = make("ring-cp", {4096});
  for (auto& r : p.ranks) {
    for (auto& op : r.ops) {
      if (op.kind == OpKind::attention && op.step == 1) {
        op.deps.clear();
        const auto problems = plan::verify(p);
        EXPECT_NE(all(problems).find("rank " + std::to_string(r.rank) + " op " + std::to_string(op.id) +
                                     ": reads keys"),
                  std::string::npos)
            << all(problems);
        return;
      }
    }
  }
  FAIL() << "no ring step 1 found";
}

TEST_F(CorruptedPlan, DuplicatedRingStepComputesPairsTwice) {
  plan::Plan p = make("ring-cp", {4096});
  plan::Op* op = find(p, OpKind::attention, true);
  ASSERT_NE(op, nullptr);
  op->zigzag_kv_rank = -1;
  op->blocks = {{0, 0, 1, 0, 1, plan::Mask::causal, {}}, {0, 0, 1, 0, 1, plan::Mask::causal, {}}};
  const auto problems = plan::verify(p);
  EXPECT_NE(all(problems).find("blocks overlap"), std::string::npos) << all(problems);
}

// Ring-form ops are verified by counting (query position, KV position) pairs instead of expanding every
// document's blocks; a ring that computes one pair twice and another never must still be caught, for a
// ring over many documents as for one.
TEST_F(CorruptedPlan, RingStepAgainstTheWrongKvRankIsCaughtOverManyDocuments) {
  plan::Plan p = make("ring-cp", std::vector<std::int64_t>(40, 300));
  for (auto& r : p.ranks) {
    for (auto& op : r.ops) {
      if (op.kind == OpKind::attention && op.zigzag_kv_rank >= 0 && op.zigzag_kv_rank != r.rank) {
        op.zigzag_kv_rank = r.rank;  // its own KV a second time; the peer's is never used
        const auto problems = plan::verify(p);
        EXPECT_NE(all(problems).find("blocks overlap"), std::string::npos) << all(problems);
        return;
      }
    }
  }
  FAIL() << "no ring step against another rank found";
}

TEST_F(CorruptedPlan, ExplicitBlockOnARingsDocumentIsCaught) {
  plan::Plan p = make("ring-cp", std::vector<std::int64_t>(40, 300));
  plan::Op* op = find(p, OpKind::attention, true);
  ASSERT_NE(op, nullptr);
  const int seq = p.groups.at(static_cast<std::size_t>(op->group)).sequences.back();
  // A second ring-form op would be counted; an explicit block on one of the ring's documents must expand
  // the ring's blocks so that the overlap is found.
  plan::Op extra = *op;
  extra.id = static_cast<int>(p.ranks[0].ops.size());
  extra.zigzag_kv_rank = -1;
  extra.deps = {};
  const auto [q, k] = plan::zigzag_shards(
      seq, 300, static_cast<int>(p.groups[static_cast<std::size_t>(op->group)].ranks.size()), 0);
  extra.blocks = {{seq, q.begin, q.end, q.begin, q.end, plan::Mask::causal, {}}};
  p.ranks[0].ops.push_back(extra);
  const auto problems = plan::verify(p);
  EXPECT_NE(all(problems).find("blocks overlap"), std::string::npos) << all(problems);
}

TEST_F(CorruptedPlan, OvercommittedMemoryIsReportedWithTheRank) {
  const plan::Plan p = make("ring-cp", {4096});
  const auto problems = plan::verify(p, {100});
  EXPECT_NE(all(problems).find("over its capacity of 100"), std::string::npos) << all(problems);
}

TEST_F(CorruptedPlan, DroppedRemapMoveUnbalancesTheLinearLayout) {
  // One 8-GPU node: a 30k ring and 100 short sequences, which the remap evens out (named_cases_test).
  const Scenario one_node = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(one_node.cluster, one_node.model);
  std::vector<std::int64_t> lengths{30000};
  lengths.insert(lengths.end(), 100, 500);
  plan::Plan p =
      make_strategy(test::system("zeppelin"), one_node, cost)->make_plan(test::batch_of(std::move(lengths)));
  ASSERT_FALSE(p.remap.empty());
  p.remap.pop_back();
  const auto problems = plan::verify(p);
  EXPECT_NE(all(problems).find("differs from its linear layout"), std::string::npos) << all(problems);
}

}  // namespace
}  // namespace zb
