// Megatron-Core's balanced hybrid-CP schedule, re-stated (docs/STRATEGIES.md "dynamic-cp" lists each
// step with its Megatron name). A round's groups are allocated left to right from the lowest free GPU,
// so a group is a run of consecutive GPUs and its position is the sum of the sizes before it; GPUs not
// yet in a group carry no work. That lets the round track one load per group instead of per GPU.
#include "core/strategies/dynamic_cp_schedule.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace zb {
namespace {

// Megatron's slack: a round is balanced once max − min ≤ 5 % of max over all GPUs.
constexpr double kBalanceSlack = 0.05;
// Megatron closes a bucket when it would exceed its share of the work by more than 10 %.
constexpr double kBucketOverfill = 1.1;

class RoundBuilder {
 public:
  RoundBuilder(const std::vector<std::int64_t>& lengths, std::int64_t max_per_rank, int world)
      : lengths_(lengths), max_per_rank_(max_per_rank), world_(world) {}

  int cp(int doc) const { return dynamic_cp_size(lengths_[static_cast<std::size_t>(doc)], max_per_rank_); }
  // Megatron's `get_total_workload` at the document's own CP size: s² / cp, a relative measure.
  double workload(int doc) const {
    const auto s = static_cast<double>(lengths_[static_cast<std::size_t>(doc)]);
    return s * s / cp(doc);
  }

  // `make_buckets_equal`: as many buckets as distinct CP sizes, cut from the (ordered) samples into runs
  // of about equal work. Megatron's keep-enough-samples test counts a closed bucket twice (it lowers
  // the number of buckets left and also counts the bucket itself); kept as it is.
  std::vector<std::vector<int>> buckets(const std::vector<int>& samples) const {
    std::set<int> sizes;
    double total = 0;
    for (const int d : samples) sizes.insert(cp(d)), total += workload(d);
    const auto k = static_cast<std::ptrdiff_t>(sizes.size());
    const double target = total / static_cast<double>(k);
    std::vector<std::vector<int>> out;
    std::vector<int> current;
    double current_work = 0;
    const auto n = static_cast<std::ptrdiff_t>(samples.size());
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const int d = samples[static_cast<std::size_t>(i)];
      const double w = workload(d);
      const auto closed = static_cast<std::ptrdiff_t>(out.size());
      if (!current.empty() && (current_work + w > target * kBucketOverfill || n - i <= k - 2 * closed)) {
        out.push_back(std::move(current));
        current.clear();
        current_work = 0;
      }
      current.push_back(d);
      current_work += w;
    }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
  }

  // `next_hdp_group` with `trim_overload` and `fill_empty_gpus`: one round; `samples` becomes what is
  // left for the next rounds.
  DynamicCpRound next_round(std::vector<int>& samples) {
    groups_.clear();
    used_ = 0;
    std::vector<std::vector<int>> bucket = buckets(samples);
    std::vector<std::size_t> head(bucket.size(), 0);
    std::size_t front = 0;  // Megatron drops emptied buckets only from the front
    int first_cp = 0;
    bool check_balance = false;
    while (front < bucket.size()) {
      // The first bucket whose next sample has a group of its size or enough free GPUs for a new one.
      std::size_t b = front;
      for (; b < bucket.size(); ++b) {
        if (head[b] == bucket[b].size()) continue;
        const int need = cp(bucket[b][head[b]]);
        if (used_ + need <= world_ || least_loaded_of_size(need) >= 0) break;
      }
      if (b == bucket.size()) break;
      const int doc = bucket[b][head[b]++];
      const int need = cp(doc);
      if (first_cp == 0) first_cp = need;
      // Free GPUs carry no work in this round, so a new group beats any existing one (Megatron compares
      // the new members' load, zero, with the best existing group's).
      int g = least_loaded_of_size(need);
      if (used_ + need <= world_ && (g < 0 || groups_[static_cast<std::size_t>(g)].load > 0)) {
        groups_.push_back({used_, need, {}, 0});
        used_ += need;
        g = static_cast<int>(groups_.size()) - 1;
      }
      groups_[static_cast<std::size_t>(g)].docs.push_back(doc);
      groups_[static_cast<std::size_t>(g)].load += workload(doc);
      while (front < bucket.size() && head[front] == bucket[front].size()) ++front;
      // Megatron starts checking balance once a sample smaller than the round's first one is placed.
      if (need < first_cp) check_balance = true;
      if (check_balance && front < bucket.size() && slack() <= kBalanceSlack * max_load()) break;
    }
    samples.clear();
    for (std::size_t b = front; b < bucket.size(); ++b)
      samples.insert(samples.end(), bucket[b].begin() + static_cast<std::ptrdiff_t>(head[b]),
                     bucket[b].end());
    trim_overload(samples);
    fill_empty_gpus();
    return DynamicCpRound{std::move(groups_)};
  }

