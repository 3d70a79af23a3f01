// hybrid-dp: the Zeppelin paper's Hybrid DP baseline, ByteScale's Hybrid Data Parallelism (HDP). Each
// document gets only as many GPUs as its memory needs: one that fits a GPU runs there whole (data
// parallel, local attention, no CP traffic); a longer one gets the smallest zigzag ring that holds it
// (the smallest power of two ≥ ⌈s/M⌉ GPUs; the oracle form takes whole consecutive nodes beyond a node).
// Assignment: documents, largest estimated work first (FLOPs; the oracle form: the cost model's
// seconds), go to the GPU or group of consecutive GPUs of their size with the least estimated load so far,
// into the first micro-batch where those GPUs have room; a micro-batch partitions the GPUs into groups, so
// rings of different sizes never share a GPU at once. See docs/STRATEGIES.md "hybrid-dp". The layout lives in
// the strategy engine so that Zeppelin's planner can weigh it as a candidate; core/strategies/hybrid_dp.cpp
// registers the baseline.
#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/strategies/hybrid_dp_layout.hpp"
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/packing.hpp"
#include "core/strategies/plan_builder.hpp"

namespace zb {
namespace {

// Ranks [first, first + size) holding one micro-batch's documents of one group size.
struct Placement {
  int first = 0;
  int size = 0;
};

struct HdpPack {
  int micro_batch = 0;
  Placement where;
  std::vector<int> docs;         // batch indices
  std::int64_t rank_tokens = 0;  // padded tokens each of its ranks holds
};

// Tokens one rank of a ring of `p` holds for a document of `s` (zigzag pads to 2p; a GPU alone holds s).
std::int64_t rank_tokens(std::int64_t s, int p) {
  return p == 1 ? s : pad_to(s, 2LL * p) / p;
}

// The GPUs the form groups: its node shape and whether groups beyond a node are powers of two.
struct Shape {
  int gpus_per_node = 1;
  int nodes = 1;
  HybridDpForm form = HybridDpForm::published;
  [[nodiscard]] int world() const { return gpus_per_node * nodes; }
};

// The group size a document needs: powers of two up to a node, then whole nodes (oracle) or powers of
// two up to the world (published, ByteScale's ⌈s/C⌉ rounded as Megatron's gpus_needed); 0 when even the
// widest group cannot hold it.
int group_size(std::int64_t s, std::int64_t capacity, const Shape& shape) {
  const int below = shape.form == HybridDpForm::published ? shape.world() : shape.gpus_per_node;
  for (int p = 1; p <= below; p *= 2) {
    if (rank_tokens(s, p) <= capacity) return p;
  }
  if (shape.form == HybridDpForm::published) return 0;
  for (int k = 1; k <= shape.nodes; ++k) {
    if (rank_tokens(s, k * shape.gpus_per_node) <= capacity) return k * shape.gpus_per_node;
  }
  return 0;
}

// Where a group of `p` may sit: aligned blocks inside each node (so smaller groups tile larger ones);
// beyond a node, runs of whole consecutive nodes (oracle) or blocks aligned at multiples of p (published).
std::vector<Placement> placements(int p, const Shape& shape) {
  const int gpn = shape.gpus_per_node;
  std::vector<Placement> out;
  if (p <= gpn && (p & (p - 1)) == 0) {
    for (int n = 0; n < shape.nodes; ++n) {
      for (int j = 0; (j + 1) * p <= gpn; ++j) out.push_back({n * gpn + j * p, p});
    }
  } else if (shape.form == HybridDpForm::published) {
    for (int first = 0; first + p <= shape.world(); first += p) out.push_back({first, p});
  } else {
    for (int n = 0; n + p / gpn <= shape.nodes; ++n) out.push_back({n * gpn, p});
  }
  return out;
}

// Each rank's estimated load, with a tournament tree over the ranks (each node the lower-loaded of its
// children, the lower rank on ties), so that the least-loaded single GPU (the placement of every document
// that fits one, most of a batch) is found in O(1) and kept in O(log N) per update, instead of a scan of
// all N GPUs per document.
class RankLoads {
 public:
  explicit RankLoads(int world) : load_(static_cast<std::size_t>(world), 0.0) {
    while (leaves_ < load_.size()) leaves_ *= 2;
    winner_.assign(2 * leaves_, -1);
    for (std::size_t r = 0; r < load_.size(); ++r) winner_[leaves_ + r] = static_cast<int>(r);
    for (std::size_t n = leaves_ - 1; n >= 1; --n) winner_[n] = better(winner_[2 * n], winner_[2 * n + 1]);
  }
  // The least-loaded placement of `p` GPUs (by its busiest rank), the lowest ranks on ties.
  Placement least(int p, const Shape& shape) {
    if (p == 1) return {winner_[1], 1};
    auto [it, fresh] = placements_.try_emplace(p);
    if (fresh) it->second = placements(p, shape);
    Placement best;
    double best_load = 0;
    for (const Placement& pl : it->second) {
      const double l = *std::max_element(load_.begin() + pl.first, load_.begin() + pl.first + pl.size);
      if (best.size == 0 || l < best_load) best = pl, best_load = l;
    }
    return best;
  }
  void add(const Placement& where, double per_rank) {
    for (int r = where.first; r < where.first + where.size; ++r) {
      load_[static_cast<std::size_t>(r)] += per_rank;
      for (std::size_t n = (leaves_ + static_cast<std::size_t>(r)) / 2; n >= 1; n /= 2) {
        winner_[n] = better(winner_[2 * n], winner_[2 * n + 1]);
      }
    }
  }

