#include "core/strategies/zeppelin/partitioner.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/strategies/zeppelin/partition_model.hpp"
#include "core/strategies/zeppelin/partition_steps.hpp"

namespace zb::zeppelin {
namespace {

std::int64_t first_length_with(const std::function<bool(std::int64_t)>& pred) {
  std::int64_t lo = 1, hi = std::int64_t{1} << 40;
  if (!pred(hi)) return 0;  // never
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (pred(mid) ? hi : lo) = pred(mid) ? mid : mid + 1;
  }
  return lo;
}

// GEMMs run per micro-batch: their per-token time is taken at a rank's share of one micro-batch.
detail::PartitionModel model_of(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                                const PartitionOptions& options) {
  const int k = std::max(1, options.micro_batches);
  const double total_tokens = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  return detail::PartitionModel(cost, options, total_tokens / cost.cluster().world_size() / k);
}

}  // namespace

std::vector<int> ring_degrees(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                              const PartitionOptions& options) {
  const detail::PartitionModel m = model_of(lengths, cost, options);
  std::vector<double> local_cost(lengths.size());
  double total = 0;
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    local_cost[d] = m.local_seconds(static_cast<double>(lengths[d]));
    total += local_cost[d];
  }
  std::vector<int> degree(lengths.size());
  for (std::size_t d = 0; d < lengths.size(); ++d)
    degree[d] = m.degree(lengths[d], total / m.world, local_cost[d]);
  return degree;
}

Partition partition(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                    const PartitionOptions& options) {
  return partition(lengths, longest_first(lengths), cost, options);
}

// Equal lengths keep the batch's order, so the plan is deterministic. A stable LSD radix sort on
// (longest − length), 11 bits a pass: lengths are bounded by the context (two passes up to 4M tokens), so
// it is O(documents) where a comparison sort was O(n log n) with a cache miss per comparison (62 ms for
// the half a million documents of 8192 GPUs × 64K tokens; this takes 11). Negative lengths or lengths
// 2^32 apart (never from a validated batch) fall back to the comparison sort of (−length, index), the
// same order.
std::vector<int> longest_first(const std::vector<std::int64_t>& lengths) {
  const std::size_t n = lengths.size();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (n < 2) return order;
  const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
  if (*shortest < 0 || *longest - *shortest > std::int64_t{0xffffffff}) {
    std::vector<std::pair<std::int64_t, int>> keyed(n);
    for (std::size_t d = 0; d < n; ++d) keyed[d] = {-lengths[d], static_cast<int>(d)};
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < n; ++i) order[i] = keyed[i].second;
    return order;
  }
  // Each document as (key << 32 | index), so that the passes read no length: keys up to 2^32 − 1 (a
  // longer spread of lengths, never from a validated batch, sorts by comparison above).
  constexpr int digit_bits = 11;
  constexpr std::uint64_t digit_mask = (std::uint64_t{1} << digit_bits) - 1;
  const auto top = static_cast<std::uint64_t>(*longest);
  std::vector<std::uint64_t> keyed(n), scratch(n);
  for (std::size_t d = 0; d < n; ++d)
    keyed[d] = (top - static_cast<std::uint64_t>(lengths[d])) << 32 | static_cast<std::uint64_t>(d);
  std::vector<std::size_t> start(digit_mask + 2);
  const std::uint64_t widest = top - static_cast<std::uint64_t>(*shortest);
  for (int shift = 32; shift < 64 && (widest >> (shift - 32)) != 0; shift += digit_bits) {
    std::fill(start.begin(), start.end(), 0);
    for (const std::uint64_t v : keyed) ++start[((v >> shift) & digit_mask) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (const std::uint64_t v : keyed) scratch[start[(v >> shift) & digit_mask]++] = v;
    keyed.swap(scratch);
  }
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<int>(keyed[i] & 0xffffffffU);
  return order;
}

Partition partition(const std::vector<std::int64_t>& lengths, const std::vector<int>& order,
                    const CostModel& cost, const PartitionOptions& options) {
  if (order.size() != lengths.size())
    throw std::invalid_argument("zeppelin::partition: an order of " + std::to_string(order.size()) +
                                " documents for a batch of " + std::to_string(lengths.size()) +
                                " (pass longest_first of the same lengths)");
  return detail::Partitioner(lengths, order, cost, options).run();
}

