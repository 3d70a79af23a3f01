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

// Hydraulis's per-strategy time T_g(s), from the cost model: one GPU's seconds per layer for a document
// of s tokens on a zigzag ring of g GPUs (GEMMs of s/g tokens, plus the larger of its attention share and
// the ring's K/V transfers, which overlap it), forward and, when planned, backward. Tabulated for every
// power-of-two size up to the world when built.
class HydraulisCosts {
 public:
  HydraulisCosts(const CostModel& cost, const std::vector<std::int64_t>& lengths, Passes passes);

  [[nodiscard]] double time(int doc, int size) const;
  // Whether one GPU's zigzag share of the document fits its token capacity.
  [[nodiscard]] bool fits(int doc, int size) const;
  // The fixed cost of one micro-batch on a group (its ring steps' kernel calls): Hydraulis's `c`.
  [[nodiscard]] double micro_batch_overhead(int size) const;
  [[nodiscard]] std::int64_t share(int doc, int size) const;
  [[nodiscard]] std::int64_t capacity() const { return capacity_; }
  [[nodiscard]] std::size_t documents() const { return lengths_.size(); }

 private:
  const CostModel& cost_;
  const std::vector<std::int64_t>& lengths_;
  Passes passes_;
  std::int64_t capacity_;
  std::vector<std::vector<double>> by_size_;  // [log2 size][doc]
  std::vector<std::vector<char>> fits_;       // [log2 size][doc]: dispatch asks for every document and size
};

// The candidate pool for `world` GPUs, each a multiset of sizes in descending order: every homogeneous
// {C × world/C} (C a power of two dividing the world), and every two-size mix of k groups of B and the
// rest in groups of b < B (B, b, k powers of two, k·B < world).
[[nodiscard]] std::vector<std::vector<int>> hydraulis_pool(int world);

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

// Stage 2 for one group: micro-batch counts v from ⌈tokens / capacity⌉ up to 16 values (at most one
// document each), each packed by LPT under the capacity (costliest document to the cheapest micro-batch
// with room); keeps the v minimising (largest micro-batch time + c) · v, Hydraulis's objective at one
// pipeline stage. First-fit decreasing when no v in the range packs. Returns the packs (batch indices).
struct Packing {
  std::vector<std::vector<int>> packs;
  double seconds = 0;  // the objective of the kept v
};
[[nodiscard]] Packing pack_group(const HydraulisCosts& costs, int size, const std::vector<int>& docs);

}  // namespace zb
