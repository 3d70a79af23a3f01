#include "core/strategies/zeppelin/engine.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "core/lower/lower.hpp"

namespace zb::zeppelin {
namespace {

// One rank's local sequences not yet given a call, by their marginal forward seconds (a varlen call's
// overhead is paid once per call, so a sequence is charged its attention without it).
using Pending = std::multimap<double, int>;

class Engine {
 public:
  Engine(PlanBuilder& b, const CostModel& cost, const EngineOptions& options, const std::vector<int>& ready)
      : b_(b),
        cost_(cost),
        options_(options),
        ready_(ready),
        world_(b.world_size()),
        free_at_(static_cast<std::size_t>(world_), 0.0),
        pending_(static_cast<std::size_t>(world_)),
        local_group_(static_cast<std::size_t>(world_), -1),
        ops_(static_cast<std::size_t>(world_)) {}

  std::vector<std::vector<int>> run(const std::vector<int>& groups, const PlanBuilder::RouteFn& route,
                                    const std::map<int, HeadParallelGroup>& heads) {
    std::vector<int> rings;
    for (const int gid : groups) {
      const plan::Group& g = b_.plan().groups[static_cast<std::size_t>(gid)];
      if (g.ranks.size() > 1 || heads.count(gid) > 0) {
        rings.push_back(gid);
        continue;
      }
      const int r = g.ranks.front();
      local_group_[static_cast<std::size_t>(r)] = gid;
      const double overhead = cost_.profile().attention_call_overhead;
      for (const int seq : g.sequences) {
        const auto s = static_cast<double>(b_.plan().sequences[static_cast<std::size_t>(seq)].length);
        const double seconds = cost_.attention_time(cost_.attention_fwd_flops(s * (s + 1) / 2), s) - overhead;
        pending_[static_cast<std::size_t>(r)].emplace(std::max(0.0, seconds), seq);
      }
    }
    for (const int gid : rings) {
      const auto hp = heads.find(gid);
      if (hp == heads.end())
        emit_ring(gid, route);
      else
        emit_head_parallel(hp->second, route);
    }
    // What no wait held: one call per rank after its rings.
    for (int r = 0; r < world_; ++r) {
      auto& left = pending_[static_cast<std::size_t>(r)];
      if (left.empty()) continue;
      std::vector<int> seqs;
      for (auto it = left.rbegin(); it != left.rend(); ++it) seqs.push_back(it->second);
      left.clear();
      add_call(r, seqs);
    }
    return std::move(ops_);
  }

 private:
  // Seconds one step's K/V transfer takes on the ring's link (the largest chunk a position holds).
  double step_transfer(const plan::Group& g) const {
    std::int64_t chunk = 0;
    for (int pos = 0; pos < static_cast<int>(g.ranks.size()); ++pos)
      chunk = std::max(chunk, b_.zigzag_rank_tokens(g, pos));
    const int gpn = b_.plan().gpus_per_node;
    const bool one_node = g.ranks.front() / gpn == g.ranks.back() / gpn;
    const double bytes = cost_.kv_bytes(static_cast<double>(chunk));
    if (one_node) return cost_.transfer_time(bytes, cost_.nvlink(), LinkClass::nvlink);
    return cost_.transfer_time(bytes, options_.routing ? cost_.routed_internode() : cost_.nic_per_gpu(),
                               LinkClass::nic);
  }

