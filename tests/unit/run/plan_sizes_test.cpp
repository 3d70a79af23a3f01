// What `run --plan` checks of a plan's sizes (core/run/plan_sizes.hpp), as a specification:
//   * every strategy's own plan, over random clusters and batches, with and without tensor parallelism,
//     has the sizes the scenario's model implies (an unedited dump is never refused);
//   * one edited size, on a random K/V send and its recv, a random GEMM's m, n or k, or a remap's bytes,
//     is found and named at its op's JSON path, whatever the strategy;
//   * in a compact file that path is where the file wrote the op: a run's path, the op's place in it and
//     the repetition, not the op's position in the expanded list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/common/rng.hpp"
#include "core/lower/lower.hpp"
#include "core/plan/plan_format.hpp"
#include "core/run/plan_sizes.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb {
namespace {

using plan::Op;
using plan::OpKind;

std::vector<Problem> size_problems(const plan::Plan& p, const CostModel& cost) {
  const lower::Program program = lower::lower(p, cost, {.backward = false});
  return plan_size_problems(p, program, cost, "plan.json", 20);
}

// Every registered strategy and option variant on `c`, feasible plans only, with `tensor` TP width.
template <typename Fn>
void for_every_plan(const test::LoweringCase& c, int tensor, Fn&& check) {
  Scenario scenario = c.scenario;
  scenario.parallelism.tensor = tensor;
  const CostModel cost(scenario.cluster, scenario.model);
  for (const SystemSpec& system : test::registered_variants(scenario.cluster.world_size() / tensor, {1})) {
    const plan::Plan p = make_strategy(system, scenario, cost)->make_plan(test::batch_of(c.lengths));
    if (!p.feasible()) continue;
    SCOPED_TRACE(system.label + ", TP " + std::to_string(tensor) + ", " + std::to_string(p.world_size) +
                 " ranks");
    check(p, cost);
  }
}

std::string text(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += p.str() + "\n";
  return out;
}

TEST(PlanSizes, EveryStrategysOwnPlanHasTheModelsSizes) {
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    Rng rng(seed, 41);
    const test::LoweringCase c = test::random_lowering_case(rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (const int tensor : {1, 2}) {
      if (c.scenario.cluster.gpus_per_node % tensor != 0) continue;
      for_every_plan(c, tensor, [](const plan::Plan& p, const CostModel& cost) {
        const std::vector<Problem> problems = size_problems(p, cost);
        EXPECT_TRUE(problems.empty()) << text(problems);
      });
    }
  }
}

// The ops of `p` of one of `kinds` (rank, index), for picking one to edit.
std::vector<std::pair<int, int>> ops_of(const plan::Plan& p, std::initializer_list<OpKind> kinds) {
  std::vector<std::pair<int, int>> out;
  for (const auto& rank : p.ranks)
    for (const Op& op : rank.ops)
      if (std::find(kinds.begin(), kinds.end(), op.kind) != kinds.end() &&
          (op.kind != OpKind::send || op.kv_owner >= 0) && (op.kind != OpKind::remap || !op.moves.empty()))
        out.push_back({rank.rank, op.id});
  return out;
}

std::string path_of(int rank, int op, const char* key) {
  return "ranks[" + std::to_string(rank) + "].ops[" + std::to_string(op) + "]." + key;
}

bool names(const std::vector<Problem>& problems, const std::string& path) {
  for (const Problem& p : problems)
    if (p.where.file == "plan.json" && p.where.json_path == path) return true;
  return false;
}

TEST(PlanSizes, OneEditedSizeIsNamedAtItsOp) {
  int edits = 0;
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    Rng rng(seed, 43);
    const test::LoweringCase c = test::random_lowering_case(rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    for_every_plan(c, 1, [&](const plan::Plan& original, const CostModel& cost) {
      const auto candidates = ops_of(original, {OpKind::send, OpKind::gemm, OpKind::remap});
      if (candidates.empty()) return;
      const auto [rank, id] = candidates[rng.below(candidates.size())];
      plan::Plan p = original;
      Op& op = p.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(id)];
      // A factor of 2 or one more unit (one row, 3 bytes: past the rounding allowed).
      const bool double_it = rng.below(2) == 0;
      const auto edit = [double_it](std::int64_t& v, std::int64_t unit) {
        v = double_it && v > 0 ? 2 * v : v + unit;
      };
      const char* key = "bytes";
      if (op.kind == OpKind::send) {
        const std::int64_t before = op.bytes;
        edit(op.bytes, 3);
        // A routed send's parts add up to its bytes (the reader and the lowering demand it).
        if (!op.route.part_bytes.empty())
          *std::max_element(op.route.part_bytes.begin(), op.route.part_bytes.end()) += op.bytes - before;
        for (Op& peer :
             p.ranks[static_cast<std::size_t>(op.peer)].ops)  // the recv agrees, as lowering demands
          if (peer.kind == OpKind::recv && peer.peer == rank && peer.tag == op.tag) peer.bytes = op.bytes;
      } else if (op.kind == OpKind::gemm) {
        const char* keys[] = {"m", "n", "k"};
        std::int64_t* values[] = {&op.m, &op.n, &op.k};
        const auto which = rng.below(3);
        key = keys[which];
        edit(*values[which], 1);
      } else {
        key = "bytes_out";
        edit(op.bytes_out, 3);
      }
      const std::vector<Problem> problems = size_problems(p, cost);
      EXPECT_TRUE(names(problems, path_of(rank, id, key)))
          << "edited " << path_of(rank, id, key) << "; problems:\n"
          << text(problems);
      ++edits;
    });
  }
  EXPECT_GT(edits, 100);  // the property saw many strategies' ops, not a handful
}

