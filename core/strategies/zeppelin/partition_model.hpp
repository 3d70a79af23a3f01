#pragma once
// The partitioner's cost estimates and degree rules (private to core/strategies/zeppelin's partitioner:
// partitioner.cpp and partition_steps.cpp). Every estimate a placement compares is one of these, so the
// steps stay free of cost-model arithmetic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/cost/cost_model.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"

namespace zb::zeppelin::detail {

inline constexpr double balance_tolerance =
    0.05;  // a GPU may exceed the mean load by 5 % before we split more

struct PartitionModel {
  const CostModel& cost;
  PartitionOptions opt;
  int world, gpn, nodes;
  std::int64_t capacity;
  LinkSpec inter;

  // A rank runs its GEMMs once over all the tokens it holds, and all its local sequences in one varlen
  // attention call, so a sequence's share is marginal: GEMM time per token at the size of a rank's
  // share of the micro-batch, attention without the call overhead. Charging each sequence its own calls
  // would overprice short sequences several times over, and the partition would move load onto the rings.
  double linear_per_token = 0;

  PartitionModel(const CostModel& c, const PartitionOptions& o, double tokens_per_rank)
      : cost(c),
        opt(o),
        world(c.cluster().world_size()),
        gpn(c.cluster().gpus_per_node),
        nodes(c.cluster().nodes),
        capacity(c.token_capacity_per_gpu()),
        inter(o.routing ? c.routed_internode() : c.nic_per_gpu()) {
    const double rows = std::max(1.0, tokens_per_rank);
    linear_per_token = (c.linear_fwd_time(rows) + (o.backward ? c.linear_bwd_time(rows) : 0.0)) / rows;
  }

  double linear(double tokens) const { return opt.include_linear ? tokens * linear_per_token : 0.0; }

  // Attention seconds of `pairs` causal pairs in calls of q query rows, both passes when the plan has a
  // backward one (its FLOP factor differs from the GEMMs', so balancing the forward alone leaves the
  // backward uneven), without call overheads.
  double attention(double pairs, double q) const {
    const double overhead = cost.profile().attention_call_overhead;
    double t = cost.attention_time(cost.attention_fwd_flops(pairs), q) - overhead;
    if (opt.backward) t += cost.attention_time(cost.attention_bwd_flops(pairs), q) - overhead;
    return std::max(0.0, t);
  }

  double local_seconds(double s) const { return attention(s * (s + 1) / 2, s) + linear(s); }

  // One zigzag ring step with per-rank chunk c: compute of ≈ c²/2 pairs against the transfer of c tokens' KV.
  double step_compute(double c) const {
    return cost.attention_time(cost.attention_fwd_flops(c * c / 2), c / 2);
  }
  double step_transfer(double c, const LinkSpec& link, LinkClass cls) const {
    return cost.transfer_time(cost.kv_bytes(c), link, cls);
  }

  // One zigzag step of a ring of p ranks over s tokens (p ≥ 2), both passes when planned: its compute
  // and its K/V transfer. The backward ring moves K, V and the dK, dV accumulators: three KV-sized
  // transfers per step. Each step is a call of its own, so it pays the call overhead (per pass).
  struct Step {
    double compute = 0;
    double transfer = 0;
  };
  Step ring_step(double s, int p) const {
    const double c = s / p;
    const LinkSpec& link = p <= gpn ? cost.nvlink() : inter;
    const LinkClass cls = p <= gpn ? LinkClass::nvlink : LinkClass::nic;
    const double passes = opt.backward ? 2 : 1;
    return {attention(c * c / 2, c / 2) + passes * cost.profile().attention_call_overhead,
            step_transfer(c, link, cls) * (opt.backward ? 3 : 1)};
  }

  // Estimated per-rank seconds of a ring of p ranks over one sequence of s tokens.
  double ring_seconds(double s, int p) const {
    if (p <= 1) return local_seconds(s);
    const Step step = ring_step(s, p);
    return step.compute + (p - 1) * std::max(step.compute, step.transfer) + linear(s / p);
  }
  // The part of ring_seconds a member spends waiting for K/V (transfer-bound steps): the engine fills it
  // with the rank's local work of the same micro-batch, so local sequences placed there cost nothing up to
  // it.
  double ring_wait(double s, int p) const {
    if (p <= 1) return 0;
    const Step step = ring_step(s, p);
    return (p - 1) * std::max(0.0, step.transfer - step.compute);
  }

  double hide_point(const LinkSpec& link, LinkClass cls) const {
    double lo = 1, hi = 1 << 24;
    if (step_compute(hi) < step_transfer(hi, link, cls)) return std::numeric_limits<double>::infinity();
    for (int i = 0; i < 60; ++i) {
      const double mid = (lo + hi) / 2;
      (step_compute(mid) >= step_transfer(mid, link, cls) ? hi : lo) = mid;
    }
    return hi;
  }

  // Tokens a rank holds for one sequence in a zigzag ring of p (padded chunks, an upper bound).
  static std::int64_t rank_tokens(std::int64_t s, int p) {
    return p <= 1 ? s : 2 * ((s + 2LL * p - 1) / (2LL * p));
  }

  int degree(std::int64_t s, double load_target) const {
    return degree(s, load_target, local_seconds(static_cast<double>(s)));
  }
  // The same, given the sequence's local_seconds (worked out once per document by the caller).
  int degree(std::int64_t s, double load_target, double local) const {
    const std::int64_t p_mem = capacity > 0 ? (s + capacity - 1) / capacity : std::numeric_limits<int>::max();
    const double p_load = opt.degrees == Degrees::memory || load_target <= 0
                              ? 1
                              : local / (load_target * (1 + balance_tolerance));
    std::int64_t p = std::max<std::int64_t>({1, p_mem, static_cast<std::int64_t>(std::ceil(p_load - 1e-9))});
    if (p > gpn) p = ((p + gpn - 1) / gpn) * gpn;  // inter-node rings take whole nodes
    if (p > 1 && p < gpn && opt.degrees == Degrees::node) p = gpn;
    if (p > 1 && p < gpn && opt.degrees != Degrees::balance) p = tiling_size(static_cast<int>(p));
    return static_cast<int>(std::min<std::int64_t>(p, std::numeric_limits<int>::max()));
  }
  // The smallest divisor of the node's GPU count that is at least p (p ≤ G).
  int tiling_size(int p) const {
    while (gpn % p != 0) ++p;
    return p;
  }
  // The ring size after q when a placement of q has no room: the next size inside a node (the next
  // tiling one unless the degrees are the paper's), then whole nodes.
  int wider(int q) const {
    if (q >= gpn) return q + gpn;
    if (opt.degrees == Degrees::node) return gpn;
    return opt.degrees == Degrees::balance ? q + 1 : tiling_size(q + 1);
  }
};

}  // namespace zb::zeppelin::detail