  void emit_ring(int gid, const PlanBuilder::RouteFn& route) {
    const plan::Group g = b_.plan().groups[static_cast<std::size_t>(gid)];
    const int p = static_cast<int>(g.ranks.size());
    const double transfer = step_transfer(g);
    std::vector<int> ring_ready;
    for (const int r : g.ranks) ring_ready.push_back(ready_[static_cast<std::size_t>(r)]);
    const auto after_step = [&](int pos, int step, int op) {
      const int r = g.ranks[static_cast<std::size_t>(pos)];
      const plan::Op& o = b_.plan().ranks[static_cast<std::size_t>(r)].ops[static_cast<std::size_t>(op)];
      double& free_at = free_at_[static_cast<std::size_t>(r)];
      free_at = std::max(free_at, step * transfer) + lower::attention_seconds(o, cost_, Pass::fwd);
      if (step + 1 < p) fill(r, (step + 1) * transfer - free_at);
    };
    const auto ids = b_.add_attention(gid, ring_ready, route, after_step);
    for (int pos = 0; pos < p; ++pos) {
      auto& mine = ops_[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)])];
      mine.insert(mine.end(), ids[static_cast<std::size_t>(pos)].begin(),
                  ids[static_cast<std::size_t>(pos)].end());
    }
  }

  // A head-parallel group in its place among the rings; its members' streams are busy with it until its
  // attention is done, which the waits of later rings count from (its all-to-alls are not estimated).
  void emit_head_parallel(const HeadParallelGroup& g, const PlanBuilder::RouteFn& route) {
    std::vector<int> member_ready;
    std::vector<std::size_t> first_new;  // per member: its first op of this group
    for (const int r : g.ranks) {
      member_ready.push_back(ready_[static_cast<std::size_t>(r)]);
      first_new.push_back(b_.plan().ranks[static_cast<std::size_t>(r)].ops.size());
    }
    const auto ids = add_head_parallel_attention(b_, cost_, g, member_ready, route);
    for (std::size_t k = 0; k < g.ranks.size(); ++k) {
      const auto r = static_cast<std::size_t>(g.ranks[k]);
      ops_[r].insert(ops_[r].end(), ids[k].begin(), ids[k].end());
      const auto& added = b_.plan().ranks[r].ops;
      for (std::size_t i = first_new[k]; i < added.size(); ++i) {
        if (added[i].kind == plan::OpKind::attention)
          free_at_[r] += lower::attention_seconds(added[i], cost_, Pass::fwd);
      }
    }
  }

  // Local sequences of rank r whose call fits `wait` seconds, the longest that fit first.
  void fill(int r, double wait) {
    auto& pending = pending_[static_cast<std::size_t>(r)];
    double budget = wait - cost_.profile().attention_call_overhead;
    std::vector<int> seqs;
    double taken = 0;
    while (budget > 0 && !pending.empty()) {
      auto it = pending.upper_bound(budget);
      if (it == pending.begin()) break;
      --it;
      budget -= it->first;
      taken += it->first;
      seqs.push_back(it->second);
      pending.erase(it);
    }
    if (seqs.empty()) return;
    add_call(r, seqs);
    free_at_[static_cast<std::size_t>(r)] += taken + cost_.profile().attention_call_overhead;
  }

  void add_call(int r, const std::vector<int>& seqs) {
    const int ready = ready_[static_cast<std::size_t>(r)];
    const int id = b_.add_local_attention(local_group_[static_cast<std::size_t>(r)], seqs,
                                          ready >= 0 ? std::vector<int>{ready} : std::vector<int>{});
    if (id >= 0) ops_[static_cast<std::size_t>(r)].push_back(id);
  }

  PlanBuilder& b_;
  const CostModel& cost_;
  EngineOptions options_;
  const std::vector<int>& ready_;
  int world_;
  std::vector<double> free_at_;        // per rank: when its compute stream frees, from the rings' start
  std::vector<Pending> pending_;       // per rank
  std::vector<int> local_group_;       // per rank: its local group of this micro-batch, −1 = none
  std::vector<std::vector<int>> ops_;  // per rank: attention op ids
};

}  // namespace

std::vector<std::vector<int>> emit_attention(PlanBuilder& b, const CostModel& cost,
                                             const EngineOptions& options, const std::vector<int>& groups,
                                             const std::vector<int>& ready, const PlanBuilder::RouteFn& route,
                                             const std::map<int, HeadParallelGroup>& heads) {
  return Engine(b, cost, options, ready).run(groups, route, heads);
}

}  // namespace zb::zeppelin
