// The size of a plan's JSON follows what it holds, not ranks × sequences (docs/PLAN_FORMAT.md, "Size"):
// the compact form stays under the formula stated there for every strategy on random clusters, attention
// layouts (which the groups imply) are never listed, a ring's steps fold into one run per rank and ring, and
// a summary is bounded by ranks, sequences and group members alone.
#include <gtest/gtest.h>

#include "core/plan/plan_format.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using nlohmann::json;

// What the compact form printed, counted from the text itself (the quantities of the formula).
struct Printed {
  std::size_t explicit_shards = 0;   // L
  std::size_t attention_shards = 0;  // of which in the attention layout
  std::size_t moves = 0;             // M
  std::size_t blocks = 0;            // B
  std::size_t list_entries = 0;      // D: deps, collective members, route lists
  std::size_t whole_ops = 0;         // E: ops printed on their own
  std::size_t run_ops = 0;           // T: ops printed once for a run
  std::size_t listed_values = 0;     // F: values a run lists for its later repetitions
  std::size_t repeated_ops = 0;      // ops a run stands for beyond its first repetition
};

void count_op(const json& op, Printed& c) {
  c.blocks += op.contains("blocks") ? op["blocks"].size() : 0;
  c.moves += op.contains("moves") ? op["moves"].size() : 0;
  c.list_entries += op["deps"].size() + (op.contains("ranks") ? op["ranks"].size() : 0);
  if (op.contains("route") && op["route"]["kind"] == "routed") {
    for (const char* k : {"proxies", "peer_proxies", "part_bytes"}) c.list_entries += op["route"][k].size();
  }
}

Printed count(const json& j) {
  Printed c;
  for (const char* key : {"attention_layout", "linear_layout"}) {
    for (const json& l : j[key]) {
      const std::size_t listed = l["shards"].is_array() ? l["shards"].size() : 0;
      c.explicit_shards += listed;
      c.attention_shards += std::string(key) == "attention_layout" ? listed : 0;
    }
  }
  c.moves += j["remap"].size();
  for (const json& r : j["ranks"]) {
    for (const json& e : r["ops"]) {
      if (!e.contains("run")) {
        ++c.whole_ops;
        count_op(e, c);
        continue;
      }
      c.run_ops += e["ops"].size();
      c.repeated_ops += (e["run"].get<std::size_t>() - 1) * e["ops"].size();
      for (const json& op : e["ops"]) count_op(op, c);
      for (const json& fields : e.value("vary", json::array())) {
        for (const auto& [field, series] : fields.items()) {
          if (!series.is_array()) continue;
          for (const json& v : series) c.listed_values += v.is_array() ? v.size() : 1;
        }
      }
    }
  }
  return c;
}

std::size_t members(const plan::Plan& p) {
  std::size_t n = 0;
  for (const plan::Group& g : p.groups) n += g.ranks.size() + g.sequences.size();
  return n;
}

// The part of the formula every detail shares: header, sequences, groups, predictions, OOM reports.
std::size_t shared_bound(const plan::Plan& p) {
  return 512 + p.info.dump().size() + 64 * p.sequences.size() + 112 * p.groups.size() + 8 * members(p) +
         100 * p.oom.size();
}

// docs/PLAN_FORMAT.md, "Size": the compact form.
std::size_t compact_bound(const plan::Plan& p, const Printed& c) {
  return shared_bound(p) + 256 * static_cast<std::size_t>(p.world_size) + 56 * c.explicit_shards +
         80 * c.moves + 72 * c.blocks + 12 * c.list_entries + 320 * c.whole_ops + 640 * c.run_ops +
         26 * c.listed_values;
}

// The summary: no ops, no layouts.
std::size_t summary_bound(const plan::Plan& p) {
  return shared_bound(p) + 320 * static_cast<std::size_t>(p.world_size);
}

TEST(PlanJsonSize, CompactFormStaysUnderTheFormulaAndNeverListsWhatGroupsImply) {
  int folded = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const test::RandomScenario c = test::random_scenario(seed);
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      const std::string where = "seed " + std::to_string(seed) + " system " + system.label;
      const std::string text = plan::to_json_text(p, plan::Detail::compact);
      const Printed printed = count(json::parse(text));
      EXPECT_LE(text.size(), compact_bound(p, printed)) << where;
      // Every strategy lays its attention shards by its groups (PlanBuilder::add_group), so none is
      // listed; a linear layout is listed only where it is neither (Zeppelin's token-balanced one).
      EXPECT_EQ(printed.attention_shards, 0u) << where;
      EXPECT_LE(text.size(), plan::to_json_text(p, plan::Detail::full).size()) << where;
      folded += printed.repeated_ops > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(folded, 10) << "runs must occur, or the formula's run terms are untested";
}

// Ring CP over P ranks gives each rank 3(P−1)+1 ring ops per ring; the compact form prints a handful of
// them whole (the first steps, whose deps differ, one pattern of three, the last attention) and the rest
// as one run, so whole ops per rank do not grow with P.
TEST(PlanJsonSize, RingStepsFoldIntoOneRunPerRankAndRing) {
  for (const int nodes : {2, 4, 8}) {
    Scenario s = test::preset_scenario("dgx-h200", nodes, "llama-7b");
    s.model = test::small_model();
    const plan::Plan p = test::plan_of(s, test::system("ring-cp"), {70000, 30000, 9000, 5000, 100, 3});
    ASSERT_TRUE(p.feasible());
    const json j = json::parse(plan::to_json_text(p, plan::Detail::compact));
    for (std::size_t r = 0; r < p.ranks.size(); ++r) {
      std::size_t whole = 0, rings = 0;
      for (const plan::Group& g : p.groups) {
        rings += std::count(g.ranks.begin(), g.ranks.end(), static_cast<int>(r)) > 0 ? 1 : 0;
      }
      std::size_t non_ring = 0;
      for (const plan::Op& op : p.ranks[r].ops) non_ring += op.step < 0 ? 1 : 0;
      for (const json& e : j["ranks"][r]["ops"]) whole += e.contains("run") ? e["ops"].size() : 1;
      EXPECT_LE(whole, non_ring + 8 * rings)
          << nodes << " nodes, rank " << r << ": " << p.ranks[r].ops.size() << " ops";
    }
  }
}

TEST(PlanJsonSize, SummaryIsBoundedByRanksSequencesAndGroupMembers) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const test::RandomScenario c = test::random_scenario(seed);
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      const std::string text = plan::to_json_text(p, plan::Detail::summary);
      EXPECT_LE(text.size(), summary_bound(p)) << "seed " << seed << " system " << system.label;
      const json j = json::parse(text);
      EXPECT_FALSE(j.contains("attention_layout"));
      ASSERT_EQ(j["ranks"].size(), p.ranks.size());
      for (std::size_t r = 0; r < p.ranks.size(); ++r) EXPECT_EQ(j["ranks"][r]["ops"], p.ranks[r].ops.size());
    }
  }
}

}  // namespace
}  // namespace zb
