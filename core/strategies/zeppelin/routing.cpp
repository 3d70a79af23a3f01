#include "core/strategies/zeppelin/routing.hpp"

#include <algorithm>
#include <numeric>

namespace zb::zeppelin {

int chunks_for(std::int64_t part_bytes) {
  constexpr std::int64_t chunk_bytes = 1 << 20;
  return static_cast<int>(std::clamp<std::int64_t>(part_bytes / chunk_bytes, 1, 8));
}

double Router::tx_load(int step, int nic) const {
  const auto s = tx_.find(step);
  return s == tx_.end() ? 0 : s->second[static_cast<std::size_t>(nic)];
}

double Router::rx_load(int step, int nic) const {
  const auto s = rx_.find(step);
  return s == rx_.end() ? 0 : s->second[static_cast<std::size_t>(nic)];
}

int Router::gpu_on_nic(int node, int nic, int prefer) const {
  const int g = cluster_.gpus_per_node;
  if (prefer / g == node && cluster_.nic_of(prefer) == nic) return prefer;
  for (int i = 0; i < g; ++i) {
    if (cluster_.gpu_to_nic[static_cast<std::size_t>(i)] == nic) return node * g + i;
  }
  return -1;
}

plan::Route Router::route(int src, int dst, std::int64_t bytes, int step) {
  const int k = cluster_.nics_per_node;
  const int src_node = cluster_.node_of(src), dst_node = cluster_.node_of(dst);
  // Current load of rail j in this step: the busier of its two ends.
  std::vector<double> load(static_cast<std::size_t>(k));
  std::vector<int> rails;
  for (int j = 0; j < k; ++j) {
    if (gpu_on_nic(src_node, j, src) < 0 || gpu_on_nic(dst_node, j, dst) < 0) continue;  // NIC without a GPU
    load[static_cast<std::size_t>(j)] =
        std::max(tx_load(step, src_node * k + j), rx_load(step, dst_node * k + j));
    rails.push_back(j);
  }
  // Water-filling: raise the least-loaded rails to a common level L so that Σ (L − load_j)+ = bytes.
  std::vector<int> sorted = rails;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) {
    return load[static_cast<std::size_t>(a)] < load[static_cast<std::size_t>(b)];
  });
  double level = 0, filled_below = 0;
  std::size_t used = 0;
  const auto total = static_cast<double>(bytes);
  for (used = 1; used <= sorted.size(); ++used) {
    filled_below += load[static_cast<std::size_t>(sorted[used - 1])];
    level = (total + filled_below) / static_cast<double>(used);
    if (used == sorted.size() || level <= load[static_cast<std::size_t>(sorted[used])]) break;
  }
  used = std::min(used, sorted.size());
  // Integer parts in rail order; the remainder goes to the first used rail so the sum is exact.
  plan::Route r;
  r.kind = plan::RouteKind::routed;
  std::int64_t assigned = 0;
  std::vector<std::int64_t> part(static_cast<std::size_t>(k), 0);
  for (std::size_t i = 0; i < used; ++i) {
    const int j = sorted[i];
    part[static_cast<std::size_t>(j)] =
        static_cast<std::int64_t>(std::max(0.0, level - load[static_cast<std::size_t>(j)]));
    assigned += part[static_cast<std::size_t>(j)];
  }
  if (used > 0) part[static_cast<std::size_t>(sorted[0])] += bytes - assigned;
  std::int64_t largest = 0;
  for (int j : rails) {
    const auto b = part[static_cast<std::size_t>(j)];
    if (b <= 0) continue;
    r.proxies.push_back(gpu_on_nic(src_node, j, src));
    r.peer_proxies.push_back(gpu_on_nic(dst_node, j, dst));
    r.part_bytes.push_back(b);
    largest = std::max(largest, b);
    const auto nics = static_cast<std::size_t>(cluster_.nodes * k);
    auto& tx = tx_[step];
    auto& rx = rx_[step];
    if (tx.empty()) tx.assign(nics, 0.0);
    if (rx.empty()) rx.assign(nics, 0.0);
    tx[static_cast<std::size_t>(src_node * k + j)] += static_cast<double>(b);
    rx[static_cast<std::size_t>(dst_node * k + j)] += static_cast<double>(b);
  }
  r.chunks = chunks_for(largest);
  if (r.part_bytes.empty()) {  // zero bytes: keep one direct-equivalent part on the source's own rail
    const int j = cluster_.nic_of(src);
    r.proxies = {src};
    r.peer_proxies = {gpu_on_nic(dst_node, j, dst)};
    r.part_bytes = {0};
  }
  return r;
}

}  // namespace zb::zeppelin
