// Coverage per head: when blocks compute head ranges, every head of every causal pair is computed exactly
// once. Two GPUs that both own a sequence of 8 tokens split its 8 heads (head parallelism).
#include <gtest/gtest.h>

#include "core/plan/verify.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using plan::HeadRange;
using plan::Mask;

constexpr int model_heads = 8;

// Rank 0 computes the whole causal triangle for heads `first`, rank 1 for heads `second`.
plan::Plan split_heads(HeadRange first, HeadRange second) {
  plan::Plan p = test::two_rank_plan({{{0, 0, 8}}, {{0, 0, 8}}});
  test::add(p, 0, test::attention({test::block(0, 8, 0, 8, Mask::causal, first)}));
  test::add(p, 1, test::attention({test::block(0, 8, 0, 8, Mask::causal, second)}));
  return p;
}

std::vector<std::string> problems_with(const plan::Plan& p, int heads = model_heads) {
  return plan::verify(p, {.heads = heads});
}

TEST(VerifyHeads, HalvesOfTheHeadsOnTwoRanksCoverTheSequenceOnce) {
  EXPECT_EQ(test::joined(problems_with(split_heads({0, 4}, {4, 8}))), "");
  EXPECT_EQ(test::joined(problems_with(split_heads({0, 4}, {4, -1}))), "")
      << "end -1 runs to the model's last head";
}

TEST(VerifyHeads, OverlappingRangesComputeAHeadTwice) {
  const std::string problems = test::joined(problems_with(split_heads({0, 4}, {3, 8})));
  EXPECT_NE(problems.find("sequence 0 head 3: blocks overlap"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("head 2"), std::string::npos) << "only head 3 is computed twice:\n" << problems;
}

TEST(VerifyHeads, MissingHeadIsNamedWithItsSequence) {
  const std::string problems = test::joined(problems_with(split_heads({0, 4}, {4, 7})));
  EXPECT_NE(problems.find("sequence 0 of length 8, head 7: blocks cover 0 causal pairs, expected 36 (some "
                          "pairs are never computed)"),
            std::string::npos)
      << problems;
}

TEST(VerifyHeads, SeveralMissingHeadsAreOneProblem) {
  const std::string problems = test::joined(problems_with(split_heads({0, 2}, {2, 4})));
  EXPECT_NE(problems.find("sequence 0 of length 8, heads 4-7: blocks cover 0 causal pairs"),
            std::string::npos)
      << problems;
}

TEST(VerifyHeads, RangeBeyondTheModelsHeadsIsReported) {
  const std::string problems = test::joined(problems_with(split_heads({0, 4}, {4, 12})));
  EXPECT_NE(problems.find("names heads outside the model's 8"), std::string::npos) << problems;
}

TEST(VerifyHeads, SlicedHeadsNeedTheModelsHeadCount) {
  const std::string problems = test::joined(problems_with(split_heads({0, 4}, {4, 8}), 0));
  EXPECT_NE(problems.find("the model's head count was not given"), std::string::npos) << problems;
  // Without head ranges the count is not needed: every block computes all heads.
  EXPECT_EQ(test::joined(problems_with(split_heads({}, {}), 0)).find("head count"), std::string::npos);
}

TEST(VerifyHeads, AllHeadsTwiceIsStillAnOverlap) {
  const std::string problems = test::joined(problems_with(split_heads({}, {})));
  EXPECT_NE(problems.find("blocks overlap"), std::string::npos) << problems;
}

// The ring form computes the op's heads: a ring plan whose ops all compute heads [0, 4) leaves 4-7 out.
TEST(VerifyHeads, RingFormOpsComputeTheirOpsHeads) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  s.cluster.gpus_per_node = 4;
  s.cluster.nics_per_node = 4;
  s.cluster.gpu_to_nic = {0, 1, 2, 3};
  plan::Plan p = test::plan_of(s, test::system("ring-cp"), {4096});
  ASSERT_EQ(test::joined(problems_with(p)), "");
  for (auto& r : p.ranks) {
    for (auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention) op.heads = {0, 4};
    }
  }
  const std::string problems = test::joined(problems_with(p));
  EXPECT_NE(problems.find("sequence 0 of length 4096, heads 4-7: blocks cover 0 causal pairs"),
            std::string::npos)
      << problems;
  EXPECT_EQ(problems.find("heads 0-3"), std::string::npos) << "heads 0-3 are covered exactly once:\n"
                                                           << problems;
}

}  // namespace
}  // namespace zb
