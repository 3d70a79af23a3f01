// Megatron-LM dev's packing-aware dynamic-CP schedule, re-stated. Within a micro-batch, new groups always
// take the lowest free GPUs, so the busy GPUs are a prefix [0, used) and every GPU of a group carries the
// same load; the builder therefore keeps one record per group instead of one per GPU, and the projected
// maximum of an option is max(current maximum, the option's group load), which equals Megatron's maximum
// over all ranks exactly.
//
// Megatron schedules on the padded THD lengths (`padded_seq_len`). Here a document's tokens in a group of
// `size` are its zigzag-padded length, pad(s, 2·size) (s alone on one GPU), the rows the group's GPUs
// really hold, so a group the token test admits always fits memory when max_seqlen_per_rank does. The
// workload s²/size stays on the length as given.
//
// Deviations, all outside what Megatron supports or where its code would fail:
// - min_cp_size is rounded up to a power of two: Megatron only creates CP groups whose size is a power of
//   two (create_dynamic_dp_cp_groups), so another minimum has no groups to run on.
// - A world that is not a power of two (Megatron only asks for an even DP×CP): candidate sizes are the
//   powers of two ≤ world, and doubling a group may stop at the whole world, as in Megatron. When the idle
//   GPUs are too few to double the smallest group, Megatron's fill_empty_gpus_once either skips the group
//   or indexes past the last rank; here it always falls back to the whole-world group, which is what
//   Megatron's docstring says it intends.
// - A document of length 0 takes the minimum size (Megatron's log2 of 0 would fail).
// - The whole-world fallback's token test is the exact Σ s ≤ max × world rather than a floating sum of
//   s / world; the two agree whenever world is a power of two.
#include "core/strategies/dynamic_cp_packing.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/strategies/dynamic_cp_schedule.hpp"

namespace zb {
namespace {

// Megatron's _DYNAMIC_CP_WORKLOAD_CAP_DELTA: no GPU may be given more than 5 % above the work the tallest
// document of the micro-batch would put on a GPU holding a full max_seqlen_per_rank share. Kept for
// fidelity, though the token test already implies it: a group within Σ s ≤ max × size has
// Σ s² / size ≤ tallest × max, so the cap never rejects an option that the token test admits.
constexpr double kWorkloadCapSlack = 0.05;

int floor_log2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

// A group while its micro-batch is built. `tokens` is Σ of its documents' padded lengths at its size:
// Megatron's capacity test adds s / size per document, and as every document joins at the group's
// current size, Σ s / size ≤ max is exactly Σ s ≤ max × size, kept in integers.
struct Group {
  int first_rank = 0;
  int size = 0;
  std::vector<int> docs;
  double load = 0;
  std::int64_t tokens = 0;
};

class MicroBatchBuilder {
 public:
  MicroBatchBuilder(const std::vector<std::int64_t>& lengths, std::int64_t max_per_rank, int world,
                    int min_cp)
      : lengths_(lengths),
        max_per_rank_(max_per_rank),
        world_(world),
        min_cp_(min_cp),
        by_size_(static_cast<std::size_t>(floor_log2(world)) + 1) {}

  std::int64_t length(int doc) const { return lengths_[static_cast<std::size_t>(doc)]; }
  // The document's rows over a group of `size`: zigzag pads to 2·size; one GPU holds it as it is.
  std::int64_t padded(int doc, int size) const {
    const std::int64_t s = length(doc);
    if (size == 1) return s;
    const std::int64_t align = 2LL * size;
    return (s + align - 1) / align * align;
  }
  int min_size(int doc) const { return dynamic_cp_min_size(length(doc), max_per_rank_, min_cp_); }
  // Megatron's `workload`: s² / size per GPU, the attention-only cost model.
  double workload(int doc, int size) const {
    const auto s = static_cast<double>(length(doc));
    return s * s / size;
  }

