// Attention is charged per sequence (METRICS.md, "A varlen call over several sequences"): where a document
// runs does not change what its attention costs, so the cost model biases no strategy by how it groups
// documents. Checked on local groups (one varlen call) and on zigzag rings (one call per ring step).
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "core/lower/lower.hpp"
#include "core/plan/plan_format.hpp"
#include "core/strategies/plan_builder.hpp"
#include "support.hpp"

namespace zb {
namespace {

// Two groups of `ranks_per_group` ranks on one micro-batch; the long document joins group `long_in`.
plan::Plan two_groups(const CostModel& cost, int ranks_per_group, const std::vector<std::int64_t>& shorts_a,
                      const std::vector<std::int64_t>& shorts_b, std::int64_t long_doc, int long_in) {
  PlanBuilder b(cost, "test", "test");
  for (int g = 0; g < 2; ++g) {
    std::vector<int> seqs;
    for (const std::int64_t len : g == 0 ? shorts_a : shorts_b) seqs.push_back(b.add_sequence(len, 0));
    if (g == long_in) seqs.push_back(b.add_sequence(long_doc, 0));
    std::vector<int> ranks;
    for (int i = 0; i < ranks_per_group; ++i) ranks.push_back(g * ranks_per_group + i);
    const int gid =
        b.add_group(ranks_per_group == 1 ? plan::Level::local : plan::Level::intra_node, ranks, seqs, 0);
    b.add_attention(gid, {});
  }
  return b.plan();
}

// Attention seconds of the whole plan, without the per-call overheads (the number of calls may differ).
double attention_work(const plan::Plan& p, const CostModel& cost) {
  double seconds = 0;
  for (const auto& r : p.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind != plan::OpKind::attention) continue;
      seconds +=
          lower::attention_seconds(op, cost, Pass::fwd) - cost.profile().attention_call_overhead * op.calls;
    }
  }
  return seconds;
}

class MovingALongDocument : public ::testing::TestWithParam<int> {};

TEST_P(MovingALongDocument, BetweenGroupsOfShortOnesDoesNotChangeTheCost) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> short_len(64, 2048);
    std::vector<std::int64_t> a(40 + seed * 7), b(90 - seed * 3);
    for (auto& len : a) len = short_len(rng);
    for (auto& len : b) len = short_len(rng);
    const std::int64_t long_doc = 131072;
    const double in_a = attention_work(two_groups(cost, GetParam(), a, b, long_doc, 0), cost);
    const double in_b = attention_work(two_groups(cost, GetParam(), a, b, long_doc, 1), cost);
    EXPECT_NEAR(in_a, in_b, 1e-9 * in_a) << "seed " << seed << ", " << GetParam() << " ranks per group";
  }
}

INSTANTIATE_TEST_SUITE_P(LocalAndRing, MovingALongDocument, ::testing::Values(1, 2, 4));

// A plan file without q_tokens reads back with the planner's value (the reader derives it by one rule).
TEST(EquivalentQueryLength, APlanFileWithoutItDerivesThePlannersValue) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p = two_groups(cost, 4, {300, 1200, 77}, {5000, 9}, 40000, 1);
  // The full form: every op written out, none folded into a run.
  nlohmann::json j = nlohmann::json::parse(plan::to_json(p, plan::Detail::full).dump());
  for (auto& r : j.at("ranks")) {
    for (auto& op : r.at("ops")) op.erase("q_tokens");
  }
  const plan::Plan back = plan::from_json(j, "test.json");
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    for (std::size_t i = 0; i < p.ranks[r].ops.size(); ++i) {
      EXPECT_NEAR(back.ranks[r].ops[i].q_tokens, p.ranks[r].ops[i].q_tokens,
                  1e-9 * p.ranks[r].ops[i].q_tokens + 1e-12)
          << "rank " << r << " op " << i;
    }
  }
}

// Every step of a zigzag ring counts the causal pairs of its query chunks against the key chunks it holds,
// exactly: the planner's step counts are checked here against the chunks' token ranges themselves. A
// sequence of length s is cut in 2P chunks of ⌈s/2P⌉ tokens, the last ones short or empty; position i holds
// chunks i and 2P−1−i. Random rings of 2 to 16 ranks over sequences shorter than 2P (empty chunks) up to
// long ones, over many seeds.
TEST(ZigzagRingSteps, CountThePairsOfTheirChunksExactly) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const int p = std::vector<int>{2, 3, 4, 7, 8, 16}[seed % 6];
    std::vector<std::int64_t> lengths(1 + seed % 9);
    for (auto& len : lengths)
      len = std::uniform_int_distribution<std::int64_t>(1, seed % 3 == 0 ? 40 : 20000)(rng);
    PlanBuilder b(cost, "test", "test");
    std::vector<int> seqs, ranks(static_cast<std::size_t>(p));
    for (const std::int64_t len : lengths) seqs.push_back(b.add_sequence(len, 0));
    std::iota(ranks.begin(), ranks.end(), 0);
    b.add_attention(b.add_group(plan::Level::intra_node, ranks, seqs, 0), {});
    const plan::Plan plan = b.plan();
    // [begin, end) of chunk c of a sequence of `len` tokens.
    const auto chunk = [p](std::int64_t len, int c) {
      const std::int64_t u = (len + 2 * p - 1) / (2 * p);
      return std::pair{std::min(c * u, len), std::min((c + 1) * u, len)};
    };
    // Causal pairs of query range q against key range k, ranges that are equal or do not overlap.
    const auto pairs = [](std::pair<std::int64_t, std::int64_t> q, std::pair<std::int64_t, std::int64_t> k) {
      const double n = static_cast<double>(q.second - q.first);
      if (q == k) return n * (n + 1) / 2;
      return k.second <= q.first ? n * static_cast<double>(k.second - k.first) : 0.0;
    };
    int steps = 0;
    for (int pos = 0; pos < p; ++pos) {
      for (const plan::Op& op : plan.ranks[static_cast<std::size_t>(pos)].ops) {
        if (op.kind != plan::OpKind::attention) continue;
        const int kv = op.zigzag_kv_rank;
        double expected = 0;
        EquivalentQTokens q;
        for (const std::int64_t len : lengths) {
          const auto qa = chunk(len, pos), qb = chunk(len, 2 * p - 1 - pos);
          const auto ka = chunk(len, kv), kb = chunk(len, 2 * p - 1 - kv);
          const double a = pairs(qa, ka) + pairs(qa, kb), c = pairs(qb, ka) + pairs(qb, kb);
          expected += a + c;
          q.add(a, static_cast<double>(qa.second - qa.first));
          q.add(c, static_cast<double>(qb.second - qb.first));
        }
        EXPECT_NEAR(op.pairs, expected, 1e-12 * expected)
            << "seed " << seed << ", P " << p << ", position " << pos << " against " << kv;
        EXPECT_NEAR(op.q_tokens, q.value(), 1e-9 * q.value()) << "seed " << seed << ", position " << pos;
        ++steps;
      }
    }
    EXPECT_GT(steps, 0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace zb
