#include "core/strategies/hydraulis_dispatch.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <numeric>
#include <queue>

#include "core/strategies/dynamic_cp_ring.hpp"
#include "core/strategies/hydraulis_milp.hpp"
#include "core/strategies/tensor_parallel.hpp"

namespace zb {
namespace {

// Hetu enumerates at most 16 micro-batch counts per group.
constexpr int kMicroBatchCounts = 16;

std::size_t log2_of(int power_of_two) {
  return static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(power_of_two)));
}

}  // namespace

int hydraulis_widest_tp(const CostModel& cost) {
  const int heads = cost.model().heads, kv = std::max(1, cost.model().kv_heads);
  int widest = 1;
  for (int w = 2; w <= cost.cluster().gpus_per_node; w *= 2) {
    if (heads % w == 0 && kv % w == 0 && cost.cluster().gpus_per_node % w == 0) widest = w;
  }
  return widest;
}

HydraulisCosts::HydraulisCosts(const CostModel& cost, const std::vector<std::int64_t>& lengths, Passes passes,
                               HydraulisGroups groups)
    : cost_(cost), lengths_(lengths), passes_(passes), groups_(groups) {
  const int world = cost.cluster().world_size();
  const int gpn = cost.cluster().gpus_per_node;
  const bool backward = passes == Passes::fwd_bwd;
  const int widest = groups == HydraulisGroups::tensor ? std::min(world, hydraulis_widest_tp(cost)) : world;
  for (int g = 1; g <= widest; g *= 2) {
    std::vector<double> t(lengths.size());
    std::vector<char> fit(lengths.size());
    if (groups == HydraulisGroups::tensor) {
      // The replica as the TP grid sees it: g times a GPU's FLOPs, memory and HBM (tensor_parallel.hpp).
      const CostModel replica =
          cost.with_cluster(tensor_parallel_grid(cost.cluster(), g)).with_planner_error(cost.planner_error());
      capacity_.push_back(replica.token_capacity_per_gpu());
      for (std::size_t d = 0; d < lengths.size(); ++d) {
        fit[d] = lengths[d] <= capacity_.back();
        const auto s = static_cast<double>(lengths[d]);
        const double pairs = s * (s + 1) / 2;
        double compute =
            replica.attention_time(replica.attention_fwd_flops(pairs), s) + replica.linear_fwd_time(s);
        if (backward)
          compute +=
              replica.attention_time(replica.attention_bwd_flops(pairs), s) + replica.linear_bwd_time(s);
        // Sequence parallelism: an all-gather before each of the two column-parallel GEMMs and a
        // reduce-scatter after each of the two row-parallel ones, each g − 1 ring steps of s/g hidden rows;
        // the backward runs their adjoints.
        const double step =
            g == 1 ? 0.0
                   : cost.transfer_time(cost.hidden_bytes(s / g), cost.cluster().nvlink, LinkClass::nvlink);
        t[d] = compute + 4.0 * (g - 1) * step * (backward ? 2 : 1);
      }
    } else {
      capacity_.push_back(cost.token_capacity_per_gpu());
      // A ring wider than a node waits on its NIC hops; one inside a node on NVLink.
      const LinkSpec& link = g <= gpn ? cost.cluster().nvlink : cost.cluster().nic;
      const LinkClass cls = g <= gpn ? LinkClass::nvlink : LinkClass::nic;
      for (std::size_t d = 0; d < lengths.size(); ++d) {
        fit[d] = ring_share_tokens(lengths[d], g) <= capacity_.back();
        const auto s = static_cast<double>(lengths[d]);
        const double pairs = s * (s + 1) / 2 / g;
        const double q = std::max(1.0, g == 1 ? s : s / (2.0 * g));
        double attention = cost.attention_time(cost.attention_fwd_flops(pairs), q);
        double linear = cost.linear_fwd_time(s / g);
        if (backward)
          attention += cost.attention_time(cost.attention_bwd_flops(pairs), q),
              linear += cost.linear_bwd_time(s / g);
        // g − 1 ring steps, each moving one GPU's K and V (the backward moves them again, and dK, dV).
        const double step = g == 1 ? 0.0 : cost.transfer_time(cost.kv_bytes(s / g), link, cls);
        const double transfers = (g - 1) * step * (backward ? 3 : 1);
        t[d] = linear + std::max(attention, transfers);
      }
    }
    by_size_.push_back(std::move(t));
    fits_.push_back(std::move(fit));
  }
}

