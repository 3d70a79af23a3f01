// What `run --plan` checks of a plan's sizes (core/run/plan_sizes.hpp), as a specification:
//   * every strategy's own plan, over random clusters and batches, with and without tensor parallelism,
//     has the sizes the scenario's model implies (an unedited dump is never refused);
//   * one edited size, on a random K/V send and its recv, a random GEMM's m, n or k, or a remap's bytes,
//     is found and named at its op's JSON path, whatever the strategy.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/rng.hpp"
#include "core/lower/lower.hpp"
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

}  // namespace
}  // namespace zb
