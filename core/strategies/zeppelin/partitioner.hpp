#pragma once
// Zeppelin's hierarchical sequence partitioner (docs/STRATEGIES.md § zeppelin).
//
// 1. Hide points: for each link (NVLink; the routed NIC aggregate, or one GPU's NIC without routing) the
//    smallest per-rank chunk c = s/P at which one zigzag ring step's attention compute covers its KV
//    transfer, solved on the cost model.
// 2. Degree: each sequence needs P ≥ ⌈s/M⌉ ranks for memory and P ≥ cost(s)/L* for balance, where L* is
//    the mean per-GPU load of the batch. P = 1 → local; 2 ≤ P ≤ G → an intra-node ring of exactly P GPUs
//    (any P, not only the whole node); P > G → an inter-node ring over ⌈P/G⌉ whole nodes. A degree is
//    raised while that lowers the sequence's estimated ring time (more ranks hide more compute) up to the
//    level's limit.
// 3. Balance: inter-node rings go to the least-loaded node sets, intra-node rings to the least-loaded
//    node (on its P least-loaded GPUs), local sequences longest-first to the least-loaded GPU with room.
//    A sequence whose GPUs are full takes a wider ring instead (a local one the narrowest ring that
//    fits); only when no ring up to the whole cluster has room is it reported out of memory.
// 4. Refine: while the most loaded GPU exceeds the mean by more than 5 %, split its largest local sequence
//    into a 2-GPU intra-node ring when the estimate says the maximum load drops.
//
// The whole iteration is partitioned at once (issue 31): the load target L* is the mean per-GPU load of
// the whole batch, and the micro-batches are slots of each GPU's memory, not separate batches. Every
// placement is a bin (GPU, micro-batch) with the per-GPU token capacity M; rings and local sequences go to
// the least-loaded bins with room, so a long sequence takes the ring its memory and the whole iteration's
// balance need, instead of a wide ring in every micro-batch (which forming micro-batches by token count
// and balancing each on its own forced: each got one of the longest sequences and a small L*).
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb::zeppelin {

// How a sequence's ring degree is chosen (step 2). balance: the paper's, P ≥ ⌈s/M⌉ and P ≥ cost(s)/L*,
// any P inside a node. tiled: the same P rounded up to a divisor of the node's GPU count, so that the
// rings of a micro-batch tile the node and start together. memory: memory alone, ⌈s/M⌉ tiled (short
// sequences whole on one GPU, long ones on the smallest tiling group that holds them: the layout the
// hybrid-dp baseline reaches, as a special case of the classes).
// node (for head-parallel groups, zeppelin's heads: auto): a sequence the balance rule would ring inside a
// node takes the whole node, where splitting its heads balances it exactly.
enum class Degrees { balance, tiled, memory, node };

struct PartitionOptions {
  bool routing = true;          // inter-node bandwidth = the node's NIC aggregate
  bool include_linear = false;  // without remap, linear work follows the attention layout
  bool hierarchical = true;     // false = "flat": every sequence over all GPUs (or over a group of them)
  int flat_width = 0;           // flat: GPUs per group (whole nodes, dividing the world); 0 = all
  bool backward = false;        // loads count the backward pass too (hide points stay forward-only)
  int micro_batches = 1;        // memory slots per GPU (each holds at most M tokens)
  // Balance each micro-batch's GPUs (when something joins them between micro-batches: the remap's
  // all-to-all-v) instead of each GPU's whole iteration.
  bool per_micro_batch = false;
  Degrees degrees = Degrees::balance;
};

// One CP group decided by the partitioner.
struct GroupAssignment {
  plan::Level level = plan::Level::local;
  std::vector<int> ranks;
  std::vector<int> docs;  // indices into the batch's lengths
  int micro_batch = 0;
};

struct Thresholds {
  double hide_nvlink_tokens = 0;     // per-rank chunk at which an NVLink ring step hides its transfer
  double hide_internode_tokens = 0;  // same for the inter-node link the planner assumes
  double load_target_seconds = 0;    // L*: mean per-GPU load
  std::int64_t local_below = 0;      // sequences shorter than this stay on one GPU
  std::int64_t inter_from = 0;       // sequences at least this long span nodes
};

struct Partition {
  // By micro-batch; inside one, inter-node first, then intra-node, then local.
  std::vector<GroupAssignment> groups;
  Thresholds thresholds;
  int micro_batches = 1;
  std::vector<double> gpu_load;               // estimated seconds per GPU, whole iteration
  std::vector<std::vector<double>> bin_load;  // [micro-batch][GPU] estimated seconds
  std::vector<std::int64_t> gpu_tokens;       // per GPU, its fullest micro-batch's tokens
  std::vector<plan::OomReport> oom;
};

// Each sequence's own ring degree (step 2) under `options`, before placement widens any: the planner
// compares the degree rules by it and plans only those that differ.
[[nodiscard]] std::vector<int> ring_degrees(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                                            const PartitionOptions& options);

[[nodiscard]] Partition partition(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                                  const PartitionOptions& options);
// The documents longest first, equal lengths in the batch's order (step 3's LPT order). It depends on the
// lengths alone, so a planner that partitions one batch several ways sorts it once and passes it here.
[[nodiscard]] std::vector<int> longest_first(const std::vector<std::int64_t>& lengths);
[[nodiscard]] Partition partition(const std::vector<std::int64_t>& lengths, const std::vector<int>& order,
                                  const CostModel& cost, const PartitionOptions& options);

}  // namespace zb::zeppelin
