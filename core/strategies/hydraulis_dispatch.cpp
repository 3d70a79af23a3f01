#include "core/strategies/hydraulis_dispatch.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <numeric>
#include <queue>

#include "core/strategies/dynamic_cp_ring.hpp"

namespace zb {
namespace {

// Hetu enumerates at most 16 micro-batch counts per group.
constexpr int kMicroBatchCounts = 16;

std::size_t log2_of(int power_of_two) {
  return static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(power_of_two)));
}

}  // namespace

HydraulisCosts::HydraulisCosts(const CostModel& cost, const std::vector<std::int64_t>& lengths, Passes passes)
    : cost_(cost), lengths_(lengths), passes_(passes), capacity_(cost.token_capacity_per_gpu()) {
  const int world = cost.cluster().world_size();
  const int gpn = cost.cluster().gpus_per_node;
  const bool backward = passes == Passes::fwd_bwd;
  for (int g = 1; g <= world; g *= 2) {
    // A ring wider than a node waits on its NIC hops; one inside a node on NVLink.
    const LinkSpec& link = g <= gpn ? cost.cluster().nvlink : cost.cluster().nic;
    const LinkClass cls = g <= gpn ? LinkClass::nvlink : LinkClass::nic;
    std::vector<double> t(lengths.size());
    std::vector<char> fit(lengths.size());
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      fit[d] = ring_share_tokens(lengths[d], g) <= capacity_;
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
    by_size_.push_back(std::move(t));
    fits_.push_back(std::move(fit));
  }
}

double HydraulisCosts::time(int doc, int size) const {
  return by_size_[log2_of(size)][static_cast<std::size_t>(doc)];
}

std::int64_t HydraulisCosts::share(int doc, int size) const {
  return ring_share_tokens(lengths_[static_cast<std::size_t>(doc)], size);
}

bool HydraulisCosts::fits(int doc, int size) const {
  return fits_[log2_of(size)][static_cast<std::size_t>(doc)] != 0;
}

double HydraulisCosts::micro_batch_overhead(int size) const {
  return cost_.profile().attention_call_overhead * size * (passes_ == Passes::fwd_bwd ? 2 : 1);
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

Packing pack_group(const HydraulisCosts& costs, int size, const std::vector<int>& docs) {
  std::vector<int> order = docs;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return costs.time(a, size) > costs.time(b, size); });
  std::int64_t tokens = 0;
  for (const int d : order) tokens += costs.share(d, size);
  const std::int64_t cap = costs.capacity();
  const int first = static_cast<int>(std::max<std::int64_t>(1, (tokens + cap - 1) / cap));
  const int last = std::max(first, std::min(static_cast<int>(order.size()), first + kMicroBatchCounts - 1));
  const double c = costs.micro_batch_overhead(size);
  Packing best;
  for (int v = first; v <= last; ++v) {
    std::vector<std::vector<int>> packs(static_cast<std::size_t>(v));
    std::vector<double> time(static_cast<std::size_t>(v), 0.0);
    std::vector<std::int64_t> used(static_cast<std::size_t>(v), 0);
    bool packed = true;
    for (const int d : order) {
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
      packs[p].push_back(d), time[p] += costs.time(d, size), used[p] += costs.share(d, size);
    }
    if (!packed) continue;
    const double objective = (*std::max_element(time.begin(), time.end()) + c) * v;
    if (best.packs.empty() || objective < best.seconds) best = {std::move(packs), objective};
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