  // next_hdp_group_packing_aware: builds one micro-batch from `pending` (longest first); `pending` becomes
  // the documents left for later micro-batches, still longest first.
  DynamicCpMicroBatch next(std::vector<int>& pending) {
    groups_.clear();
    for (std::vector<int>& list : by_size_) list.clear();
    used_ = 0;
    max_load_ = 0;
    // The tallest document opens the first group on the lowest GPUs and sets the workload cap.
    const int tallest = pending.front();
    const double cap =
        static_cast<double>(length(tallest)) * static_cast<double>(max_per_rank_) * (1.0 + kWorkloadCapSlack);
    open(tallest, min_size(tallest));
    std::vector<int> leftovers;
    for (std::size_t i = 1; i < pending.size(); ++i)
      if (!place(pending[i], cap)) leftovers.push_back(pending[i]);
    if (!fill_empty_gpus()) leftovers = fill_whole_world(pending);
    if (leftovers.size() >= pending.size()) throw std::logic_error("dynamic-cp packing placed no document");
    pending = std::move(leftovers);
    return finish();
  }

 private:
  void open(int doc, int size) {
    by_size_[static_cast<std::size_t>(floor_log2(size))].push_back(static_cast<int>(groups_.size()));
    groups_.push_back({used_, size, {}, 0, 0});
    used_ += size;
    add(static_cast<int>(groups_.size()) - 1, doc);
  }
  void add(int g, int doc) {
    Group& group = groups_[static_cast<std::size_t>(g)];
    group.docs.push_back(doc);
    group.load += workload(doc, group.size);
    group.tokens += padded(doc, group.size);
    max_load_ = std::max(max_load_, group.load);
  }

  // One document of Megatron's placement loop. Sizes are tried from the document's minimum upward,
  // doubling; at each size first every existing group of exactly that size with token room ("add"), in
  // rank order, then a new group on the lowest free GPUs ("new"). The option with the lowest projected
  // maximum GPU load within the cap wins; only a strictly lower one replaces an earlier option, so ties
  // go to the smaller size, then to an existing group, then to the lower ranks. No option can project
  // below the current maximum, so the search stops once one reaches it. False: the document is a leftover.
  bool place(int doc, double cap) {
    double best = std::numeric_limits<double>::infinity();
    int best_group = -1;  // -1: a new group
    int best_size = 0;    // 0: no option
    for (int size = min_size(doc); size <= world_ && best > max_load_;
         size = size > world_ / 2 ? world_ + 1 : 2 * size) {  // doubling without overflow
      const double cost = workload(doc, size);
      const std::int64_t s = padded(doc, size);
      for (const int g : by_size_[static_cast<std::size_t>(floor_log2(size))]) {
        const Group& group = groups_[static_cast<std::size_t>(g)];
        if (group.tokens + s > max_per_rank_ * size) continue;
        const double projected = std::max(max_load_, group.load + cost);
        if (projected <= cap && projected < best) {
          best = projected, best_group = g, best_size = size;
          if (best <= max_load_) break;
        }
      }
      if (best > max_load_ && world_ - used_ >= size && s <= max_per_rank_ * size) {
        const double projected = std::max(max_load_, cost);
        if (projected <= cap && projected < best) best = projected, best_group = -1, best_size = size;
      }
    }
    if (best_size == 0) return false;
    if (best_group < 0) {
      open(doc, best_size);
    } else {
      add(best_group, doc);
    }
    return true;
  }

