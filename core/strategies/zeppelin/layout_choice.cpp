#include "core/strategies/zeppelin/layout_choice.hpp"

#include <algorithm>

#include "core/strategies/zeppelin/remap.hpp"

namespace zb::zeppelin {
namespace {

// The slowest rank's remap time for one layer's forward pass: Q, K, V rows in and O rows back out, each
// rank's bytes split between NVLink (same node) and its NIC share (other nodes).
double remap_seconds(const std::vector<plan::RemapMove>& moves, const CostModel& cost, int world) {
  const int g = cost.cluster().gpus_per_node;
  const double per_token = cost.qkv_bytes(1) + cost.hidden_bytes(1);
  std::vector<double> intra(static_cast<std::size_t>(world), 0.0),
      inter(static_cast<std::size_t>(world), 0.0);
  for (const auto& m : moves) {
    auto& side = m.src / g == m.dst / g ? intra : inter;
    const double bytes = per_token * static_cast<double>(m.range.size());
    side[static_cast<std::size_t>(m.src)] += bytes;
    side[static_cast<std::size_t>(m.dst)] += bytes;
  }
  double worst = 0;
  for (int r = 0; r < world; ++r) {
    worst = std::max(
        worst,
        cost.transfer_time(intra[static_cast<std::size_t>(r)], cost.nvlink(), LinkClass::nvlink) +
            cost.transfer_time(inter[static_cast<std::size_t>(r)], cost.nic_per_gpu(), LinkClass::nic));
  }
  return worst;
}

double max_load(const Partition& p) {
  return p.gpu_load.empty() ? 0 : *std::max_element(p.gpu_load.begin(), p.gpu_load.end());
}

}  // namespace

std::vector<std::vector<plan::Shard>> partition_shards(const std::vector<std::int64_t>& lengths,
                                                       const Partition& partition, int world_size) {
  std::vector<std::vector<plan::Shard>> shards(static_cast<std::size_t>(world_size));
  for (const auto& g : partition.groups) {
    const int parts = static_cast<int>(g.ranks.size());
    for (int doc : g.docs) {
      const auto len = lengths[static_cast<std::size_t>(doc)];
      for (int pos = 0; pos < parts; ++pos) {
        auto& mine = shards[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)])];
        const auto owned = plan::owned_shards(doc, len, parts, pos);
        mine.insert(mine.end(), owned.begin(), owned.end());
      }
    }
  }
  return shards;
}

LayoutChoice choose_layout(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                           PartitionOptions options, bool remap_allowed, int micro_batch) {
  options.include_linear = true;
  LayoutChoice choice;
  choice.partition = partition(lengths, cost, options, micro_batch);
  choice.without_remap_seconds = max_load(choice.partition);
  if (!remap_allowed) return choice;

  options.include_linear = false;
  Partition attention_only = partition(lengths, cost, options, micro_batch);
  if (!attention_only.oom.empty()) return choice;
  const int world = cost.cluster().world_size();
  std::int64_t total = 0;
  for (auto s : lengths) total += s;
  const auto moves =
      balance_tokens(partition_shards(lengths, attention_only, world), cost.cluster().gpus_per_node).moves;
  const double rank_tokens = static_cast<double>((total + world - 1) / world);
  // With a backward pass the GEMMs run again (their gradients) and the remap moves the gradients back.
  const double passes = options.backward ? 2.0 : 1.0;
  const double balanced_linear =
      cost.linear_fwd_time(rank_tokens) + (options.backward ? cost.linear_bwd_time(rank_tokens) : 0.0);
  choice.with_remap_seconds =
      max_load(attention_only) + balanced_linear + passes * remap_seconds(moves, cost, world);
  if (choice.with_remap_seconds <= choice.without_remap_seconds || !choice.partition.oom.empty()) {
    choice.partition = std::move(attention_only);
    choice.remap = true;
  }
  return choice;
}

}  // namespace zb::zeppelin