 private:
  // The rank of the two with the lower load, the lower rank on ties; −1 (a padding leaf) never wins.
  int better(int a, int b) const {
    if (a < 0 || b < 0) return a < 0 ? b : a;
    return load_[static_cast<std::size_t>(b)] < load_[static_cast<std::size_t>(a)] ? b : a;
  }

  std::vector<double> load_;
  std::size_t leaves_ = 1;
  std::vector<int> winner_;                           // [node]: heap layout, leaves from `leaves_` on
  std::map<int, std::vector<Placement>> placements_;  // by group size, built on first use
};

// The work one rank of a ring of `p` does on a document of `s` per layer, forward and (when planned)
// backward, its zigzag share of the attention plus its GEMMs; communication is left out. Published: their
// FLOPs, all a planner knows from the lengths (the paper's "FLOP-based assignment"). Oracle: the seconds
// the cost model charges, attention at its chunk length.
double rank_cost(const CostModel& cost, std::int64_t length, int p, Passes passes, HybridDpForm form) {
  const auto s = static_cast<double>(length);
  const double pairs = s * (s + 1) / 2 / p;
  if (form == HybridDpForm::published) {
    double flops = cost.attention_fwd_flops(pairs) + cost.linear_fwd_flops(s / p);
    if (passes == Passes::fwd_bwd) flops += cost.attention_bwd_flops(pairs) + cost.linear_bwd_flops(s / p);
    return flops;
  }
  const double q = std::max(1.0, p == 1 ? s : s / (2.0 * p));
  double t = cost.attention_time(cost.attention_fwd_flops(pairs), q) + cost.linear_fwd_time(s / p);
  if (passes == Passes::fwd_bwd)
    t += cost.attention_time(cost.attention_bwd_flops(pairs), q) + cost.linear_bwd_time(s / p);
  return t;
}

class HybridDpPlanner {
 public:
  HybridDpPlanner(const HybridDpSetup& setup, const CostModel& cost)
      : system_(setup.system),
        strategy_(setup.strategy),
        passes_(setup.passes),
        shape_{cost.cluster().gpus_per_node, cost.cluster().nodes, setup.form},
        cost_(cost) {}

  plan::Plan make_plan(const std::vector<std::int64_t>& lengths) const {
    const std::int64_t capacity = cost_.token_capacity_per_gpu();
    const std::vector<int> size = group_sizes(lengths);
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      if (size[d] > 0) continue;
      // Too long for the widest group: an OOM naming the document, never a silent split.
      const int widest = widest_group();
      plan::Plan p =
          oom_plan(cost_, system_, strategy_, lengths, {{0, 0, rank_tokens(lengths[d], widest), capacity}});
      p.info["oversized_document"] = {
          {"index", d}, {"length", lengths[d]}, {"capacity_tokens", capacity * widest}};
      return p;
    }
    return build(lengths, assign(lengths, size));
  }