  // fill_empty_gpus_once, repeated while GPUs idle: the first group of the smallest size doubles (capped at
  // the world), its documents now sharded over twice the GPUs, and the groups after it move right. The
  // placement loop leaves the groups in non-increasing size order, so the doubled group stays aligned.
  // False when the idle GPUs are too few for that (only on a world that is not a power of two).
  bool fill_empty_gpus() {
    while (used_ < world_) {
      const auto smallest = std::min_element(groups_.begin(), groups_.end(),
                                             [](const Group& a, const Group& b) { return a.size < b.size; });
      const int grow = std::min(2 * smallest->size, world_) - smallest->size;
      if (grow > world_ - used_) return false;
      smallest->size += grow;
      smallest->load = 0;
      smallest->tokens = 0;
      for (const int doc : smallest->docs) {
        smallest->load += workload(doc, smallest->size);
        smallest->tokens += padded(doc, smallest->size);
      }
      for (auto it = smallest + 1; it != groups_.end(); ++it) it->first_rank += grow;
      used_ += grow;
    }
    return true;
  }

  // fill_with_full_dpxcp_group: drops this micro-batch's placement and packs, longest first, every document
  // whose share still fits into one group over the whole world; returns the rest.
  std::vector<int> fill_whole_world(const std::vector<int>& pending) {
    groups_.assign(1, Group{0, world_, {}, 0, 0});
    used_ = world_;
    Group& all = groups_.front();
    std::vector<int> rest;
    for (const int doc : pending) {
      if (all.tokens + padded(doc, world_) <= max_per_rank_ * world_) {
        all.docs.push_back(doc);
        all.tokens += padded(doc, world_);
        all.load += workload(doc, world_);
      } else {
        rest.push_back(doc);
      }
    }
    return rest;
  }

  DynamicCpMicroBatch finish() {
    DynamicCpMicroBatch mb;
    mb.groups.reserve(groups_.size());
    for (Group& g : groups_)
      mb.groups.push_back(
          {g.first_rank, g.size, std::move(g.docs), g.load, (g.tokens + g.size - 1) / g.size});
    return mb;
  }

  const std::vector<std::int64_t>& lengths_;
  std::int64_t max_per_rank_;
  int world_;
  int min_cp_;
  std::vector<Group> groups_;              // in rank order: [0, used_) is busy
  std::vector<std::vector<int>> by_size_;  // by log2(size): indices into groups_, in rank order
  int used_ = 0;
  double max_load_ = 0;  // the largest group load, that is the largest GPU load
};

}  // namespace

int dynamic_cp_min_size(std::int64_t length, std::int64_t max_seqlen_per_rank, int min_cp_size) {
  int floor = 1;
  while (floor < min_cp_size && floor < (1 << 30)) floor *= 2;
  return std::max(floor, dynamic_cp_size(length, max_seqlen_per_rank));
}

std::vector<DynamicCpMicroBatch> schedule_dynamic_cp_packed(const std::vector<std::int64_t>& lengths,
                                                            std::int64_t max_seqlen_per_rank, int world,
                                                            int min_cp_size) {
  if (world < 1 || max_seqlen_per_rank < 1)
    throw std::invalid_argument("dynamic-cp packing needs world ≥ 1 and max_seqlen_per_rank ≥ 1");
  for (std::size_t d = 0; d < lengths.size(); ++d)
    if (lengths[d] < 0 || dynamic_cp_min_size(lengths[d], max_seqlen_per_rank, min_cp_size) > world)
      throw std::invalid_argument("dynamic-cp packing: document " + std::to_string(d) + " of length " +
                                  std::to_string(lengths[d]) + " needs more GPUs than the world has");
  // DefaultDynamicCPScheduler sorts longest first with a stable sort, so equal lengths keep batch order;
  // leftovers come back as a subsequence of that order, so one sort serves every micro-batch.
  std::vector<int> pending(lengths.size());
  std::iota(pending.begin(), pending.end(), 0);
  std::stable_sort(pending.begin(), pending.end(), [&](int a, int b) {
    return lengths[static_cast<std::size_t>(a)] > lengths[static_cast<std::size_t>(b)];
  });
  MicroBatchBuilder builder(lengths, max_seqlen_per_rank, world, min_cp_size);
  std::vector<DynamicCpMicroBatch> schedule;
  while (!pending.empty()) schedule.push_back(builder.next(pending));
  return schedule;
}

}  // namespace zb
