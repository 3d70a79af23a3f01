// Collectives match like sends and recvs: one op on each rank of collective_ranks, agreeing on kind,
// ranks and tag. An all-gather or all-to-all the attention waits for delivers its members' KV.
#include <gtest/gtest.h>

#include "core/plan/verify.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using plan::CollectiveKind;
using plan::Mask;

// Rank 0 owns tokens [0, 4) of the sequence, rank 1 owns [4, 8). Both all-gather the KV (tag 7); rank 1
// then computes its queries against rank 0's keys and its own, rank 0 its own triangle.
plan::Plan gathered_kv() {
  plan::Plan p = test::two_rank_plan({{{0, 0, 4}}, {{0, 4, 8}}});
  const int g0 = test::add(p, 0, test::collective(CollectiveKind::all_gather, {0, 1}, 7));
  test::add(p, 0, test::attention({test::block(0, 4, 0, 4, Mask::causal)}, {g0}));
  const int g1 = test::add(p, 1, test::collective(CollectiveKind::all_gather, {0, 1}, 7));
  test::add(
      p, 1,
      test::attention({test::block(4, 8, 0, 4, Mask::full), test::block(4, 8, 4, 8, Mask::causal)}, {g1}));
  return p;
}

std::string problems_of(const plan::Plan& p) {
  return test::joined(plan::verify(p, {.heads = 8}));
}

TEST(VerifyCollectives, MatchingAllGatherDeliversTheKvItGathers) {
  EXPECT_EQ(problems_of(gathered_kv()), "");
}

TEST(VerifyCollectives, AttentionThatDoesNotWaitForTheGatherReadsKeysItLacks) {
  plan::Plan p = gathered_kv();
  p.ranks[1].ops[1].deps.clear();
  EXPECT_NE(
      problems_of(p).find(
          "rank 1 op 1: reads keys of seq 0 q [4, 8) k [0, 4) full that are neither local nor received"),
      std::string::npos)
      << problems_of(p);
}

TEST(VerifyCollectives, AReduceScatterDeliversNoKv) {
  plan::Plan p = gathered_kv();
  for (auto& r : p.ranks) r.ops[0].collective = CollectiveKind::reduce_scatter;
  EXPECT_NE(problems_of(p).find("rank 1 op 1: reads keys"), std::string::npos) << problems_of(p);
}

TEST(VerifyCollectives, AMemberWithoutItsOpIsNamed) {
  plan::Plan p = gathered_kv();
  p.ranks[0].ops[0] = test::attention({});  // rank 0 no longer takes part (an empty op keeps the ids)
  p.ranks[0].ops[0].id = 0;
  EXPECT_NE(
      problems_of(p).find("collective tag 7 (all_gather over ranks [0, 1]) has no matching op on rank 0"),
      std::string::npos)
      << problems_of(p);
}

TEST(VerifyCollectives, RanksMustAgreeOnTheKind) {
  plan::Plan p = gathered_kv();
  p.ranks[1].ops[0].collective = CollectiveKind::all_reduce;
  EXPECT_NE(problems_of(p).find(
                "rank 1 op 0 (all_reduce tag 7): is all_reduce over ranks [0, 1], but rank 0 op 0 with the "
                "same tag is all_gather over ranks [0, 1]"),
            std::string::npos)
      << problems_of(p);
}

TEST(VerifyCollectives, RanksMustAgreeOnTheMembers) {
  plan::Plan p = gathered_kv();
  p.ranks[1].ops[0].collective_ranks = {1, 0};  // the order is part of the collective (who holds which part)
  EXPECT_NE(problems_of(p).find("but rank 0 op 0 with the same tag is all_gather over ranks [0, 1]"),
            std::string::npos)
      << problems_of(p);
}

TEST(VerifyCollectives, ARankOutsideItsOwnCollectiveIsAnError) {
  plan::Plan p = gathered_kv();
  p.ranks[1].ops[0].collective_ranks = {0};
  EXPECT_NE(problems_of(p).find("rank 1 op 0 (all_gather tag 7): its ranks [0] do not include rank 1 itself"),
            std::string::npos)
      << problems_of(p);
}

TEST(VerifyCollectives, RanksAreDistinctAndInTheWorld) {
  plan::Plan p = gathered_kv();
  p.ranks[0].ops[0].collective_ranks = {0, 1, 0};
  p.ranks[1].ops[0].collective_ranks = {0, 1, 5};
  const std::string problems = problems_of(p);
  EXPECT_NE(problems.find("rank 0 op 0 (all_gather tag 7): lists rank 0 twice"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("rank 1 op 0 (all_gather tag 7): names rank 5, outside world_size 2"),
            std::string::npos)
      << problems;
}

TEST(VerifyCollectives, TwoOpsOfOneRankWithTheSameTag) {
  plan::Plan p = gathered_kv();
  test::add(p, 1, test::collective(CollectiveKind::all_gather, {0, 1}, 7));
  EXPECT_NE(problems_of(p).find("rank 1 has two collective ops with tag 7"), std::string::npos)
      << problems_of(p);
}

}  // namespace
}  // namespace zb
