#pragma once
// ulysses: DeepSpeed-Ulysses head-parallel attention, and USP's u × r hybrid (Fang & Zhao, arXiv
// 2405.07719). Shared by ulysses.cpp (options, degree choice, registration) and ulysses_plan.cpp (the
// plan). See docs/STRATEGIES.md § ulysses.
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/config/system_catalog.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/strategies/packed_cp.hpp"

namespace zb {

struct UlyssesSetup {
  std::string system;
  std::string strategy;
  int degree = 1;  // u: the head-parallel (all-to-all) group, inside one node
  int ring = 1;    // r: u-groups on a zigzag ring (USP); 1 = plain Ulysses
  Passes passes = Passes::fwd_bwd;
  Dealing dealing = Dealing::balanced;
  // K/V heads the strategy splits (per TP rank): u ≤ kv_heads splits them, otherwise each member gets a
  // replica of the one K/V head its query heads read (u must then be a multiple of kv_heads).
  int kv_heads = 1;
};

// The fraction of one token's K/V bytes a member receives for its heads: 1/u when the K/V heads split,
// 1/kv_heads when they are replicated.
[[nodiscard]] double ulysses_kv_share(const UlyssesSetup& setup);

// Per-GPU memory of a pack of `padded` tokens, in token-equivalents of the GPU's capacity M: the
// member's sequence share S/C of every layer's activations, plus one layer's received Q/K/V rows of its
// u-group's other tokens for its heads, plus (USP) two ring K/V buffers of a u-group's tokens.
[[nodiscard]] double ulysses_pack_need(const CostModel& cost, const UlyssesSetup& setup, std::int64_t padded);
// The largest pack (padded tokens) whose need fits M.
[[nodiscard]] std::int64_t ulysses_pack_capacity(const CostModel& cost, const UlyssesSetup& setup);
// What a document's length is padded to when packs are budgeted: 2·ring·degree, so that a member's rows of
// a document (its 1/degree of each of its two zigzag chunks, rounded up) never exceed padded/(ring·degree).
[[nodiscard]] std::int64_t ulysses_alignment(const UlyssesSetup& setup);

// What a Ulysses degree must suit: the model's heads and K/V heads, the GPUs per node of the grid the
// strategy plans on (the TP groups of a node under tensor parallelism `tensor`), and `tensor`.
struct UlyssesModelFacts {
  int heads = 1;
  int kv_heads = 1;
  int gpus_per_node = 1;
  int tensor = 1;
};
// Why u cannot be a Ulysses degree ("" = it can): it must divide the query heads per TP rank and the GPUs
// per node, and divide or be a multiple of the K/V heads per rank; the reason names the model's counts.
[[nodiscard]] std::string ulysses_degree_problem(const UlyssesModelFacts& facts, int u);
// The same for the strategy's cost model (the TP grid's, so its nodes are the grid's).
[[nodiscard]] std::string ulysses_degree_problem(const CostModel& cost, int tensor, int u);
// The loader's check of a fixed `degree` option against the scenario's model and node (the validation
// hook, so `validate` refuses it): a problem at "degree" saying why and which degrees would do; none for
// "auto" and "per-batch", or when the context lacks the model or the node.
[[nodiscard]] std::vector<OptionProblem> ulysses_degree_option_problems(const nlohmann::json& options,
                                                                        const SystemCheckContext& context);
// The powers of two usable as the degree, ascending.
[[nodiscard]] std::vector<int> ulysses_degrees(const CostModel& cost, int tensor);
// u and r for a batch (setup's other fields kept): the fixed ones (> 0), or "auto": the smallest degree
// in `degrees` whose group holds the longest document, with no ring while a u-group holds it, else the
// narrowest ring r that does.
[[nodiscard]] UlyssesSetup ulysses_shape(UlyssesSetup setup, const CostModel& cost,
                                         const std::vector<int>& degrees,
                                         const std::vector<std::int64_t>& lengths, int fixed_degree,
                                         int fixed_ring);
// A lower bound on the compute and all-to-all time of the busiest rank of plan_ulysses(setup, ...) over
// one iteration's layers, in O(documents): what Zeppelin's planner asks before planning USP's layout.
[[nodiscard]] double ulysses_compute_floor(const UlyssesSetup& setup, const CostModel& cost,
                                           const std::vector<std::int64_t>& lengths);

// The plan of one batch: D = N/(u·r) groups of consecutive ranks, documents dealt as uniform-cp deals
// them; per pack, each member's Q/K/V all-to-all over its u-group, attention for its heads (whole
// documents, or a zigzag ring across the r u-groups), and the O all-to-all back. An OOM plan when a
// document's pack does not fit.
[[nodiscard]] plan::Plan plan_ulysses(const UlyssesSetup& setup, const CostModel& cost,
                                      const std::vector<std::int64_t>& lengths);

}  // namespace zb
