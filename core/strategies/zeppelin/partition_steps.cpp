// Zeppelin's partitioner, the rings (partitioner.hpp, step 3): their placement, widening when full, their
// alignment across micro-batches, and the loads every placement compares. The set-up and the flat form
// are in partitioner.cpp, the local sequences and the refinement in partition_locals.cpp.
#include <algorithm>

#include "core/strategies/zeppelin/partition_steps.hpp"
#include "core/strategies/zeppelin/ring_alignment.hpp"

namespace zb::zeppelin::detail {

// --- Rings ---

// Every document whose degree asks for a ring, longest first; local sequences are placed after.
void Partitioner::place_rings() {
  for (int doc : order_) {
    const int p = degree_[static_cast<std::size_t>(doc)];
    if (p > 1) place_widening(doc, p);
  }
}

// Charges a ring's members its estimate, its wait (which local work may fill later) and their shares of
// its tokens, and files the document under the group of the same micro-batch and members, so that
// documents on the same GPUs run as one group.
void Partitioner::place_ring(int doc, std::vector<int> ranks, plan::Level level, int mb) {
  const auto s = length(doc);
  const int p = static_cast<int>(ranks.size());
  const double seconds = m_.ring_seconds(static_cast<double>(s), p);
  const double wait = m_.ring_wait(static_cast<double>(s), p);
  for (int r : ranks) {
    out_.gpu_load[static_cast<std::size_t>(r)] += seconds;
    at(out_.bin_load, mb, r) += seconds;
    at(idle_, mb, r) += wait;
    at(tokens_, mb, r) += PartitionModel::rank_tokens(s, p);
  }
  auto& groups = level == plan::Level::inter_node ? inter_ : intra_;
  auto& index = level == plan::Level::inter_node ? inter_by_ranks_ : intra_by_ranks_;
  const auto it = index.find({mb, ranks});
  if (it != index.end()) {
    groups[it->second].docs.push_back(doc);
  } else {
    index.emplace(std::make_pair(mb, ranks), groups.size());
    groups.push_back({level, std::move(ranks), {doc}, mb});
  }
}

// A ring of exactly p GPUs for `doc` in the micro-batch and on the GPUs where they are least loaded and
// every member has room. Returns false when no placement fits.
bool Partitioner::try_ring(int doc, int p) {
  return p > m_.gpn ? try_inter_node_ring(doc, p) : try_intra_node_ring(doc, p);
}

// p > G: ⌈p/G⌉ whole nodes that all have room, in the micro-batch whose busiest chosen node is the least
// loaded. Whole nodes, because a ring that crosses nodes is paced by the NICs, and a part of a node would
// leave its other GPUs to share them.
bool Partitioner::try_inter_node_ring(int doc, int p) {
  const std::int64_t need = PartitionModel::rank_tokens(length(doc), p);
  const int span = (p + m_.gpn - 1) / m_.gpn;
  if (span > m_.nodes) return false;
  int best_mb = -1;
  double best_score = 0;
  std::vector<int> best_nodes;
  std::vector<double> key(static_cast<std::size_t>(m_.nodes));  // by node: node_key in this micro-batch
  for (int mb = 0; mb < k_; ++mb) {
    std::vector<int> nodes;
    for (int n = 0; n < m_.nodes; ++n) {
      bool all = true;
      for (int i = 0; i < m_.gpn && all; ++i) all = at(tokens_, mb, n * m_.gpn + i) + need <= m_.capacity;
      if (all) nodes.push_back(n);
    }
    if (static_cast<int>(nodes.size()) < span) continue;
    // Each node's key once, not twice per comparison (a 1024-node cluster sorts a thousand nodes per ring).
    for (int n : nodes) key[static_cast<std::size_t>(n)] = node_key(n, mb);
    std::stable_sort(nodes.begin(), nodes.end(), [&key](int a, int b) {
      return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
    });
    nodes.resize(static_cast<std::size_t>(span));
    double score = 0;
    for (int n : nodes) score = std::max(score, key[static_cast<std::size_t>(n)]);
    if (best_mb < 0 || score < best_score) best_mb = mb, best_score = score, best_nodes = nodes;
  }
  if (best_mb < 0) return false;
  std::sort(best_nodes.begin(), best_nodes.end());
  std::vector<int> ranks;
  for (int n : best_nodes)
    for (int i = 0; i < m_.gpn; ++i) ranks.push_back(n * m_.gpn + i);
  place_ring(doc, std::move(ranks), span > 1 ? plan::Level::inter_node : plan::Level::intra_node, best_mb);
  return true;
}

// p ≤ G: the least-loaded node (in any micro-batch) with p GPUs that have room, on its p least-loaded
// ones: any p, not only the whole node, so a ring takes no more GPUs than its balance needs.
bool Partitioner::try_intra_node_ring(int doc, int p) {
  const std::int64_t need = PartitionModel::rank_tokens(length(doc), p);
  int best_node = -1, best_mb = -1;
  double best_key = 0;  // node_key(best_node, best_mb)
  for (int mb = 0; mb < k_; ++mb) {
    for (int n = 0; n < m_.nodes; ++n) {
      int with_room = 0;
      for (int i = 0; i < m_.gpn; ++i) with_room += at(tokens_, mb, n * m_.gpn + i) + need <= m_.capacity;
      if (with_room < p) continue;
      const double key = node_key(n, mb);
      if (best_node < 0 || key < best_key) best_node = n, best_mb = mb, best_key = key;
    }
  }
  if (best_node < 0) return false;
  std::vector<int> gpus;
  for (int i = 0; i < m_.gpn; ++i) {
    if (at(tokens_, best_mb, best_node * m_.gpn + i) + need <= m_.capacity)
      gpus.push_back(best_node * m_.gpn + i);
  }
  std::stable_sort(gpus.begin(), gpus.end(),
                   [&](int a, int b) { return gpu_key(a, best_mb) < gpu_key(b, best_mb); });
  gpus.resize(static_cast<std::size_t>(p));
  std::sort(gpus.begin(), gpus.end());
  place_ring(doc, std::move(gpus), plan::Level::intra_node, best_mb);
  return true;
}

// The sequence's own degree first; when the GPUs it would use are full, wider rings (each rank holds less
// of it): the rest of the node's sizes, then whole nodes. Only when even the whole cluster has no room is it
// out of memory, reported on the bin with the least shortfall for the widest ring.
void Partitioner::place_widening(int doc, int p) {
  for (int q = p; q <= m_.world; q = m_.wider(q)) {
    if (try_ring(doc, q)) return;
  }
  const std::int64_t need = PartitionModel::rank_tokens(length(doc), m_.world);
  int fullest_mb = 0, fullest_rank = 0;
  for (int mb = 0; mb < k_; ++mb) {
    for (int r = 0; r < m_.world; ++r) {
      if (at(tokens_, mb, r) < at(tokens_, fullest_mb, fullest_rank)) fullest_mb = mb, fullest_rank = r;
    }
  }
  add_oom(fullest_rank, fullest_mb, at(tokens_, fullest_mb, fullest_rank) + need);
}

void Partitioner::align_rings() {
  align_ring_starts(lengths_, local_cost_, m_.world, m_.capacity, inter_, intra_, local_, tokens_,
                    out_.bin_load,
                    [&](std::int64_t s, int p) { return m_.ring_seconds(static_cast<double>(s), p); });
}

// --- What a placement balances ---

double Partitioner::gpu_key(int r, int mb) const {
  return per_bin_ ? at(out_.bin_load, mb, r) : out_.gpu_load[static_cast<std::size_t>(r)];
}

double Partitioner::node_key(int node, int mb) const {
  double l = 0;
  for (int i = 0; i < m_.gpn; ++i) l += gpu_key(node * m_.gpn + i, mb);
  return l;
}

// A place's load as a local sequence sees it: what its rings wait for is free to fill.
double Partitioner::idle_of(int place) const {
  if (per_bin_) return at(idle_, bin_mb(place), bin_rank(place));
  double sum = 0;
  for (int mb = 0; mb < k_; ++mb) sum += at(idle_, mb, place);
  return sum;
}

double Partitioner::place_load(int place) const {
  return (per_bin_ ? at(out_.bin_load, bin_mb(place), bin_rank(place))
                   : out_.gpu_load[static_cast<std::size_t>(place)]) -
         idle_of(place);
}

std::vector<int> Partitioner::bins_of(int place) const {
  std::vector<int> bins;
  if (per_bin_) return std::vector<int>{place};
  for (int mb = 0; mb < k_; ++mb) bins.push_back(mb * m_.world + place);
  return bins;
}

}  // namespace zb::zeppelin::detail