  // A bound the plan's estimate never goes below: the busiest rank's compute in its assignment, each
  // document's attention at its own query length without the per-call overhead (a varlen call pays it
  // once for all its sequences) and the GEMMs over all the rank's tokens at once (a GEMM's time is affine
  // in its rows, so splitting rows over several calls never makes it faster). 0 when a document fits no
  // group (the plan is an OOM then). Mirrors packed_cp_compute_floor, per rank instead of per CP group.
  double compute_floor(const std::vector<std::int64_t>& lengths) const {
    const std::vector<int> size = group_sizes(lengths);
    if (std::find(size.begin(), size.end(), 0) != size.end()) return 0.0;
    const auto world = static_cast<std::size_t>(cost_.cluster().world_size());
    std::vector<double> attention(world, 0.0), tokens(world, 0.0);
    for (const HdpPack& pack : assign(lengths, size)) {
      double pack_attention = 0, pack_tokens = 0;
      for (const int d : pack.docs) {
        pack_attention +=
            zigzag_attention_floor(cost_, lengths[static_cast<std::size_t>(d)], pack.where.size, passes_);
        pack_tokens += static_cast<double>(lengths[static_cast<std::size_t>(d)]) / pack.where.size;
      }
      for (int r = pack.where.first; r < pack.where.first + pack.where.size; ++r) {
        attention[static_cast<std::size_t>(r)] += pack_attention;
        tokens[static_cast<std::size_t>(r)] += pack_tokens;
      }
    }
    double worst = 0;
    for (std::size_t r = 0; r < world; ++r) {
      const double linear = cost_.linear_fwd_time(tokens[r]) +
                            (passes_ == Passes::fwd_bwd ? cost_.linear_bwd_time(tokens[r]) : 0.0);
      worst = std::max(worst, attention[r] + linear);
    }
    return worst * cost_.model().layers;
  }

 private:
  // Each document's group size (group_size); 0 for one that even the widest group cannot hold.
  std::vector<int> group_sizes(const std::vector<std::int64_t>& lengths) const {
    std::vector<int> size(lengths.size());
    for (std::size_t d = 0; d < lengths.size(); ++d)
      size[d] = group_size(lengths[d], cost_.token_capacity_per_gpu(), shape_);
    return size;
  }

  // The widest group the form forms: all GPUs (oracle), the largest power of two within them (published).
  int widest_group() const {
    if (shape_.form == HybridDpForm::oracle) return shape_.world();
    return static_cast<int>(std::bit_floor(static_cast<unsigned>(shape_.world())));
  }

  // LPT over placements, first fit over micro-batches (see the file comment).
  std::vector<HdpPack> assign(const std::vector<std::int64_t>& lengths, const std::vector<int>& size) const {
    const int world = cost_.cluster().world_size();
    const std::int64_t capacity = cost_.token_capacity_per_gpu();
    std::vector<double> work(lengths.size());  // a document's total estimated work over its group
    for (std::size_t d = 0; d < lengths.size(); ++d)
      work[d] = rank_cost(cost_, lengths[d], size[d], passes_, shape_.form) * size[d];
    std::vector<int> order(lengths.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return work[static_cast<std::size_t>(a)] > work[static_cast<std::size_t>(b)];
    });

    RankLoads loads(world);
    std::vector<std::vector<int>> owner;  // [micro-batch][rank] → pack index, -1 = free
    std::vector<HdpPack> packs;
    for (const int d : order) {
      const int p = size[static_cast<std::size_t>(d)];
      const std::int64_t need = rank_tokens(lengths[static_cast<std::size_t>(d)], p);
      const Placement best = loads.least(p, shape_);
      // The first micro-batch where the placement is free or already holds a pack of exactly it with room.
      std::size_t mb = 0;
      int pack = -1;
      for (; mb < owner.size(); ++mb) {
        const int o = owner[mb][static_cast<std::size_t>(best.first)];
        const bool same =
            std::all_of(owner[mb].begin() + best.first, owner[mb].begin() + best.first + best.size,
                        [o](int x) { return x == o; });
        if (!same) continue;
        if (o < 0) break;
        const HdpPack& k = packs[static_cast<std::size_t>(o)];
        if (k.where.first == best.first && k.where.size == best.size && k.rank_tokens + need <= capacity) {
          pack = o;
          break;
        }
      }
      if (mb == owner.size()) owner.emplace_back(static_cast<std::size_t>(world), -1);
      if (pack < 0) {
        pack = static_cast<int>(packs.size());
        packs.push_back({static_cast<int>(mb), best, {}, 0});
        std::fill(owner[mb].begin() + best.first, owner[mb].begin() + best.first + best.size, pack);
      }
      packs[static_cast<std::size_t>(pack)].docs.push_back(d);
      packs[static_cast<std::size_t>(pack)].rank_tokens += need;
      loads.add(best, work[static_cast<std::size_t>(d)] / p);
    }
    return packs;
  }

