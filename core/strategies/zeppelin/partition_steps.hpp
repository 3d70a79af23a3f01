#pragma once
// One run of Zeppelin's partitioner (partitioner.hpp) as named steps over the state they share: the
// partition being filled, each bin's (micro-batch, GPU) tokens and ring waits, and the groups placed so
// far. Private to partitioner.cpp (the run, its set-up and the flat form), partition_steps.cpp (the rings)
// and partition_locals.cpp (the local sequences, the refinement). The steps run in a fixed order and each
// reads what the ones before left, so the class has one public entry, `run`, and is used once.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/strategies/zeppelin/partition_model.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"

namespace zb::zeppelin::detail {

class Partitioner {
 public:
  // `order`: longest_first(lengths) (step 3 places the long documents, which have the fewest choices,
  // first); kept by reference, as `lengths` is.
  Partitioner(const std::vector<std::int64_t>& lengths, const std::vector<int>& order, const CostModel& cost,
              const PartitionOptions& options);
  Partitioner(const Partitioner&) = delete;
  Partitioner& operator=(const Partitioner&) = delete;

  // The partition of `lengths`; call once.
  [[nodiscard]] Partition run();

 private:
  // A (load, place) entry of the min-heap the local placement takes places from.
  using Entry = std::pair<double, int>;

  // --- partitioner.cpp: set-up, the flat form, the result ---
  void cost_documents();
  void set_thresholds();
  void partition_flat();
  void collect_groups();
  void finish_tokens();
  void add_oom(int rank, int mb, std::int64_t need);

  // --- partition_steps.cpp: the rings ---
  void place_rings();
  void align_rings();
  void place_ring(int doc, std::vector<int> ranks, plan::Level level, int mb);
  bool try_ring(int doc, int p);
  bool try_inter_node_ring(int doc, int p);
  bool try_intra_node_ring(int doc, int p);
  void place_widening(int doc, int p);

  // --- partition_locals.cpp: the local sequences ---
  void place_locals();
  void refine();
  [[nodiscard]] bool place_in_ring_wait(int doc);
  void place_on_least_loaded(int doc);
  void rebuild_heap();
  [[nodiscard]] int free_bin(int doc);
  void rebuild_waiting_heap();
  [[nodiscard]] int bin_for(int place, std::int64_t s) const;
  [[nodiscard]] std::int64_t room_of(int place) const;

  [[nodiscard]] bool refine_once();

  // --- partition_steps.cpp: what a placement balances and how loaded a place looks ---
  [[nodiscard]] double gpu_key(int r, int mb) const;
  [[nodiscard]] double node_key(int node, int mb) const;
  [[nodiscard]] double idle_of(int place) const;
  [[nodiscard]] double place_load(int place) const;
  [[nodiscard]] std::vector<int> bins_of(int place) const;
  [[nodiscard]] int bin_rank(int bin) const { return bin % m_.world; }
  [[nodiscard]] int bin_mb(int bin) const { return bin / m_.world; }

  // One bin's entry of a [micro-batch][GPU] table.
  template <typename Table>
  static auto& at(Table& table, int mb, int r) {
    return table[static_cast<std::size_t>(mb)][static_cast<std::size_t>(r)];
  }
  [[nodiscard]] std::int64_t length(int doc) const { return lengths_[static_cast<std::size_t>(doc)]; }
  [[nodiscard]] double local_cost(int doc) const { return local_cost_[static_cast<std::size_t>(doc)]; }

  const std::vector<std::int64_t>& lengths_;
  const std::vector<int>& order_;  // documents, longest first (stable)
  const CostModel& cost_;
  const PartitionOptions options_;
  const int k_;  // micro-batches
  const PartitionModel m_;
  // What a placement balances. With the remap every micro-batch ends in an all-to-all-v of every GPU, so
  // each micro-batch's busiest GPU sets its pace: a bin's own load. Without it nothing joins the GPUs
  // between micro-batches: a GPU's whole-iteration load (then the micro-batch only has to have room, and
  // rings take the earliest one, so that their members start them together).
  const bool per_bin_;
  const int places_;  // what the local placement balances: bins (per_bin_) or GPUs

  Partition out_;                                  // gpu_load and bin_load are filled in place
  std::vector<std::vector<std::int64_t>> tokens_;  // [micro-batch][GPU] tokens
  // [micro-batch][GPU]: the ring waits its local work could still fill (PartitionModel::ring_wait).
  std::vector<std::vector<double>> idle_;
  // Each document's local cost and ring degree, worked out once: the steps ask for them repeatedly.
  std::vector<double> local_cost_;
  std::vector<int> degree_;
  double target_ = 0;  // L*: the mean per-GPU load

  std::vector<GroupAssignment> inter_, intra_;  // rings placed, in order of their first document
  std::vector<std::vector<int>> local_;         // by bin mb·N + rank: its local documents
  // A ring's group by (micro-batch, ranks): documents on the same GPUs share one group.
  std::map<std::pair<int, std::vector<int>>, std::size_t> inter_by_ranks_, intra_by_ranks_;

  std::vector<Entry> by_load_;  // the local placement's min-heap on (load, place)
  // Places without room for the document being placed: a max-heap on (room, place).
  std::vector<std::pair<std::int64_t, int>> parked_;
  std::vector<int> waiting_;  // bins whose rings wait for K/V when the local placement starts
  // A max-heap on (wait, −bin) over waiting_: each bin's current wait is at most its largest entry (a bin
  // whose wait shrank keeps a stale entry above it, corrected when it surfaces), so free_bin looks at the
  // bins in (longest wait, lowest bin) order without scanning all of them for every document.
  std::vector<Entry> waiting_heap_;
  std::vector<Entry> waiting_full_;  // free_bin's scratch: bins popped for lacking room
};

}  // namespace zb::zeppelin::detail
