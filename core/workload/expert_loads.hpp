#pragma once
// What one MoE layer's router did in one iteration: per rank (the owner of the tokens) and expert, how many
// token × expert choices were kept and how many dropped beyond capacity; and the load-imbalance figures of
// docs/METRICS.md ("Expert load imbalance") computed from them.
#include <cstdint>
#include <vector>

namespace zb {

struct ExpertLoads {
  int ranks = 0;
  int experts = 0;
  std::vector<std::int64_t> routed;    // [rank × experts + expert]: choices that reach the expert
  std::vector<std::int64_t> dropped;   // same shape: choices beyond the expert's capacity on that rank
  std::vector<std::int64_t> capacity;  // per rank: choices an expert takes from it; empty when dropless

  ExpertLoads() = default;
  ExpertLoads(int ranks, int experts);

  [[nodiscard]] std::int64_t routed_of(int rank, int expert) const;
  [[nodiscard]] std::int64_t dropped_of(int rank, int expert) const;
  [[nodiscard]] std::vector<std::int64_t> tokens_per_expert() const;  // Σ over ranks of routed
  [[nodiscard]] std::int64_t total_routed() const;
  [[nodiscard]] std::int64_t total_dropped() const;
};

// max over experts / mean over experts of tokens_per_expert(); 1 when perfectly even, and when nothing
// was routed.
[[nodiscard]] double expert_load_imbalance(const ExpertLoads& loads);

// The tokens each rank's experts receive under expert parallelism of degree `expert_degree`: ranks are
// grouped e consecutive at a time, rank r holds experts [(r mod e)·E/e, (r mod e + 1)·E/e), and it receives
// the routed choices of its group's ranks for those experts. Throws std::invalid_argument unless e divides
// both the ranks and the experts.
[[nodiscard]] std::vector<std::int64_t> tokens_received_per_rank(const ExpertLoads& loads, int expert_degree);

// max over ranks / mean over ranks of tokens_received_per_rank(); 1 when even or empty.
[[nodiscard]] double rank_load_imbalance(const ExpertLoads& loads, int expert_degree);

}  // namespace zb