double HydraulisCosts::time(int doc, int size) const {
  return by_size_[log2_of(size)][static_cast<std::size_t>(doc)];
}

std::int64_t HydraulisCosts::share(int doc, int size) const {
  const std::int64_t s = lengths_[static_cast<std::size_t>(doc)];
  return groups_ == HydraulisGroups::tensor ? s : ring_share_tokens(s, size);
}

std::int64_t HydraulisCosts::capacity(int size) const {
  return capacity_[log2_of(size)];
}

bool HydraulisCosts::fits(int doc, int size) const {
  return log2_of(size) < fits_.size() && fits_[log2_of(size)][static_cast<std::size_t>(doc)] != 0;
}

double HydraulisCosts::micro_batch_overhead(int size) const {
  // A ring's micro-batch makes `size` attention calls per pass; a TP replica's one (each member's heads).
  const int calls = groups_ == HydraulisGroups::tensor ? 1 : size;
  return cost_.profile().attention_call_overhead * calls * (passes_ == Passes::fwd_bwd ? 2 : 1);
}

std::vector<std::vector<int>> hydraulis_pool(int world, int widest) {
  std::vector<std::vector<int>> pool;
  for (std::vector<int>& sizes : hydraulis_pool(world)) {
    if (sizes.front() <= widest) pool.push_back(std::move(sizes));
  }
  return pool;
}

std::vector<std::vector<int>> hydraulis_pool(int world) {
  std::vector<std::vector<int>> pool;
  for (int c = 1; c <= world; c *= 2) {
    if (world % c == 0) pool.emplace_back(static_cast<std::size_t>(world / c), c);
  }
  for (int big = 2; big < world; big *= 2) {
    for (int k = 1; k * big < world; k *= 2) {
      const int rest = world - k * big;
      for (int small = 1; small < big; small *= 2) {
        if (rest % small != 0) continue;
        std::vector<int> sizes(static_cast<std::size_t>(k), big);
        sizes.insert(sizes.end(), static_cast<std::size_t>(rest / small), small);
        pool.push_back(std::move(sizes));
      }
    }
  }
  return pool;
}

std::optional<Dispatch> dispatch_documents(const HydraulisCosts& costs, const std::vector<int>& sizes,
                                           const std::vector<int>& order, bool allow_idle) {
  // Groups of one size are interchangeable but for their loads, so each size keeps its groups in a
  // min-heap of (load, group): the least-loaded group of a size is the only one of it worth trying.
  using Load = std::pair<double, int>;
  using Heap = std::priority_queue<Load, std::vector<Load>, std::greater<>>;
  std::vector<int> class_size;
  std::vector<Heap> heaps;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    if (class_size.empty() || class_size.back() != sizes[g])
      class_size.push_back(sizes[g]), heaps.emplace_back();
    heaps.back().emplace(0.0, static_cast<int>(g));
  }
  const int second = class_size.size() > 1 ? class_size[1] : 0;
  Dispatch out;
  out.group_docs.resize(sizes.size());
  auto place = [&](int doc, std::size_t c) {
    auto [load, g] = heaps[c].top();
    heaps[c].pop();
    load += costs.time(doc, class_size[c]);
    heaps[c].emplace(load, g);
    out.group_docs[static_cast<std::size_t>(g)].push_back(doc);
    out.makespan = std::max(out.makespan, load);
  };
  for (const int d : order) {
    if (!costs.fits(d, class_size[0])) return std::nullopt;
    if (second == 0 || !costs.fits(d, second)) place(d, 0);  // only the largest groups hold it
  }
  for (const int d : order) {
    if (second == 0 || !costs.fits(d, second)) continue;
    std::size_t best = 0;
    double best_max = 0;
    bool best_empty = false;
    for (std::size_t c = 0; c < class_size.size(); ++c) {
      if (!costs.fits(d, class_size[c])) continue;
      const double load = heaps[c].top().first;
      const double candidate = std::max(out.makespan, load + costs.time(d, class_size[c]));
      const bool empty = load == 0;
      if (c == 0 || candidate < best_max || (candidate == best_max && empty && !best_empty)) {
        best = c, best_max = candidate, best_empty = empty;
      }
    }
    place(d, best);
  }
  if (!allow_idle) {
    for (const auto& docs : out.group_docs) {
      if (docs.empty()) return std::nullopt;
    }
  }
  return out;
}

