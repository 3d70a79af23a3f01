#include "core/strategies/zeppelin/partitioner.hpp"

#include "core/strategies/zeppelin/ring_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

namespace zb::zeppelin {
namespace {

// Restores a min-heap on (load, bin) (std::greater order, as std::make_heap builds it) after its root
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

std::vector<int> ring_degrees(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                              const PartitionOptions& options) {
  const int k = std::max(1, options.micro_batches);
  const double total_tokens = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  const Model m(cost, options, total_tokens / cost.cluster().world_size() / k);
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
  const int k = std::max(1, options.micro_batches);
  const double total_tokens = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  // GEMMs run per micro-batch: their per-token time is taken at a rank's share of one micro-batch.
  const Model m(cost, options, total_tokens / cost.cluster().world_size() / k);
  Partition out;
  out.micro_batches = k;
  out.gpu_load.assign(static_cast<std::size_t>(m.world), 0.0);
  out.bin_load.assign(static_cast<std::size_t>(k),
                      std::vector<double>(static_cast<std::size_t>(m.world), 0.0));
  // Tokens per bin (micro-batch, GPU).
  std::vector<std::vector<std::int64_t>> tokens(
      static_cast<std::size_t>(k), std::vector<std::int64_t>(static_cast<std::size_t>(m.world), 0));
  // Per bin: the ring waits its local work could still fill (Model::ring_wait).
  std::vector<std::vector<double>> idle(static_cast<std::size_t>(k),
                                        std::vector<double>(static_cast<std::size_t>(m.world), 0.0));
  auto& load = out.gpu_load;
  auto& bin_load = out.bin_load;
  const auto at = [](auto& table, int mb, int r) -> auto& {
    return table[static_cast<std::size_t>(mb)][static_cast<std::size_t>(r)];
  };

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

  auto add_oom = [&](int rank, int mb, std::int64_t need) {
    out.oom.push_back({rank, mb, need, m.capacity});
  };
  auto finish_tokens = [&] {
    out.gpu_tokens.assign(static_cast<std::size_t>(m.world), 0);
    for (int mb = 0; mb < k; ++mb) {
      for (int r = 0; r < m.world; ++r)
        out.gpu_tokens[static_cast<std::size_t>(r)] =
            std::max(out.gpu_tokens[static_cast<std::size_t>(r)], at(tokens, mb, r));
    }
  };

  if (!options.hierarchical) {
    // Every document on one group of `width` GPUs (consecutive, whole nodes): all GPUs by default, one
    // group per micro-batch. With several groups, each document (longest first) goes to the group with the
    // least work so far whose emptiest micro-batch has room for it (else the least loaded), and there to
    // the micro-batch with the fewest tokens. The work is each document's cost on one GPU: a group splits
    // every document evenly (head-parallel: exactly), so its time follows the sum of its documents'.
    const int width = options.flat_width > 0 ? options.flat_width : m.world;
    const int sets = std::max(1, m.world / width);
    std::vector<GroupAssignment> rings(static_cast<std::size_t>(k * sets));  // by mb·sets + set
    std::vector<std::int64_t> bin_tokens(rings.size(), 0);
    std::vector<double> set_load(static_cast<std::size_t>(sets), 0.0);
    const auto emptiest = [&](int set) {
      int best = 0;
      for (int mb = 1; mb < k; ++mb)
        if (bin_tokens[static_cast<std::size_t>(mb * sets + set)] <
            bin_tokens[static_cast<std::size_t>(best * sets + set)])
          best = mb;
      return best;
    };
    for (int d : order) {
      const auto s = lengths[static_cast<std::size_t>(d)];
      const std::int64_t share = Model::rank_tokens(s, width);
      int set = 0, mb = 0;
      bool set_fits = false;
      for (int q = 0; q < sets; ++q) {
        const int q_mb = emptiest(q);
        const bool fits = at(tokens, q_mb, q * width) + share <= m.capacity;
        if (q == 0 || (fits && !set_fits) ||
            (fits == set_fits &&
             set_load[static_cast<std::size_t>(q)] < set_load[static_cast<std::size_t>(set)])) {
          set = q;
          mb = q_mb;
          set_fits = fits;
        }
      }
      const double seconds = m.ring_seconds(static_cast<double>(s), width);
      set_load[static_cast<std::size_t>(set)] += local_cost[static_cast<std::size_t>(d)];
      bin_tokens[static_cast<std::size_t>(mb * sets + set)] += s;
      rings[static_cast<std::size_t>(mb * sets + set)].docs.push_back(d);
      for (int r = set * width; r < (set + 1) * width; ++r) {
        load[static_cast<std::size_t>(r)] += seconds;
        at(bin_load, mb, r) += seconds;
        at(tokens, mb, r) += share;
      }
    }
    for (int mb = 0; mb < k; ++mb) {
      for (int r = 0; r < m.world; ++r) {
        if (at(tokens, mb, r) > m.capacity) add_oom(r, mb, at(tokens, mb, r));
      }
      for (int set = 0; set < sets; ++set) {
        GroupAssignment& g = rings[static_cast<std::size_t>(mb * sets + set)];
        if (g.docs.empty()) continue;
        g.level = width > m.gpn ? plan::Level::inter_node
                                : (width > 1 ? plan::Level::intra_node : plan::Level::local);
        for (int r = set * width; r < (set + 1) * width; ++r) g.ranks.push_back(r);
        g.micro_batch = mb;
        out.groups.push_back(std::move(g));
      }
    }
    finish_tokens();
    return out;
  }

  std::vector<GroupAssignment> inter, intra;
  std::vector<std::vector<int>> local(static_cast<std::size_t>(k * m.world));  // by bin mb·N + rank
  std::map<std::pair<int, std::vector<int>>, std::size_t> inter_by_ranks, intra_by_ranks;
  auto place_ring = [&](int doc, std::vector<int> ranks, plan::Level level, int mb) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    const int p = static_cast<int>(ranks.size());
    const double seconds = m.ring_seconds(static_cast<double>(s), p);
    const double wait = m.ring_wait(static_cast<double>(s), p);
    for (int r : ranks) {
      load[static_cast<std::size_t>(r)] += seconds;
      at(bin_load, mb, r) += seconds;
      at(idle, mb, r) += wait;
      at(tokens, mb, r) += Model::rank_tokens(s, p);
    }
    auto& groups = level == plan::Level::inter_node ? inter : intra;
    auto& index = level == plan::Level::inter_node ? inter_by_ranks : intra_by_ranks;
    const auto it = index.find({mb, ranks});
    if (it != index.end()) {
      groups[it->second].docs.push_back(doc);
    } else {
      index.emplace(std::make_pair(mb, ranks), groups.size());
      groups.push_back({level, std::move(ranks), {doc}, mb});
    }
  };
  // What a placement balances. With the remap every micro-batch ends in an all-to-all-v of every GPU, so
  // each micro-batch's busiest GPU sets its pace: a bin's own load. Without it nothing joins the GPUs
  // between micro-batches: a GPU's whole-iteration load (then the micro-batch only has to have room, and
  // rings take the earliest one, so that their members start them together).
  const bool per_bin = options.per_micro_batch;
  const auto gpu_key = [&](int r, int mb) {
    return per_bin ? at(bin_load, mb, r) : load[static_cast<std::size_t>(r)];
  };
  const auto node_key = [&](int node, int mb) {
    double l = 0;
    for (int i = 0; i < m.gpn; ++i) l += gpu_key(node * m.gpn + i, mb);
    return l;
  };