// The op a message's path names in the plan JSON `j` as written (the path without its key): its id, read
// from the file itself. "ranks[r].ops[e]" is an op written whole; "ranks[r].ops[e].ops[k]@m" is repetition m
// of op k of the run at entry e, whose id is the run's first id + m·(ops per repetition) + k.
std::int64_t id_at(const nlohmann::json& j, const std::string& path) {
  int rank = -1, entry = -1, op = -1, repetition = 0, used = 0;
  if (std::sscanf(path.c_str(), "ranks[%d].ops[%d]%n", &rank, &entry, &used) != 2) return -1;
  const nlohmann::json& written = j.at("ranks").at(rank).at("ops").at(entry);
  std::string rest = path.substr(static_cast<std::size_t>(used));
  if (rest.empty()) return written.contains("run") ? -1 : written.at("id").get<std::int64_t>();
  if (std::sscanf(rest.c_str(), ".ops[%d]%n", &op, &used) != 1 || !written.contains("run")) return -1;
  rest = rest.substr(static_cast<std::size_t>(used));
  if (!rest.empty() && (std::sscanf(rest.c_str(), "@%d", &repetition) != 1 || repetition < 1)) return -1;
  const nlohmann::json& ops = written.at("ops");
  return ops.at(0).at("id").get<std::int64_t>() + repetition * static_cast<std::int64_t>(ops.size()) + op;
}

// A compact plan file folds a ring's steps into runs, so op 130 is not entry 130: an edited size is named
// where the file wrote the op (the run's path, the op's place in it and the repetition), which looked up in
// the file as printed is the very op edited, and says where its value comes from.
TEST(PlanSizes, AnEditedSizeInACompactFileIsNamedWhereTheFileWritesIt) {
  int in_runs = 0, later_repetitions = 0;
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    Rng rng(seed, 47);
    const test::LoweringCase c = test::random_lowering_case(rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    for_every_plan(c, 1, [&](const plan::Plan& original, const CostModel& cost) {
      const nlohmann::json file =
          nlohmann::json::parse(plan::to_json(original, plan::Detail::compact).dump());
      plan::OpSources sources;
      plan::Plan p = plan::from_json(file, "plan.json", {}, &sources);
      // A K/V send in a run, in a repetition past the first where there is one.
      std::vector<std::pair<int, int>> candidates, later;
      for (const auto& [rank, id] : ops_of(p, {OpKind::send})) {
        const auto place = sources.place_of(rank, static_cast<std::size_t>(id));
        if (!place.in_run) continue;
        candidates.push_back({rank, id});
        if (place.repetition > 0) later.push_back({rank, id});
      }
      if (candidates.empty()) return;
      const auto& pool = later.empty() ? candidates : later;
      const auto [rank, id] = pool[rng.below(pool.size())];
      Op& op = p.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(id)];
      const std::int64_t before = op.bytes;
      op.bytes = 2 * op.bytes + 3;
      if (!op.route.part_bytes.empty())
        *std::max_element(op.route.part_bytes.begin(), op.route.part_bytes.end()) += op.bytes - before;
      for (Op& peer : p.ranks[static_cast<std::size_t>(op.peer)].ops)
        if (peer.kind == OpKind::recv && peer.peer == rank && peer.tag == op.tag) peer.bytes = op.bytes;
      const lower::Program program = lower::lower(p, cost, {.backward = false});
      const std::vector<Problem> problems = plan_size_problems(p, program, cost, "plan.json", 20, sources);
      const Problem* named = nullptr;
      for (const Problem& problem : problems) {
        const std::string& path = problem.where.json_path;
        if (path.size() > 6 && path.ends_with(".bytes") &&
            id_at(file, path.substr(0, path.size() - 6)) == id &&
            path.starts_with("ranks[" + std::to_string(rank) + "]"))
          named = &problem;
      }
      ASSERT_NE(named, nullptr) << "edited op " << id << " of rank " << rank << " at "
                                << sources.path_of(rank, static_cast<std::size_t>(id)) << "; problems:\n"
                                << text(problems);
      EXPECT_EQ(named->where.json_path, sources.path_of(rank, static_cast<std::size_t>(id)) + ".bytes");
      EXPECT_NE(named->where.json_path.find(".ops["), named->where.json_path.rfind(".ops["))
          << "not a run's op: " << named->where.json_path;
      if (named == &problems.front()) {  // only the first problem of a run carries the hint
        EXPECT_NE(named->hint.find("(id " + std::to_string(id) + ") is repetition"), std::string::npos)
            << named->hint;
      }
      ++in_runs;
      if (!later.empty()) ++later_repetitions;
    });
  }
  EXPECT_GT(in_runs, 20);            // many strategies' runs, not a handful
  EXPECT_GT(later_repetitions, 10);  // and ops past a run's first repetition, named with @m
}