Packing pack_group(const HydraulisCosts& costs, int size, const std::vector<int>& docs,
                   const Stage2Solver& solver) {
  std::vector<int> order = docs;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return costs.time(a, size) > costs.time(b, size); });
  std::int64_t tokens = 0;
  double total_time = 0, longest_time = 0;
  for (const int d : order) {
    tokens += costs.share(d, size);
    total_time += costs.time(d, size);
    longest_time = std::max(longest_time, costs.time(d, size));
  }
  const std::int64_t cap = costs.capacity(size);
  // A width whose GPUs hold no token (the model states fill them) gets no document from the dispatch, only
  // an idle group: one empty pack, as any idle group, and no division by its zero capacity (SIGFPE).
  const int first = cap > 0 ? static_cast<int>(std::max<std::int64_t>(1, (tokens + cap - 1) / cap)) : 1;
  const int last = std::max(first, std::min(static_cast<int>(order.size()), first + kMicroBatchCounts - 1));
  const double c = costs.micro_batch_overhead(size);
  Packing best;  // a better v replaces its packs and objective; the MILP's counters add up over every v
  for (int v = first; v <= last; ++v) {
    std::vector<int> bin_of(order.size(), -1);  // by position in `order`
    std::vector<double> time(static_cast<std::size_t>(v), 0.0);
    std::vector<std::int64_t> used(static_cast<std::size_t>(v), 0);
    bool packed = true;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const int d = order[k];
      int pick = -1;
      for (int j = 0; j < v; ++j) {
        const auto jj = static_cast<std::size_t>(j);
        if (used[jj] + costs.share(d, size) > cap) continue;
        if (pick < 0 || time[jj] < time[static_cast<std::size_t>(pick)]) pick = j;
      }
      if (pick < 0) {
        packed = false;
        break;
      }
      const auto p = static_cast<std::size_t>(pick);
      bin_of[k] = pick, time[p] += costs.time(d, size), used[p] += costs.share(d, size);
    }
    double makespan = packed ? *std::max_element(time.begin(), time.end()) : 0.0;
    if (!packed) bin_of.clear();
    // No packing at v can take less than its largest document or an even split of the work.
    const double bound = std::max(longest_time, total_time / v);
    const bool could_improve =
        (!packed || makespan > bound * (1 + 1e-9)) && (best.packs.empty() || (bound + c) * v < best.seconds);
    if (solver.milp && could_improve) {
      MinMaxPackingProblem problem{{}, {}, v, cap};
      for (const int d : order)
        problem.times.push_back(costs.time(d, size)), problem.tokens.push_back(costs.share(d, size));
      const MinMaxPackingResult r = solve_min_max_packing(problem, bin_of, solver.seconds, solver.node_limit);
      ++best.milp_solves;
      best.milp_wall += r.seconds;
      if (r.optimal) ++best.milp_proven;
      if (!r.bin_of.empty() && (bin_of.empty() || r.makespan < makespan)) {
        ++best.milp_improved;
        bin_of = r.bin_of, makespan = r.makespan, packed = true;
      }
    }
    if (!packed) continue;
    const double objective = (makespan + c) * v;
    if (best.packs.empty() || objective < best.seconds) {
      std::vector<std::vector<int>> packs(static_cast<std::size_t>(v));
      for (std::size_t k = 0; k < order.size(); ++k)
        packs[static_cast<std::size_t>(bin_of[k])].push_back(order[k]);
      best.packs = std::move(packs);
      best.seconds = objective;
    }
  }
  if (!best.packs.empty() || order.empty()) return best;
  // No count in Hetu's range packs (LPT spreads by time, not tokens): first-fit decreasing by share,
  // which always packs since every share fits on its own.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return costs.share(a, size) > costs.share(b, size); });
  std::vector<std::int64_t> used;
  std::vector<double> time;
  for (const int d : order) {
    std::size_t j = 0;
    while (j < used.size() && used[j] + costs.share(d, size) > cap) ++j;
    if (j == used.size()) used.push_back(0), time.push_back(0), best.packs.emplace_back();
    best.packs[j].push_back(d), used[j] += costs.share(d, size), time[j] += costs.time(d, size);
  }
  best.seconds = (*std::max_element(time.begin(), time.end()) + c) * static_cast<double>(best.packs.size());
  return best;
}

}  // namespace zb