  // A ring of exactly p GPUs for `doc` in the micro-batch and on the GPUs where they are least loaded and
  // every member has room: p ≤ G → a node with p GPUs that have room (its p least-loaded ones); p > G →
  // ⌈p/G⌉ whole nodes that all have room. Returns false when no placement fits.
  auto try_ring = [&](int doc, int p) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    const std::int64_t need = Model::rank_tokens(s, p);
    if (p > m.gpn) {
      const int span = (p + m.gpn - 1) / m.gpn;
      if (span > m.nodes) return false;
      int best_mb = -1;
      double best_score = 0;
      std::vector<int> best_nodes;
      for (int mb = 0; mb < k; ++mb) {
        std::vector<int> nodes;
        for (int n = 0; n < m.nodes; ++n) {
          bool all = true;
          for (int i = 0; i < m.gpn && all; ++i) all = at(tokens, mb, n * m.gpn + i) + need <= m.capacity;
          if (all) nodes.push_back(n);
        }
        if (static_cast<int>(nodes.size()) < span) continue;
        std::stable_sort(nodes.begin(), nodes.end(),
                         [&](int a, int b) { return node_key(a, mb) < node_key(b, mb); });
        nodes.resize(static_cast<std::size_t>(span));
        double score = 0;
        for (int n : nodes) score = std::max(score, node_key(n, mb));
        if (best_mb < 0 || score < best_score) best_mb = mb, best_score = score, best_nodes = nodes;
      }
      if (best_mb < 0) return false;
      std::sort(best_nodes.begin(), best_nodes.end());
      std::vector<int> ranks;
      for (int n : best_nodes)
        for (int i = 0; i < m.gpn; ++i) ranks.push_back(n * m.gpn + i);
      place_ring(doc, std::move(ranks), span > 1 ? plan::Level::inter_node : plan::Level::intra_node,
                 best_mb);
      return true;
    }
    int best_node = -1, best_mb = -1;
    for (int mb = 0; mb < k; ++mb) {
      for (int n = 0; n < m.nodes; ++n) {
        int with_room = 0;
        for (int i = 0; i < m.gpn; ++i) with_room += at(tokens, mb, n * m.gpn + i) + need <= m.capacity;
        if (with_room >= p && (best_node < 0 || node_key(n, mb) < node_key(best_node, best_mb)))
          best_node = n, best_mb = mb;
      }
    }
    if (best_node < 0) return false;
    std::vector<int> gpus;
    for (int i = 0; i < m.gpn; ++i) {
      if (at(tokens, best_mb, best_node * m.gpn + i) + need <= m.capacity)
        gpus.push_back(best_node * m.gpn + i);
    }
    std::stable_sort(gpus.begin(), gpus.end(),
                     [&](int a, int b) { return gpu_key(a, best_mb) < gpu_key(b, best_mb); });
    gpus.resize(static_cast<std::size_t>(p));
    std::sort(gpus.begin(), gpus.end());
    place_ring(doc, std::move(gpus), plan::Level::intra_node, best_mb);
    return true;
  };
  // The sequence's own degree first; when the GPUs it would use are full, wider rings (each rank holds
  // less of it): the rest of the node's sizes, then whole nodes. Only when even the whole cluster has no
  // room is it out of memory, reported on the bin with the least shortfall for the widest ring.
  auto place_widening = [&](int doc, int p) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    for (int q = p; q <= m.world; q = m.wider(q)) {
      if (try_ring(doc, q)) return;
    }
    const std::int64_t need = Model::rank_tokens(s, m.world);
    int fullest_mb = 0, fullest_rank = 0;
    for (int mb = 0; mb < k; ++mb) {
      for (int r = 0; r < m.world; ++r) {
        if (at(tokens, mb, r) < at(tokens, fullest_mb, fullest_rank)) fullest_mb = mb, fullest_rank = r;
      }
    }
    add_oom(fullest_rank, fullest_mb, at(tokens, fullest_mb, fullest_rank) + need);
  };

  for (int doc : order) {
    const int p = degree[static_cast<std::size_t>(doc)];
    if (p > 1) place_widening(doc, p);  // local sequences are placed below
  }

  // Local sequences, longest first, to the least-loaded place with room (LPT): a bin (micro-batch-major
  // numbering, so ties fill micro-batch 0 first) or, balancing whole GPUs, a GPU, in its micro-batch with
  // the most room. One that fits nowhere becomes the narrowest ring that fits. A min-heap on (load,
  // place): the places are taken in that order, those without room for this document set aside and put
  // back after, so the choice is the first in (load, place) order with room.
  using Entry = std::pair<double, int>;
  const int places = per_bin ? k * m.world : m.world;
  const auto bin_rank = [&](int bin) { return bin % m.world; };
  const auto bin_mb = [&](int bin) { return bin / m.world; };
  // The bin a place offers a document of s tokens, −1 without room: a GPU's micro-batch whose rings
  // still wait the longest, else its roomiest.
  const auto bin_for = [&](int place, std::int64_t s) {
    if (per_bin) return at(tokens, bin_mb(place), bin_rank(place)) + s <= m.capacity ? place : -1;
    int best = -1;
    for (int mb = 0; mb < k; ++mb) {
      if (at(tokens, mb, place) + s > m.capacity) continue;
      if (best < 0 || std::make_pair(at(idle, mb, place), -at(tokens, mb, place)) >
                          std::make_pair(at(idle, best, place), -at(tokens, best, place)))
        best = mb;
    }
    return best < 0 ? -1 : best * m.world + place;
  };
  // A place's load as a local sequence sees it: what its rings wait for is free to fill.
  const auto idle_of = [&](int place) {
    if (per_bin) return at(idle, bin_mb(place), bin_rank(place));
    double sum = 0;
    for (int mb = 0; mb < k; ++mb) sum += at(idle, mb, place);
    return sum;
  };
  const auto place_load = [&](int place) {
    return (per_bin ? at(bin_load, bin_mb(place), bin_rank(place)) : load[static_cast<std::size_t>(place)]) -
           idle_of(place);
  };
  std::vector<Entry> by_load;
  std::vector<Entry> no_room;
  auto rebuild = [&] {
    by_load.clear();
    for (int place = 0; place < places; ++place) by_load.emplace_back(place_load(place), place);
    std::make_heap(by_load.begin(), by_load.end(), std::greater<>());
  };
  rebuild();
  // Bins whose rings wait for K/V: a local sequence whose cost fits such a wait runs there for free (the
  // engine puts it between the ring's steps), so it goes there first, to the bin that waits the longest.
  std::vector<int> waiting;
  for (int bin = 0; bin < k * m.world; ++bin) {
    if (at(idle, bin_mb(bin), bin_rank(bin)) > 0) waiting.push_back(bin);
  }
  const auto free_bin = [&](int doc) {
    int best = -1;
    const auto s = lengths[static_cast<std::size_t>(doc)];
    for (const int bin : waiting) {
      const double w = at(idle, bin_mb(bin), bin_rank(bin));
      if (w < local_cost[static_cast<std::size_t>(doc)] ||
          at(tokens, bin_mb(bin), bin_rank(bin)) + s > m.capacity)
        continue;
      if (best < 0 || w > at(idle, bin_mb(best), bin_rank(best))) best = bin;
    }
    return best;
  };
  for (int doc : order) {
    const auto s = lengths[static_cast<std::size_t>(doc)];
    if (degree[static_cast<std::size_t>(doc)] > 1) continue;
    if (const int bin = waiting.empty() ? -1 : free_bin(doc); bin >= 0) {
      at(idle, bin_mb(bin), bin_rank(bin)) -= local_cost[static_cast<std::size_t>(doc)];
      at(tokens, bin_mb(bin), bin_rank(bin)) += s;
      local[static_cast<std::size_t>(bin)].push_back(doc);
      continue;
    }
    // A free placement raised its bin's load as seen here (its wait shrank): entries only ever grow, so a
    // stale root is corrected and sunk before it is trusted.
    while (!by_load.empty() && by_load.front().first < place_load(by_load.front().second)) {
      by_load.front().first = place_load(by_load.front().second);
      sift_down_min_heap(by_load);
    }
    // Usually the least-loaded place has room: its load then grows in place and sinks to its new
    // position, one sift instead of a pop and a push. The heap's layout never decides the choice (places
    // are distinct).
    int bin = by_load.empty() ? -1 : bin_for(by_load.front().second, s);
    const bool top_has_room = bin >= 0;
    no_room.clear();
    Entry taken{0.0, -1};
    while (bin < 0 && !by_load.empty()) {
      std::pop_heap(by_load.begin(), by_load.end(), std::greater<>());
      const Entry top = by_load.back();
      by_load.pop_back();
      bin = bin_for(top.second, s);
      if (bin >= 0)
        taken = top;
      else
        no_room.push_back(top);
    }
    for (const Entry& e : no_room) {
      by_load.push_back(e);
      std::push_heap(by_load.begin(), by_load.end(), std::greater<>());
    }
    if (bin < 0) {
      place_widening(doc, 2);
      rebuild();  // the ring changed its members' loads
      continue;
    }
    const int r = bin_rank(bin), mb = bin_mb(bin);
    // What fills a ring's wait in its bin adds no time; the rest does.
    const double absorbed = std::min(at(idle, mb, r), local_cost[static_cast<std::size_t>(doc)]);
    at(idle, mb, r) -= absorbed;
    load[static_cast<std::size_t>(r)] += local_cost[static_cast<std::size_t>(doc)] - absorbed;
    at(bin_load, mb, r) += local_cost[static_cast<std::size_t>(doc)] - absorbed;
    at(tokens, mb, r) += s;
    local[static_cast<std::size_t>(bin)].push_back(doc);
    const int place = per_bin ? bin : r;
    if (top_has_room) {
      by_load.front().first = place_load(place);
      sift_down_min_heap(by_load);
    } else {
      by_load.emplace_back(place_load(taken.second), taken.second);
      std::push_heap(by_load.begin(), by_load.end(), std::greater<>());
    }
  }

  // Refine: split the most loaded place's largest local sequence into a 2-GPU ring inside its node, in the
  // sequence's micro-batch, while that lowers the most loaded place's load.
  const auto bins_of = [&](int place) {
    std::vector<int> bins;
    if (per_bin) return std::vector<int>{place};
    for (int mb = 0; mb < k; ++mb) bins.push_back(mb * m.world + place);
    return bins;
  };
  for (int iter = 0; iter < 2 * places && m.gpn >= 2; ++iter) {
    int worst = 0;
    double sum = 0;
    for (int place = 0; place < places; ++place) {
      sum += place_load(place);
      if (place_load(place) > place_load(worst)) worst = place;
    }
    const double worst_load = place_load(worst);
    if (worst_load <= sum / places * (1 + balance_tolerance)) break;
    int big_bin = -1;
    std::size_t big_at = 0;
    for (const int bin : bins_of(worst)) {
      const auto& docs = local[static_cast<std::size_t>(bin)];
      for (std::size_t i = 0; i < docs.size(); ++i) {
        if (big_bin < 0 ||
            lengths[static_cast<std::size_t>(docs[i])] >
                lengths[static_cast<std::size_t>(local[static_cast<std::size_t>(big_bin)][big_at])])
          big_bin = bin, big_at = i;
      }
    }
    if (big_bin < 0) break;
    auto& mine = local[static_cast<std::size_t>(big_bin)];
    const int doc = mine[big_at];
    const int r = bin_rank(big_bin), mb = bin_mb(big_bin);
    const auto s = lengths[static_cast<std::size_t>(doc)];
    const int node = r / m.gpn;
    int partner = -1;
    for (int i = 0; i < m.gpn; ++i) {
      const int q = node * m.gpn + i;
      if (q == r || at(tokens, mb, q) + Model::rank_tokens(s, 2) > m.capacity) continue;
      if (partner < 0 || gpu_key(q, mb) < gpu_key(partner, mb)) partner = q;
    }
    if (partner < 0) break;
    const double ring = m.ring_seconds(static_cast<double>(s), 2);
    const double own = local_cost[static_cast<std::size_t>(doc)];
    const double new_r = gpu_key(r, mb) - own + ring;
    const double new_p = gpu_key(partner, mb) + ring;
    if (std::max(new_r, new_p) >= worst_load) break;
    mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(big_at));
    load[static_cast<std::size_t>(r)] -= own;
    at(bin_load, mb, r) -= own;
    at(tokens, mb, r) -= s;
    place_ring(doc, {std::min(r, partner), std::max(r, partner)}, plan::Level::intra_node, mb);
  }

  // Balancing each GPU, rings are lined up across micro-batches
  // (core/strategies/zeppelin/ring_alignment.hpp).
  if (!per_bin && k > 1)
    align_ring_starts(lengths, local_cost, m.world, m.capacity, inter, intra, local, tokens, bin_load,
                      [&](std::int64_t s, int p) { return m.ring_seconds(static_cast<double>(s), p); });

  for (int mb = 0; mb < k; ++mb) {
    for (auto& g : inter)
      if (g.micro_batch == mb) out.groups.push_back(std::move(g));
    for (auto& g : intra)
      if (g.micro_batch == mb) out.groups.push_back(std::move(g));
    for (int r = 0; r < m.world; ++r) {
      auto& docs = local[static_cast<std::size_t>(mb * m.world + r)];
      if (!docs.empty()) out.groups.push_back({plan::Level::local, {r}, std::move(docs), mb});
    }
  }
  finish_tokens();
  return out;
}

}  // namespace zb::zeppelin
