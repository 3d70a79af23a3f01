#include "core/strategies/zeppelin/partitioner.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

namespace zb::zeppelin {
namespace {

// Restores a min-heap on (load, rank) (std::greater order, as std::make_heap builds it) after its root
// grew: the root sinks below every smaller child.
void sift_down_min_heap(std::vector<std::pair<double, int>>& heap) {
  const std::size_t n = heap.size();
  std::size_t at = 0;
  const auto moving = heap[0];
  for (;;) {
    std::size_t child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && heap[child + 1] < heap[child]) ++child;
    if (!(heap[child] < moving)) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = moving;
}

constexpr double balance_tolerance = 0.05;  // a GPU may exceed the mean load by 5 % before we split more

struct Model {
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

  Model(const CostModel& c, const PartitionOptions& o, double tokens_per_rank)
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

  // Estimated per-rank seconds of a ring of p ranks over one sequence of s tokens.
  double ring_seconds(double s, int p) const {
    if (p <= 1) return local_seconds(s);
    const double c = s / p;
    const LinkSpec& link = p <= gpn ? cost.nvlink() : inter;
    const LinkClass cls = p <= gpn ? LinkClass::nvlink : LinkClass::nic;
    // The backward ring moves K, V and the dK, dV accumulators: three KV-sized transfers per step.
    // Each step is a call of its own, so it pays the call overhead (per pass).
    const double passes = opt.backward ? 2 : 1;
    const double compute = attention(c * c / 2, c / 2) + passes * cost.profile().attention_call_overhead;
    const double transfer = step_transfer(c, link, cls) * (opt.backward ? 3 : 1);
    return compute + (p - 1) * std::max(compute, transfer) + linear(c);
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
    const double p_load = load_target > 0 ? local / (load_target * (1 + balance_tolerance)) : 1;
    std::int64_t p = std::max<std::int64_t>({1, p_mem, static_cast<std::int64_t>(std::ceil(p_load - 1e-9))});
    if (p > gpn) p = ((p + gpn - 1) / gpn) * gpn;  // inter-node rings take whole nodes
    return static_cast<int>(std::min<std::int64_t>(p, std::numeric_limits<int>::max()));
  }
};

std::int64_t first_length_with(const std::function<bool(std::int64_t)>& pred) {
  std::int64_t lo = 1, hi = std::int64_t{1} << 40;
  if (!pred(hi)) return 0;  // never
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (pred(mid) ? hi : lo) = pred(mid) ? mid : mid + 1;
  }
  return lo;
}

}  // namespace