// Where an op stands in the file, for a rank whose entries are two whole ops, a run of 3 repetitions of 2
// ops (ids 2..7), one whole op (id 8), a run of 2 repetitions of 1 op (ids 9, 10) and a whole op (id 11).
TEST(OpSources, NameOpsWrittenWholeAndOpsOfRuns) {
  plan::OpSources sources;
  sources.add_run(1, 2, 2, 2, 3);
  sources.add_run(1, 4, 9, 1, 2);
  EXPECT_EQ(sources.path_of(1, 0), "ranks[1].ops[0]");
  EXPECT_EQ(sources.path_of(1, 1), "ranks[1].ops[1]");
  EXPECT_EQ(sources.path_of(1, 2), "ranks[1].ops[2].ops[0]");
  EXPECT_EQ(sources.path_of(1, 3), "ranks[1].ops[2].ops[1]");
  EXPECT_EQ(sources.path_of(1, 6), "ranks[1].ops[2].ops[0]@2");
  EXPECT_EQ(sources.path_of(1, 7), "ranks[1].ops[2].ops[1]@2");
  EXPECT_EQ(sources.path_of(1, 8), "ranks[1].ops[3]");
  EXPECT_EQ(sources.path_of(1, 10), "ranks[1].ops[4].ops[0]@1");
  EXPECT_EQ(sources.path_of(1, 11), "ranks[1].ops[5]");
  // Ranks without runs (and a plan that was never a file) name ops by their ids, which are their entries.
  EXPECT_EQ(sources.path_of(0, 7), "ranks[0].ops[7]");
  EXPECT_EQ(plan::OpSources{}.path_of(3, 130), "ranks[3].ops[130]");
}

}  // namespace
}  // namespace zb

namespace zb {
namespace {

// An MoE model's plans (issue 34): every strategy's own plan passes, with the MoE layer's GEMMs and the
// exchanges' parts as printed; a part that is not whole hidden rows, or more rows than the batch's tokens
// could choose, is named at its op's peer_bytes.
TEST(PlanSizes, MoeExchangesHoldWholeRowsWithinTheBatch) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  s.model = test::small_model();
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  s.model.moe.expert_ffn_hidden = 512;
  s.parallelism.expert = 8;
  const CostModel cost(s);
  int checked = 0;
  for (const SystemSpec& system : test::registered_variants(s.cluster.world_size(), {1})) {
    const plan::Plan p = make_strategy(system, s, cost)->make_plan(test::batch_of({5000, 1200, 300, 7}));
    if (!p.feasible() || !p.info.contains("moe_layer")) continue;
    ++checked;
    SCOPED_TRACE(system.label);
    EXPECT_TRUE(size_problems(p, cost).empty()) << text(size_problems(p, cost));
    for (const std::int64_t wrong : {std::int64_t{1}, std::int64_t{1} << 50}) {
      plan::Plan edited = p;
      for (Op& op : edited.ranks[2].ops) {
        if (op.name != "dispatch") continue;
        op.bytes += wrong - op.peer_bytes[0];
        op.peer_bytes[0] = wrong;
        break;
      }
      const std::vector<Problem> problems = size_problems(edited, cost);
      ASSERT_FALSE(problems.empty()) << "part " << wrong;
      EXPECT_NE(problems.front().where.json_path.find("peer_bytes"), std::string::npos) << text(problems);
    }
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace zb
