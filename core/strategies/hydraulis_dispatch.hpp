#pragma once
// The hydraulis baseline's two-stage data assignment (Hydraulis, SIGMOD 2025; Hetu
// examples/hydraulis/strategy/new_dynamic.py), on heterogeneous CP groups: a candidate is a multiset of
// power-of-two group sizes summing to the world; stage 1 dispatches documents to its groups minimising
// the largest group time, stage 2 packs each group's documents into micro-batches. Semantics and
// deviations: docs/STRATEGIES.md "hydraulis".
#include <cstdint>
#include <optional>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"

namespace zb {

// What a group of g GPUs is (docs/STRATEGIES.md "hydraulis"):
//   tensor   a model replica with Megatron tensor parallelism of width g and sequence parallelism, as
//            Hydraulis runs them: every GPU of it holds whole documents for H/g heads and 1/g of the GEMMs;
//   context  a zigzag ring-CP group of g GPUs (the earlier variant, comparing assignment policy only).
enum class HydraulisGroups { tensor, context };

// Hydraulis's per-strategy time T_g(s), from the cost model: one GPU's seconds per layer for a document of
// s tokens on a group of g, forward and, when planned, backward. Context groups: the GEMMs of s/g tokens
// plus the larger of its zigzag attention share and the ring's K/V transfers, which overlap it. Tensor
// groups: the GEMMs and attention of all s tokens on a TP-g group (1/g of the FLOPs at full rows) plus the
// sequence-parallel all-gathers and reduce-scatters on NVLink (four per layer forward, four backward).
// Tabulated for every power-of-two size the groups may take when built.
class HydraulisCosts {
 public:
  HydraulisCosts(const CostModel& cost, const std::vector<std::int64_t>& lengths, Passes passes,
                 HydraulisGroups groups = HydraulisGroups::context);

  [[nodiscard]] double time(int doc, int size) const;
  // Whether the document fits a group of `size` (share(doc, size) ≤ capacity(size)).
  [[nodiscard]] bool fits(int doc, int size) const;
  // The fixed cost of one micro-batch on a group (its kernel calls): Hydraulis's `c`.
  [[nodiscard]] double micro_batch_overhead(int size) const;
  // Tokens one GPU of the group holds of the document, and what one GPU of a group of `size` may hold.
  [[nodiscard]] std::int64_t share(int doc, int size) const;
  [[nodiscard]] std::int64_t capacity(int size) const;
  [[nodiscard]] std::size_t documents() const { return lengths_.size(); }
  // The widest group size tabulated (tensor groups: the widest TP the model and a node allow).
  [[nodiscard]] int widest() const { return 1 << (static_cast<int>(by_size_.size()) - 1); }
  [[nodiscard]] HydraulisGroups groups() const { return groups_; }

 private:
  const CostModel& cost_;
  const std::vector<std::int64_t>& lengths_;
  Passes passes_;
  HydraulisGroups groups_;
  std::vector<std::int64_t> capacity_;        // [log2 size]
  std::vector<std::vector<double>> by_size_;  // [log2 size][doc]
  std::vector<std::vector<char>> fits_;       // [log2 size][doc]: dispatch asks for every document and size
};

// The widest tensor-parallel width a replica may take: a power of two within a node that divides the
// model's query and K/V heads (Megatron's TP requirement).
[[nodiscard]] int hydraulis_widest_tp(const CostModel& cost);

// The candidate pool for `world` GPUs, each a multiset of sizes in descending order: every homogeneous
// {C × world/C} (C a power of two dividing the world), and every two-size mix of k groups of B and the
// rest in groups of b < B (B, b, k powers of two, k·B < world).
[[nodiscard]] std::vector<std::vector<int>> hydraulis_pool(int world);
// The pool with every size at most `widest` (tensor groups stay within one node and the heads).
[[nodiscard]] std::vector<std::vector<int>> hydraulis_pool(int world, int widest);

// Stage 1 for groups of `sizes` (descending) taking documents in `order`: documents only the largest
// size holds go there first, the rest each to the group that minimises the largest group time (an empty
// group on ties, then the larger size). Returns the documents per group, or nullopt when a document fits
// no group, or when `allow_idle` is false and a group got none (Hetu rejects such a candidate).
struct Dispatch {
  std::vector<std::vector<int>> group_docs;
  double makespan = 0;  // the largest group's Σ T
};
[[nodiscard]] std::optional<Dispatch> dispatch_documents(const HydraulisCosts& costs,
                                                         const std::vector<int>& sizes,
                                                         const std::vector<int>& order, bool allow_idle);

// How stage 2 solves a group's packing at each micro-batch count v (docs/STRATEGIES.md "hydraulis"):
// LPT always; with `milp`, then Hetu's MILP (hydraulis_milp, CBC) warm-started from LPT's packing, for
// the counts whose objective it could still improve, each solve bounded by `node_limit` branch-and-bound
// nodes (deterministic) and `seconds` of wall time (Hetu's 0.5 s).
struct Stage2Solver {
  bool milp = false;
  int node_limit = 0;
  double seconds = 0.5;
};

// Stage 2 for one group: micro-batch counts v from ⌈tokens / capacity⌉ up to 16 values (at most one
// document each), each packed by LPT under the capacity (costliest document to the cheapest micro-batch
// with room) and, with the MILP, solved further; keeps the v minimising (largest micro-batch time + c)·v,
// Hydraulis's objective at one pipeline stage. First-fit decreasing when no v in the range packs.
// Returns the packs (batch indices) and what the MILP did.
struct Packing {
  std::vector<std::vector<int>> packs;
  double seconds = 0;     // the objective of the kept v
  int milp_solves = 0;    // MILP calls made
  int milp_improved = 0;  // of them, how many beat LPT's packing
  int milp_proven = 0;    // of them, how many proved their packing optimal
  double milp_wall = 0;   // wall seconds spent in them
};
[[nodiscard]] Packing pack_group(const HydraulisCosts& costs, int size, const std::vector<int>& docs,
                                 const Stage2Solver& solver = {});

}  // namespace zb