Partition partition(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                    const PartitionOptions& options, int micro_batch) {
  const double total_tokens = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  const Model m(cost, options, total_tokens / cost.cluster().world_size());
  Partition out;
  out.gpu_load.assign(static_cast<std::size_t>(m.world), 0.0);
  out.gpu_tokens.assign(static_cast<std::size_t>(m.world), 0);
  auto& load = out.gpu_load;
  auto& tokens = out.gpu_tokens;

  // Each document's local cost and ring degree, worked out once: the passes below ask for them repeatedly.
  std::vector<double> local_cost(lengths.size());
  double total = 0;
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    local_cost[d] = m.local_seconds(static_cast<double>(lengths[d]));
    total += local_cost[d];
  }
  const double target = total / m.world;
  std::vector<int> degree(lengths.size());
  for (std::size_t d = 0; d < lengths.size(); ++d) degree[d] = m.degree(lengths[d], target, local_cost[d]);
  auto& th = out.thresholds;
  th.hide_nvlink_tokens = m.hide_point(cost.nvlink(), LinkClass::nvlink);
  th.hide_internode_tokens = m.hide_point(m.inter, LinkClass::nic);
  th.load_target_seconds = target;
  th.local_below = first_length_with([&](std::int64_t s) { return m.degree(s, target) >= 2; });
  th.inter_from = first_length_with([&](std::int64_t s) { return m.degree(s, target) > m.gpn; });

  std::vector<int> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return lengths[static_cast<std::size_t>(a)] > lengths[static_cast<std::size_t>(b)];
  });

  auto add_oom = [&](int rank, std::int64_t need) {
    out.oom.push_back({rank, micro_batch, need, m.capacity});
  };

  if (!options.hierarchical) {
    GroupAssignment g;
    g.level =
        m.nodes > 1 ? plan::Level::inter_node : (m.world > 1 ? plan::Level::intra_node : plan::Level::local);
    for (int r = 0; r < m.world; ++r) g.ranks.push_back(r);
    g.docs = order;
    for (int d : order) {
      const auto s = lengths[static_cast<std::size_t>(d)];
      for (int r = 0; r < m.world; ++r) {
        load[static_cast<std::size_t>(r)] += m.ring_seconds(static_cast<double>(s), m.world);
        tokens[static_cast<std::size_t>(r)] += Model::rank_tokens(s, m.world);
      }
    }
    for (int r = 0; r < m.world; ++r) {
      if (tokens[static_cast<std::size_t>(r)] > m.capacity) add_oom(r, tokens[static_cast<std::size_t>(r)]);
    }
    out.groups.push_back(std::move(g));
    return out;
  }

  std::vector<GroupAssignment> inter, intra;
  std::vector<std::vector<int>> local(static_cast<std::size_t>(m.world));
  std::map<std::vector<int>, std::size_t> inter_by_ranks, intra_by_ranks;
  auto place_ring = [&](int doc, std::vector<int> ranks, plan::Level level) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    const int p = static_cast<int>(ranks.size());
    for (int r : ranks) {
      load[static_cast<std::size_t>(r)] += m.ring_seconds(static_cast<double>(s), p);
      tokens[static_cast<std::size_t>(r)] += Model::rank_tokens(s, p);
    }
    auto& groups = level == plan::Level::inter_node ? inter : intra;
    auto& index = level == plan::Level::inter_node ? inter_by_ranks : intra_by_ranks;
    const auto it = index.find(ranks);
    if (it != index.end()) {
      groups[it->second].docs.push_back(doc);
    } else {
      index.emplace(ranks, groups.size());
      groups.push_back({level, std::move(ranks), {doc}});
    }
  };
  auto node_load = [&](int node) {
    double l = 0;
    for (int i = 0; i < m.gpn; ++i) l += load[static_cast<std::size_t>(node * m.gpn + i)];
    return l;
  };

  // A ring of exactly p GPUs for `doc` where every member has room: p ≤ G → the least-loaded node with p
  // GPUs that have room (its p least-loaded ones); p > G → the least-loaded ⌈p/G⌉ whole nodes that all
  // have room. Returns false when no placement fits.
  auto try_ring = [&](int doc, int p) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    const std::int64_t need = Model::rank_tokens(s, p);
    auto room = [&](int r) { return tokens[static_cast<std::size_t>(r)] + need <= m.capacity; };
    if (p > m.gpn) {
      const int span = (p + m.gpn - 1) / m.gpn;
      if (span > m.nodes) return false;
      std::vector<int> nodes;
      for (int n = 0; n < m.nodes; ++n) {
        bool all = true;
        for (int i = 0; i < m.gpn && all; ++i) all = room(n * m.gpn + i);
        if (all) nodes.push_back(n);
      }
      if (static_cast<int>(nodes.size()) < span) return false;
      std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) { return node_load(a) < node_load(b); });
      nodes.resize(static_cast<std::size_t>(span));
      std::sort(nodes.begin(), nodes.end());
      std::vector<int> ranks;
      for (int n : nodes)
        for (int i = 0; i < m.gpn; ++i) ranks.push_back(n * m.gpn + i);
      place_ring(doc, std::move(ranks), span > 1 ? plan::Level::inter_node : plan::Level::intra_node);
      return true;
    }
    int best_node = -1;
    for (int n = 0; n < m.nodes; ++n) {
      int with_room = 0;
      for (int i = 0; i < m.gpn; ++i) with_room += room(n * m.gpn + i);
      if (with_room >= p && (best_node < 0 || node_load(n) < node_load(best_node))) best_node = n;
    }
    if (best_node < 0) return false;
    std::vector<int> gpus;
    for (int i = 0; i < m.gpn; ++i) {
      if (room(best_node * m.gpn + i)) gpus.push_back(best_node * m.gpn + i);
    }
    std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
      return load[static_cast<std::size_t>(a)] < load[static_cast<std::size_t>(b)];
    });
    gpus.resize(static_cast<std::size_t>(p));
    std::sort(gpus.begin(), gpus.end());
    place_ring(doc, std::move(gpus), plan::Level::intra_node);
    return true;
  };
  // The sequence's own degree first; when the GPUs it would use are full, wider rings (each rank holds
  // less of it): the rest of the node's sizes, then whole nodes. Only when even the whole cluster has no
  // room is it out of memory, reported on the rank with the least shortfall for the widest ring.
  auto place_widening = [&](int doc, int p) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    for (int q = p; q <= m.world; q = q < m.gpn ? q + 1 : q + m.gpn) {
      if (try_ring(doc, q)) return;
    }
    const std::int64_t need = Model::rank_tokens(s, m.world);
    const auto fullest = std::min_element(tokens.begin(), tokens.end());
    add_oom(static_cast<int>(fullest - tokens.begin()), *fullest + need);
  };

  for (int doc : order) {
    const int p = degree[static_cast<std::size_t>(doc)];
    if (p > 1) place_widening(doc, p);  // local sequences are placed below
  }

  // Local sequences, longest first, to the least-loaded GPU with room (LPT); one that fits no GPU's room
  // becomes the narrowest ring that fits.
  // A min-heap on (load, rank): the GPUs are taken in that order, those without room for this document
  // set aside and put back after, so the choice is the first in (load, rank) order with room.
  using Entry = std::pair<double, int>;
  std::vector<Entry> by_load;
  std::vector<Entry> no_room;
  auto rebuild = [&] {
    by_load.clear();
    for (int r = 0; r < m.world; ++r) by_load.emplace_back(load[static_cast<std::size_t>(r)], r);
    std::make_heap(by_load.begin(), by_load.end(), std::greater<>());
  };
  rebuild();
  for (int doc : order) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    if (degree[static_cast<std::size_t>(doc)] > 1) continue;
    // Usually the least-loaded GPU has room: its load then grows in place and sinks to its new position,
    // one sift instead of a pop and a push. The heap's layout never decides the choice (ranks are distinct).
    const bool top_has_room =
        !by_load.empty() && tokens[static_cast<std::size_t>(by_load.front().second)] + s <= m.capacity;
    int r = top_has_room ? by_load.front().second : -1;
    no_room.clear();
    while (r < 0 && !by_load.empty()) {
      std::pop_heap(by_load.begin(), by_load.end(), std::greater<>());
      const Entry top = by_load.back();
      by_load.pop_back();
      if (tokens[static_cast<std::size_t>(top.second)] + s <= m.capacity)
        r = top.second;
      else
        no_room.push_back(top);
    }
    for (const Entry& e : no_room) {
      by_load.push_back(e);
      std::push_heap(by_load.begin(), by_load.end(), std::greater<>());
    }
    if (r < 0) {
      place_widening(doc, 2);
      rebuild();  // the ring changed its members' loads
      continue;
    }
    load[static_cast<std::size_t>(r)] += local_cost[static_cast<std::size_t>(doc)];
    tokens[static_cast<std::size_t>(r)] += s;
    local[static_cast<std::size_t>(r)].push_back(doc);
    if (top_has_room) {
      by_load.front().first = load[static_cast<std::size_t>(r)];
      sift_down_min_heap(by_load);
    } else {
      by_load.emplace_back(load[static_cast<std::size_t>(r)], r);
      std::push_heap(by_load.begin(), by_load.end(), std::greater<>());
    }
  }

  // Refine: split the most loaded GPU's largest local sequence into a 2-GPU ring inside its node.
  for (int iter = 0; iter < 2 * m.world && m.gpn >= 2; ++iter) {
    const auto max_it = std::max_element(load.begin(), load.end());
    const int r = static_cast<int>(max_it - load.begin());
    const double mean = std::accumulate(load.begin(), load.end(), 0.0) / m.world;
    auto& mine = local[static_cast<std::size_t>(r)];
    if (*max_it <= mean * (1 + balance_tolerance) || mine.empty()) break;
    const auto big = std::max_element(mine.begin(), mine.end(), [&](int a, int b) {
      return lengths[static_cast<std::size_t>(a)] < lengths[static_cast<std::size_t>(b)];
    });
    const auto s = lengths[static_cast<std::size_t>(*big)];
    const int node = r / m.gpn;
    int partner = -1;
    for (int i = 0; i < m.gpn; ++i) {
      const int q = node * m.gpn + i;
      if (q == r || tokens[static_cast<std::size_t>(q)] + Model::rank_tokens(s, 2) > m.capacity) continue;
      if (partner < 0 || load[static_cast<std::size_t>(q)] < load[static_cast<std::size_t>(partner)])
        partner = q;
    }
    if (partner < 0) break;
    const double ring = m.ring_seconds(static_cast<double>(s), 2);
    const double own = local_cost[static_cast<std::size_t>(*big)];
    const double new_r = load[static_cast<std::size_t>(r)] - own + ring;
    const double new_p = load[static_cast<std::size_t>(partner)] + ring;
    if (std::max(new_r, new_p) >= load[static_cast<std::size_t>(r)]) break;
    const int doc = *big;
    mine.erase(big);
    load[static_cast<std::size_t>(r)] -= own;
    tokens[static_cast<std::size_t>(r)] -= s;
    place_ring(doc, {std::min(r, partner), std::max(r, partner)}, plan::Level::intra_node);
  }

  out.groups = std::move(inter);
  for (auto& g : intra) out.groups.push_back(std::move(g));
  for (int r = 0; r < m.world; ++r) {
    if (!local[static_cast<std::size_t>(r)].empty())
      out.groups.push_back({plan::Level::local, {r}, local[static_cast<std::size_t>(r)]});
  }
  return out;
}

}  // namespace zb::zeppelin
