// Zeppelin's partitioner, the local sequences (partitioner.hpp, steps 3 and 4): their placement after the
// rings, and the refinement that turns the largest of an overloaded place into a 2-GPU ring.
#include <algorithm>
#include <functional>

#include "core/strategies/zeppelin/partition_steps.hpp"

namespace zb::zeppelin::detail {
namespace {

// Restores a min-heap on (load, place) (std::greater order, as std::make_heap builds it) after its root
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

}  // namespace

// Local sequences, longest first, to the least-loaded place with room (LPT): a bin (micro-batch-major
// numbering, so ties fill micro-batch 0 first) or, balancing whole GPUs, a GPU, in its micro-batch with the
// most room. One that fits nowhere becomes the narrowest ring that fits. Before that, a sequence whose cost
// fits a ring's wait goes there (place_in_ring_wait).
void Partitioner::place_locals() {
  rebuild_heap();
  // Bins whose rings wait for K/V: a local sequence whose cost fits such a wait runs there for free (the
  // engine puts it between the ring's steps), so it goes there first, to the bin that waits the longest.
  waiting_.clear();
  for (int bin = 0; bin < k_ * m_.world; ++bin) {
    if (at(idle_, bin_mb(bin), bin_rank(bin)) > 0) waiting_.push_back(bin);
  }
  rebuild_waiting_heap();
  for (int doc : order_) {
    if (degree_[static_cast<std::size_t>(doc)] > 1) continue;
    if (place_in_ring_wait(doc)) continue;
    place_on_least_loaded(doc);
  }
}

bool Partitioner::place_in_ring_wait(int doc) {
  const int bin = waiting_.empty() ? -1 : free_bin(doc);
  if (bin < 0) return false;
  at(idle_, bin_mb(bin), bin_rank(bin)) -= local_cost(doc);
  at(tokens_, bin_mb(bin), bin_rank(bin)) += length(doc);
  local_[static_cast<std::size_t>(bin)].push_back(doc);
  return true;
}

// The waiting bin with room whose wait is the longest and covers the document's cost (the lowest such bin
// among equal waits); −1 if none. Bins are taken from the heap in (wait, −bin) order: a stale entry (the
// bin's wait shrank since) is put back at its current wait; a bin without room for this document is set
// aside and put back after; the first current entry whose wait is below the cost ends the search, since
// no bin waits longer than its largest entry.
int Partitioner::free_bin(int doc) {
  const auto s = length(doc);
  const auto wait_of = [this](int bin) { return at(idle_, bin_mb(bin), bin_rank(bin)); };
  const auto pop = [this] {
    std::pop_heap(waiting_heap_.begin(), waiting_heap_.end());
    const Entry top = waiting_heap_.back();
    waiting_heap_.pop_back();
    return top;
  };
  const auto push = [this](Entry e) {
    waiting_heap_.push_back(e);
    std::push_heap(waiting_heap_.begin(), waiting_heap_.end());
  };
  waiting_full_.clear();
  int found = -1;
  while (!waiting_heap_.empty()) {
    const auto [w, negative_bin] = waiting_heap_.front();
    const int bin = -negative_bin;
    const double now = wait_of(bin);
    if (w != now) {  // stale: its wait shrank
      pop();
      push({now, negative_bin});
      continue;
    }
    if (now < local_cost(doc)) break;
    if (at(tokens_, bin_mb(bin), bin_rank(bin)) + s > m_.capacity) {
      waiting_full_.push_back(pop());
      continue;
    }
    found = bin;
    break;
  }
  for (const Entry& e : waiting_full_) push(e);
  return found;
}

// Waits only shrink while local sequences are placed, except where a ring is widened for a sequence that
// fits nowhere (its members' waits grow): then the heap is built again.
void Partitioner::rebuild_waiting_heap() {
  waiting_heap_.clear();
  for (const int bin : waiting_) waiting_heap_.emplace_back(at(idle_, bin_mb(bin), bin_rank(bin)), -bin);
  std::make_heap(waiting_heap_.begin(), waiting_heap_.end());
}

// A min-heap on (load, place): the places are taken in that order, so the choice is the first in (load,
// place) order with room. A place without room for this document is parked, keyed by its room; since
// documents come longest first and a parked place's tokens do not grow, it returns to the heap once a
// document fits its room. (Putting it back after every document made a memory-tight iteration pop every
// full place per document: 90 % of a 1024-GPU, 64K-token plan's time.)
void Partitioner::place_on_least_loaded(int doc) {
  const auto s = length(doc);
  while (!parked_.empty() && parked_.front().first >= s) {
    std::pop_heap(parked_.begin(), parked_.end());
    const int place = parked_.back().second;
    parked_.pop_back();
    by_load_.emplace_back(place_load(place), place);
    std::push_heap(by_load_.begin(), by_load_.end(), std::greater<>());
  }
  // A free placement raised its bin's load as seen here (its wait shrank): entries only ever grow, so a
  // stale entry is corrected before it is trusted (at the root, by sinking it).
  while (!by_load_.empty() && by_load_.front().first < place_load(by_load_.front().second)) {
    by_load_.front().first = place_load(by_load_.front().second);
    sift_down_min_heap(by_load_);
  }
  // Usually the least-loaded place has room: its load then grows in place and sinks to its new position,
  // one sift instead of a pop and a push. The heap's layout never decides the choice (places are
  // distinct).
  int bin = by_load_.empty() ? -1 : bin_for(by_load_.front().second, s);
  const bool top_has_room = bin >= 0;
  Entry taken{0.0, -1};
  while (bin < 0 && !by_load_.empty()) {
    std::pop_heap(by_load_.begin(), by_load_.end(), std::greater<>());
    const Entry top = by_load_.back();
    by_load_.pop_back();
    if (const double load = place_load(top.second); top.first < load) {
      by_load_.emplace_back(load, top.second);
      std::push_heap(by_load_.begin(), by_load_.end(), std::greater<>());
      continue;
    }
    bin = bin_for(top.second, s);
    if (bin >= 0) {
      taken = top;
    } else {
      parked_.emplace_back(room_of(top.second), top.second);
      std::push_heap(parked_.begin(), parked_.end());
    }
  }
  if (bin < 0) {
    place_widening(doc, 2);
    rebuild_heap();  // the ring changed its members' loads
    rebuild_waiting_heap();
    return;
  }
  const int r = bin_rank(bin), mb = bin_mb(bin);
  // What fills a ring's wait in its bin adds no time; the rest does.
  const double absorbed = std::min(at(idle_, mb, r), local_cost(doc));
  at(idle_, mb, r) -= absorbed;
  out_.gpu_load[static_cast<std::size_t>(r)] += local_cost(doc) - absorbed;
  at(out_.bin_load, mb, r) += local_cost(doc) - absorbed;
  at(tokens_, mb, r) += s;
  local_[static_cast<std::size_t>(bin)].push_back(doc);
  const int place = per_bin_ ? bin : r;
  if (top_has_room) {
    by_load_.front().first = place_load(place);
    sift_down_min_heap(by_load_);
  } else {
    by_load_.emplace_back(place_load(taken.second), taken.second);
    std::push_heap(by_load_.begin(), by_load_.end(), std::greater<>());
  }
}

void Partitioner::rebuild_heap() {
  by_load_.clear();
  parked_.clear();
  for (int place = 0; place < places_; ++place) by_load_.emplace_back(place_load(place), place);
  std::make_heap(by_load_.begin(), by_load_.end(), std::greater<>());
}

// The most tokens one of a place's bins still has room for.
std::int64_t Partitioner::room_of(int place) const {
  std::int64_t room = 0;
  for (const int bin : bins_of(place))
    room = std::max(room, m_.capacity - at(tokens_, bin_mb(bin), bin_rank(bin)));
  return room;
}

// The bin a place offers a document of s tokens, −1 without room: a GPU's micro-batch whose rings still
// wait the longest (the document may fill that wait), else its roomiest.
int Partitioner::bin_for(int place, std::int64_t s) const {
  if (per_bin_) return at(tokens_, bin_mb(place), bin_rank(place)) + s <= m_.capacity ? place : -1;
  int best = -1;
  for (int mb = 0; mb < k_; ++mb) {
    if (at(tokens_, mb, place) + s > m_.capacity) continue;
    if (best < 0 || std::make_pair(at(idle_, mb, place), -at(tokens_, mb, place)) >
                        std::make_pair(at(idle_, best, place), -at(tokens_, best, place)))
      best = mb;
  }
  return best < 0 ? -1 : best * m_.world + place;
}

// Refine: LPT leaves the most loaded place above the mean when its largest local sequence is too big to
// balance by placement alone; splitting that sequence into a 2-GPU ring inside its node (in its
// micro-batch) moves half of it to the node's least-loaded GPU with room. Repeated while it lowers the most
// loaded place's load, at most twice per place.
void Partitioner::refine() {
  for (int iter = 0; iter < 2 * places_ && m_.gpn >= 2; ++iter) {
    if (!refine_once()) break;
  }
}

// One split; false when there is nothing (more) to gain.
bool Partitioner::refine_once() {
  int worst = 0;
  double sum = 0;
  for (int place = 0; place < places_; ++place) {
    sum += place_load(place);
    if (place_load(place) > place_load(worst)) worst = place;
  }
  const double worst_load = place_load(worst);
  if (worst_load <= sum / places_ * (1 + balance_tolerance)) return false;
  int big_bin = -1;
  std::size_t big_at = 0;
  for (const int bin : bins_of(worst)) {
    const auto& docs = local_[static_cast<std::size_t>(bin)];
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (big_bin < 0 || length(docs[i]) > length(local_[static_cast<std::size_t>(big_bin)][big_at]))
        big_bin = bin, big_at = i;
    }
  }
  if (big_bin < 0) return false;
  auto& mine = local_[static_cast<std::size_t>(big_bin)];
  const int doc = mine[big_at];
  const int r = bin_rank(big_bin), mb = bin_mb(big_bin);
  const auto s = length(doc);
  const int node = r / m_.gpn;
  int partner = -1;
  for (int i = 0; i < m_.gpn; ++i) {
    const int q = node * m_.gpn + i;
    if (q == r || at(tokens_, mb, q) + PartitionModel::rank_tokens(s, 2) > m_.capacity) continue;
    if (partner < 0 || gpu_key(q, mb) < gpu_key(partner, mb)) partner = q;
  }
  if (partner < 0) return false;
  const double ring = m_.ring_seconds(static_cast<double>(s), 2);
  const double own = local_cost(doc);
  const double new_r = gpu_key(r, mb) - own + ring;
  const double new_p = gpu_key(partner, mb) + ring;
  if (std::max(new_r, new_p) >= worst_load) return false;
  mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(big_at));
  out_.gpu_load[static_cast<std::size_t>(r)] -= own;
  at(out_.bin_load, mb, r) -= own;
  at(tokens_, mb, r) -= s;
  place_ring(doc, {std::min(r, partner), std::max(r, partner)}, plan::Level::intra_node, mb);
  return true;
}

}  // namespace zb::zeppelin::detail