namespace detail {

Partitioner::Partitioner(const std::vector<std::int64_t>& lengths, const std::vector<int>& order,
                         const CostModel& cost, const PartitionOptions& options)
    : lengths_(lengths),
      order_(order),
      cost_(cost),
      options_(options),
      k_(std::max(1, options.micro_batches)),
      m_(model_of(lengths, cost, options)),
      per_bin_(options.per_micro_batch),
      places_(per_bin_ ? k_ * m_.world : m_.world),
      tokens_(static_cast<std::size_t>(k_), std::vector<std::int64_t>(static_cast<std::size_t>(m_.world), 0)),
      idle_(static_cast<std::size_t>(k_), std::vector<double>(static_cast<std::size_t>(m_.world), 0.0)),
      local_(static_cast<std::size_t>(k_ * m_.world)) {
  out_.micro_batches = k_;
  out_.gpu_load.assign(static_cast<std::size_t>(m_.world), 0.0);
  out_.bin_load.assign(static_cast<std::size_t>(k_),
                       std::vector<double>(static_cast<std::size_t>(m_.world), 0.0));
}

// Steps 1 and 2 (the cost of every document, its degree, the hide points), then either the flat form or
// steps 3 and 4: rings first, longest first, because they need several GPUs with room at once and the
// local sequences can fill around them; then the local sequences; then the refinement, which only ever
// turns a local sequence into a ring.
Partition Partitioner::run() {
  cost_documents();
  set_thresholds();
  if (!options_.hierarchical) {
    partition_flat();
  } else {
    place_rings();
    place_locals();
    refine();
    // Balancing each GPU, rings are lined up across micro-batches (ring_alignment.hpp).
    if (!per_bin_ && k_ > 1) align_rings();
    collect_groups();
  }
  finish_tokens();
  return std::move(out_);
}

void Partitioner::cost_documents() {
  local_cost_.assign(lengths_.size(), 0.0);
  double total = 0;
  for (std::size_t d = 0; d < lengths_.size(); ++d) {
    local_cost_[d] = m_.local_seconds(static_cast<double>(lengths_[d]));
    total += local_cost_[d];
  }
  target_ = total / m_.world;
  degree_.assign(lengths_.size(), 0);
  for (std::size_t d = 0; d < lengths_.size(); ++d)
    degree_[d] = m_.degree(lengths_[d], target_, local_cost_[d]);
}

// Reported with the plan, so that a reader sees where the classes begin for this batch.
void Partitioner::set_thresholds() {
  auto& th = out_.thresholds;
  th.hide_nvlink_tokens = m_.hide_point(cost_.nvlink(), LinkClass::nvlink);
  th.hide_internode_tokens = m_.hide_point(m_.inter, LinkClass::nic);
  th.load_target_seconds = target_;
  th.local_below = first_length_with([&](std::int64_t s) { return m_.degree(s, target_) >= 2; });
  th.inter_from = first_length_with([&](std::int64_t s) { return m_.degree(s, target_) > m_.gpn; });
}

// Every document on one group of `width` GPUs (consecutive, whole nodes): all GPUs by default, one group
// per micro-batch. With several groups, each document (longest first) goes to the group with the least work
// so far whose emptiest micro-batch has room for it (else the least loaded), and there to the micro-batch
// with the fewest tokens. The work is each document's cost on one GPU: a group splits every document
// evenly (head-parallel: exactly), so its time follows the sum of its documents'.
void Partitioner::partition_flat() {
  const int width = options_.flat_width > 0 ? options_.flat_width : m_.world;
  const int sets = std::max(1, m_.world / width);
  std::vector<GroupAssignment> rings(static_cast<std::size_t>(k_ * sets));  // by mb·sets + set
  std::vector<std::int64_t> bin_tokens(rings.size(), 0);
  std::vector<double> set_load(static_cast<std::size_t>(sets), 0.0);
  // The sets by (work, index): the least loaded first, ties to the lowest index. A document takes the first
  // set in this order that has room, else the first: a walk that usually stops at the first set, where
  // scanning every set for every document took 12.7 s of planning at 16384 GPUs (1M documents, 2048 sets).
  std::set<std::pair<double, int>> by_load;
  for (int q = 0; q < sets; ++q) by_load.emplace(0.0, q);
  const auto emptiest = [&](int set) {
    int best = 0;
    for (int mb = 1; mb < k_; ++mb)
      if (bin_tokens[static_cast<std::size_t>(mb * sets + set)] <
          bin_tokens[static_cast<std::size_t>(best * sets + set)])
        best = mb;
    return best;
  };
  for (int d : order_) {
    const auto s = length(d);
    const std::int64_t share = PartitionModel::rank_tokens(s, width);
    int set = by_load.begin()->second;
    int mb = emptiest(set);
    for (const auto& [load, q] : by_load) {
      const int q_mb = emptiest(q);
      if (at(tokens_, q_mb, q * width) + share <= m_.capacity) {
        set = q;
        mb = q_mb;
        break;
      }
    }
    const double seconds = m_.ring_seconds(static_cast<double>(s), width);
    by_load.erase({set_load[static_cast<std::size_t>(set)], set});
    set_load[static_cast<std::size_t>(set)] += local_cost(d);
    by_load.emplace(set_load[static_cast<std::size_t>(set)], set);
    bin_tokens[static_cast<std::size_t>(mb * sets + set)] += s;
    rings[static_cast<std::size_t>(mb * sets + set)].docs.push_back(d);
    for (int r = set * width; r < (set + 1) * width; ++r) {
      out_.gpu_load[static_cast<std::size_t>(r)] += seconds;
      at(out_.bin_load, mb, r) += seconds;
      at(tokens_, mb, r) += share;
    }
  }
  for (int mb = 0; mb < k_; ++mb) {
    for (int r = 0; r < m_.world; ++r) {
      if (at(tokens_, mb, r) > m_.capacity) add_oom(r, mb, at(tokens_, mb, r));
    }
    for (int set = 0; set < sets; ++set) {
      GroupAssignment& g = rings[static_cast<std::size_t>(mb * sets + set)];
      if (g.docs.empty()) continue;
      g.level = width > m_.gpn ? plan::Level::inter_node
                               : (width > 1 ? plan::Level::intra_node : plan::Level::local);
      for (int r = set * width; r < (set + 1) * width; ++r) g.ranks.push_back(r);
      g.micro_batch = mb;
      out_.groups.push_back(std::move(g));
    }
  }
}

// The groups in the order partitioner.hpp promises: by micro-batch, inside one inter-node rings, then
// intra-node rings, then each GPU's local documents.
void Partitioner::collect_groups() {
  for (int mb = 0; mb < k_; ++mb) {
    for (auto& g : inter_)
      if (g.micro_batch == mb) out_.groups.push_back(std::move(g));
    for (auto& g : intra_)
      if (g.micro_batch == mb) out_.groups.push_back(std::move(g));
    for (int r = 0; r < m_.world; ++r) {
      auto& docs = local_[static_cast<std::size_t>(mb * m_.world + r)];
      if (!docs.empty()) out_.groups.push_back({plan::Level::local, {r}, std::move(docs), mb});
    }
  }
}

// A GPU's memory holds one micro-batch at a time: what it needs is its fullest micro-batch's tokens.
void Partitioner::finish_tokens() {
  out_.gpu_tokens.assign(static_cast<std::size_t>(m_.world), 0);
  for (int mb = 0; mb < k_; ++mb) {
    for (int r = 0; r < m_.world; ++r)
      out_.gpu_tokens[static_cast<std::size_t>(r)] =
          std::max(out_.gpu_tokens[static_cast<std::size_t>(r)], at(tokens_, mb, r));
  }
}

void Partitioner::add_oom(int rank, int mb, std::int64_t need) {
  out_.oom.push_back({rank, mb, need, m_.capacity});
}

}  // namespace detail
}  // namespace zb::zeppelin