 private:
  // The existing group of exactly `size` GPUs with the least load (the first on ties); -1 when none.
  int least_loaded_of_size(int size) const {
    int best = -1;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].size != size) continue;
      if (best < 0 || groups_[g].load < groups_[static_cast<std::size_t>(best)].load)
        best = static_cast<int>(g);
    }
    return best;
  }
  double max_load() const {
    double m = 0;
    for (const DynamicCpGroup& g : groups_) m = std::max(m, g.load);
    return m;
  }
  double min_load() const {
    if (used_ < world_ || groups_.empty()) return 0;  // a free GPU has no work
    double m = groups_.front().load;
    for (const DynamicCpGroup& g : groups_) m = std::min(m, g.load);
    return m;
  }
  double slack() const { return max_load() - min_load(); }

  // `trim_overload`: while the round is out of balance and no GPU is idle, the most loaded group (the
  // lowest GPUs on ties) gives back its last document if that narrows the slack; a group keeps one.
  void trim_overload(std::vector<int>& leftovers) {
    while (true) {
      const double slack_now = slack();
      if (slack_now <= kBalanceSlack * max_load() || min_load() == 0) return;
      const double top = max_load();
      auto it = std::find_if(groups_.begin(), groups_.end(),
                             [top](const DynamicCpGroup& g) { return g.load == top; });
      if (it->docs.size() <= 1) return;
      const int doc = it->docs.back();
      const double before = it->load;
      it->load -= workload(doc);
      if (slack() < slack_now) {
        it->docs.pop_back();
        leftovers.push_back(doc);
      } else {
        it->load = before;
        return;
      }
    }
  }

  // `fill_empty_gpus`: while GPUs are idle, the first group of the smallest size doubles (capped at the
  // world), its documents now sharded over the wider group, and the groups after it move right. Megatron
  // assumes the idle GPUs suffice; on a world that is not a power of two they may not, so the growth is
  // capped at the idle count.
  void fill_empty_gpus() {
    while (used_ < world_) {
      auto smallest =
          std::min_element(groups_.begin(), groups_.end(),
                           [](const DynamicCpGroup& a, const DynamicCpGroup& b) { return a.size < b.size; });
      const int grow = std::min(std::min(2 * smallest->size, world_) - smallest->size, world_ - used_);
      smallest->size += grow;
      for (auto it = smallest + 1; it != groups_.end(); ++it) it->first_rank += grow;
      used_ += grow;
    }
  }

  const std::vector<std::int64_t>& lengths_;
  std::int64_t max_per_rank_;
  int world_;
  std::vector<DynamicCpGroup> groups_;
  int used_ = 0;  // GPUs [0, used_) are in groups
};

}  // namespace

int dynamic_cp_size(std::int64_t length, std::int64_t max_seqlen_per_rank) {
  const std::int64_t ranks = (length + max_seqlen_per_rank - 1) / max_seqlen_per_rank;
  std::int64_t p = 1;
  while (p < ranks) p *= 2;
  return static_cast<int>(std::min<std::int64_t>(p, std::int64_t{1} << 30));
}

std::vector<DynamicCpRound> schedule_dynamic_cp(const std::vector<std::int64_t>& lengths,
                                                std::int64_t max_seqlen_per_rank, int world) {
  // Megatron sorts the samples longest first (a stable sort: equal lengths keep batch order).
  std::vector<int> samples(lengths.size());
  std::iota(samples.begin(), samples.end(), 0);
  std::stable_sort(samples.begin(), samples.end(), [&](int a, int b) {
    return lengths[static_cast<std::size_t>(a)] > lengths[static_cast<std::size_t>(b)];
  });
  RoundBuilder builder(lengths, max_seqlen_per_rank, world);
  std::vector<DynamicCpRound> rounds;
  while (!samples.empty()) rounds.push_back(builder.next_round(samples));
  return rounds;
}

}  // namespace zb