  // Writes the packs, micro-batch by micro-batch and in rank order inside one: every rank meets its
  // groups in that one global order, so no two rings can wait on each other.
  plan::Plan build(const std::vector<std::int64_t>& lengths, std::vector<HdpPack> packs) const {
    std::stable_sort(packs.begin(), packs.end(), [](const HdpPack& a, const HdpPack& b) {
      return a.micro_batch != b.micro_batch ? a.micro_batch < b.micro_batch : a.where.first < b.where.first;
    });
    const int gpn = cost_.cluster().gpus_per_node;
    PlanBuilder b(cost_, system_, strategy_);
    b.set_passes(passes_);
    std::vector<int> last_op(static_cast<std::size_t>(b.world_size()), -1);
    int micro_batches = 0, local_docs = 0, largest = 1;
    for (const HdpPack& pack : packs) {
      const int p = pack.where.size;
      micro_batches = std::max(micro_batches, pack.micro_batch + 1);
      largest = std::max(largest, p);
      if (p == 1) local_docs += static_cast<int>(pack.docs.size());
      std::vector<int> seqs;
      for (const int d : pack.docs)
        seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(d)], pack.micro_batch));
      std::vector<int> ranks(static_cast<std::size_t>(p));
      std::iota(ranks.begin(), ranks.end(), pack.where.first);
      const plan::Level level = p == 1     ? plan::Level::local
                                : p <= gpn ? plan::Level::intra_node
                                           : plan::Level::inter_node;
      const int gid = b.add_group(level, ranks, seqs, pack.micro_batch);
      std::vector<int> ready(static_cast<std::size_t>(p));
      std::vector<std::int64_t> tokens(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) {
        const int prev = last_op[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])];
        tokens[static_cast<std::size_t>(i)] =
            b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(gid)], i);
        ready[static_cast<std::size_t>(i)] =
            b.add_qkv_gemm(ranks[static_cast<std::size_t>(i)], tokens[static_cast<std::size_t>(i)],
                           prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, pack.micro_batch);
      }
      const auto attn = b.add_attention(gid, ready);
      for (int i = 0; i < p; ++i) {
        std::vector<int> deps = attn[static_cast<std::size_t>(i)];
        deps.push_back(ready[static_cast<std::size_t>(i)]);
        last_op[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])] = b.add_output_gemms(
            ranks[static_cast<std::size_t>(i)], tokens[static_cast<std::size_t>(i)], deps, pack.micro_batch);
      }
    }
    b.set_micro_batches(std::max(1, micro_batches));
    b.add_info("local_documents", local_docs);
    b.add_info("cp_documents", static_cast<int>(lengths.size()) - local_docs);
    b.add_info("largest_group", largest);
    b.add_info("packs", packs.size());
    b.add_info("pack_capacity_tokens", cost_.token_capacity_per_gpu());
    return b.finish();
  }

  std::string system_;
  std::string strategy_;
  Passes passes_;
  Shape shape_;
  const CostModel& cost_;
};

}  // namespace

plan::Plan plan_hybrid_dp(const HybridDpSetup& setup, const CostModel& cost,
                          const std::vector<std::int64_t>& lengths) {
  return HybridDpPlanner(setup, cost).make_plan(lengths);
}

double hybrid_dp_compute_floor(const HybridDpSetup& setup, const CostModel& cost,
                               const std::vector<std::int64_t>& lengths) {
  return HybridDpPlanner(setup, cost).compute_floor(lengths);
}

double hybrid_dp_document_floor(const HybridDpSetup& setup, const CostModel& cost,
                                const std::vector<std::int64_t>& lengths) {
  // The busiest rank does at least the share of any one document its group gives each rank
  // (document_share_floor: the same terms as compute_floor's sums, and the GEMMs are affine in their rows).
  // Within one group size every term grows with the length, so only the longest document of each size is
  // evaluated: a few cost-model calls instead of one assignment of the whole batch.
  const Shape shape{cost.cluster().gpus_per_node, cost.cluster().nodes, setup.form};
  // (group size, its longest document): a handful of sizes, so a list searched from the back (documents of
  // one size tend to come together) is cheaper than a map.
  std::vector<std::pair<int, std::int64_t>> longest;
  for (const std::int64_t s : lengths) {
    const int p = group_size(s, cost.token_capacity_per_gpu(), shape);
    if (p == 0) return 0.0;  // mirrors compute_floor: the plan is an OOM
    auto it = std::find_if(longest.rbegin(), longest.rend(), [p](const auto& e) { return e.first == p; });
    if (it == longest.rend())
      longest.emplace_back(p, s);
    else
      it->second = std::max(it->second, s);
  }
  double worst = 0;
  for (const auto& [p, s] : longest) worst = std::max(worst, document_share_floor(cost, s, p, setup.passes));
  return worst * cost.model().layers;
}

}  // namespace zb
