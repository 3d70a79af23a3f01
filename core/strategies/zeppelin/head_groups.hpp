#pragma once
// Zeppelin's `heads: auto` (an extension beyond the paper, docs/STRATEGIES.md § zeppelin step 10): which of
// a partition's rings run head-parallel instead (Ulysses inside a node, USP's u × r across u-groups), as
// one more of the engine's divergent strategies. The partition stays as it is; a ring of P GPUs becomes a
// u × r group of the same GPUs (u·r = P, u a usable Ulysses degree, each u-group inside one node) where
// its members' memory holds the all-to-all's received rows. The planner weighs the result by its estimate.
#include <optional>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/strategies/head_parallel.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"

namespace zb::zeppelin {

// Which groups may turn head-parallel: none (the paper's rings) or every ring of two or more GPUs.
enum class HeadGroups { none, all };

struct HeadGroupOptions {
  HeadGroups which = HeadGroups::none;
  std::vector<int> degrees;  // usable Ulysses degrees u, ascending (ulysses_degrees)
  int kv_heads = 1;          // K/V heads per TP rank
};

// A group turned head-parallel: its shape and its GPUs ordered u-group by u-group.
struct HeadGroup {
  HeadParallelShape shape;
  std::vector<int> ranks;
};

// Per group of `part` (same order): its head-parallel form, or none (it stays a ring or local). The widest
// u whose u-groups each lie in one node and fit every member's memory in that micro-batch is taken.
[[nodiscard]] std::vector<std::optional<HeadGroup>> head_groups(const Partition& part, const CostModel& cost,
                                                                const std::vector<std::int64_t>& lengths,
                                                                const HeadGroupOptions& options);

}  // namespace zb::zeppelin
