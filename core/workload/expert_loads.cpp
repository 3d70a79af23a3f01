#include "core/workload/expert_loads.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace zb {
namespace {

double max_over_mean(const std::vector<std::int64_t>& values) {
  if (values.empty()) return 1;
  const std::int64_t total = std::accumulate(values.begin(), values.end(), std::int64_t{0});
  if (total == 0) return 1;
  const double mean = static_cast<double>(total) / static_cast<double>(values.size());
  return static_cast<double>(*std::max_element(values.begin(), values.end())) / mean;
}

}  // namespace

ExpertLoads::ExpertLoads(int ranks_, int experts_)
    : ranks(ranks_),
      experts(experts_),
      routed(static_cast<std::size_t>(ranks_) * static_cast<std::size_t>(experts_), 0),
      dropped(routed.size(), 0) {}

std::int64_t ExpertLoads::routed_of(int rank, int expert) const {
  return routed.at(static_cast<std::size_t>(rank) * static_cast<std::size_t>(experts) +
                   static_cast<std::size_t>(expert));
}

std::int64_t ExpertLoads::dropped_of(int rank, int expert) const {
  return dropped.at(static_cast<std::size_t>(rank) * static_cast<std::size_t>(experts) +
                    static_cast<std::size_t>(expert));
}

std::vector<std::int64_t> ExpertLoads::tokens_per_expert() const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(experts), 0);
  for (int rank = 0; rank < ranks; ++rank) {
    for (int expert = 0; expert < experts; ++expert)
      out[static_cast<std::size_t>(expert)] += routed_of(rank, expert);
  }
  return out;
}

std::int64_t ExpertLoads::total_routed() const {
  return std::accumulate(routed.begin(), routed.end(), std::int64_t{0});
}

std::int64_t ExpertLoads::total_dropped() const {
  return std::accumulate(dropped.begin(), dropped.end(), std::int64_t{0});
}

double expert_load_imbalance(const ExpertLoads& loads) {
  return max_over_mean(loads.tokens_per_expert());
}

std::vector<std::int64_t> tokens_received_per_rank(const ExpertLoads& loads, int expert_degree) {
  const int e = expert_degree;
  if (e < 1 || loads.ranks % e != 0 || loads.experts % e != 0) {
    throw std::invalid_argument("tokens_received_per_rank: expert degree " + std::to_string(e) +
                                " must divide the " + std::to_string(loads.ranks) + " ranks and the " +
                                std::to_string(loads.experts) + " experts");
  }
  const int local_experts = loads.experts / e;
  std::vector<std::int64_t> received(static_cast<std::size_t>(loads.ranks), 0);
  for (int rank = 0; rank < loads.ranks; ++rank) {
    const int group_start = rank - rank % e;
    const int first_expert = (rank % e) * local_experts;
    for (int sender = group_start; sender < group_start + e; ++sender) {
      for (int expert = first_expert; expert < first_expert + local_experts; ++expert)
        received[static_cast<std::size_t>(rank)] += loads.routed_of(sender, expert);
    }
  }
  return received;
}

double rank_load_imbalance(const ExpertLoads& loads, int expert_degree) {
  return max_over_mean(tokens_received_per_rank(loads, expert_degree));
}

}  // namespace zb
