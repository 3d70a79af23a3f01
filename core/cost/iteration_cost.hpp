#pragma once
// The parts of a training iteration outside the transformer layers: the input embedding, the LM head with
// its loss, the data-parallel gradient synchronisation (bucketed, overlapped with the backward as
// Megatron's distributed optimizer runs it) and the optimizer step. The same functions serve the planner's
// prediction and the run metrics of every backend, so no system is charged differently from another.
// Formulas: docs/METRICS.md, "The whole iteration".
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"

namespace zb {

// The tensor-parallel degree t the whole-iteration parts divide by (parameters per GPU, vocab columns of the
// LM head): the scenario's "parallelism.tensor".
[[nodiscard]] int tensor_parallel_degree(const Scenario& scenario);

// How gradients are synchronised over the data-parallel world. zero1: reduce-scatter of the gradients in
// the backward, the optimizer on the rank's shard, all-gather of the updated parameters in the next forward
// (Megatron's distributed optimizer with overlapped grad reduce and param gather). all_reduce: every rank
// all-reduces whole gradients and steps every parameter (plain DDP; model_state_shards = 1).
enum class GradientSync { zero1, all_reduce };

// One data-parallel group as the collective sees it: `members_per_node` GPUs on each of `nodes` nodes
// (the GPUs of one tensor-parallel index; t groups run side by side). Its ring goes from a member to the
// GPU `local_stride` further on its node, and across nodes to the same local GPU `node_stride` nodes on:
// t and 1 for the data-parallel world; t·e GPUs, or e/(g/t) nodes when an expert group fills whole nodes,
// for a routed expert's expert-data-parallel group (docs/METRICS.md, "The whole iteration").
struct DataParallelShape {
  int members_per_node = 1;
  int nodes = 1;
  int local_stride = 1;
  int node_stride = 1;
  [[nodiscard]] int size() const { return members_per_node * nodes; }
};

// One gradient bucket: `params` parameters of one GPU, complete (and its collective launchable) once the
// backward item `ready_after` has finished. Items in backward order: 0 the LM head with its loss, 1..L the
// layers from the last one to the first, L + 1 the input embedding.
struct GradientBucket {
  double params = 0;
  int ready_after = 0;
  bool expert = false;  // routed experts' gradients, reduced over the expert-data-parallel group
};

struct WholeIterationSetup {
  int tensor = 1;
  int layers = 0;
  DataParallelShape dp;
  // A routed expert's data-parallel group (MoE): the GPUs at the same place of every expert group, N/(t·e)
  // of them (Megatron-Core's expert-data-parallel group). The dense model's: unused.
  DataParallelShape expert_dp;
  GradientSync sync = GradientSync::zero1;
  double bucket_params = 0;       // Megatron's default bucket size for this data-parallel world
  double params_per_gpu = 0;      // W_gpu / t (docs/METRICS.md, "Parameters")
  double optimizer_shard = 0;     // parameters the optimizer steps on one GPU
  double bytes_per_gradient = 2;  // β: gradients are reduced in the model dtype (grad_reduce_in_fp32 off)
  std::vector<GradientBucket> buckets;  // in backward order (a layer's dense buckets before its experts')
  [[nodiscard]] const DataParallelShape& group_of(const GradientBucket& b) const {
    return b.expert ? expert_dp : dp;
  }
};

// The setup on the cost model's cluster with tensor-parallel degree `tensor`: every GPU holds 1/t of a model
// replica, and the data-parallel world (every strategy's DP × CP ranks) is the N/t GPUs of each tensor index.
[[nodiscard]] WholeIterationSetup whole_iteration_setup(const CostModel& cost, int tensor);

// Duration of one bucket's collectives over the data-parallel group.
struct BucketCollectiveSeconds {
  double reduce_scatter = 0;  // zero1: in the backward; all_reduce: the all-reduce itself
  double all_gather = 0;      // zero1: in the next forward; all_reduce: 0
  // Of each of the two: the seconds spent in NIC steps (the ring across nodes; they run after the NVLink
  // steps), and the share of a NIC step that is its fixed cost (link latency and per-message overhead),
  // which a NIC shared with the layers' traffic does not stretch. 0: the collective uses no NIC.
  double reduce_scatter_nic = 0;
  double all_gather_nic = 0;
  double nic_fixed_share = 0;
};

// The hierarchical ring the cost model charges (and the simulator runs): a ring over the GPUs of the node
// (NVLink), then a ring over the nodes (every member on its own NIC), each of size−1 steps of bytes/size.
// `bytes` is one GPU's bucket. The simulator's figure for the same steps: core/exec/sim/gradient_collective.
[[nodiscard]] BucketCollectiveSeconds formula_bucket_seconds(const CostModel& cost,
                                                             const WholeIterationSetup& setup, double bytes);
// The same over group `group` (setup.dp above; a bucket's own: setup.group_of(bucket)).
[[nodiscard]] BucketCollectiveSeconds formula_bucket_seconds(const CostModel& cost,
                                                             const WholeIterationSetup& setup,
                                                             const DataParallelShape& group, double bytes);
// formula_bucket_seconds of every bucket of `setup` (index = bucket): the planner's figures.
[[nodiscard]] std::vector<BucketCollectiveSeconds> formula_buckets_seconds(const CostModel& cost,
                                                                           const WholeIterationSetup& setup);
// A bucket's collectives from one direction's duration `one_way` (the NVLink then the NIC steps) of which
// `one_way_nic` in NIC steps, each with `nic_fixed_share` of fixed cost: zero1 runs it once each way, an
// all-reduce twice in the backward.
[[nodiscard]] BucketCollectiveSeconds bucket_seconds_of(const WholeIterationSetup& setup, double one_way,
                                                        double one_way_nic, double nic_fixed_share);
// The share of a NIC ring step of `step_seconds` that is its fixed cost (the NIC's latency and the
// per-message overhead), in [0, 1].
[[nodiscard]] double nic_step_fixed_share(const CostModel& cost, double step_seconds);
// One ring step of `bytes` per member inside a node and across nodes (the cost model's transfer times:
// NVLink, and the NIC share of the most-shared NIC since every member sends at once).
[[nodiscard]] double intra_node_step_seconds(const CostModel& cost, double bytes);
[[nodiscard]] double inter_node_step_seconds(const CostModel& cost, double bytes);

// What the whole-iteration parts add, for the critical rank and per rank (seconds, one iteration).
struct WholeIterationParts {
  std::vector<double> embedding_and_head;  // per rank: embedding fwd/bwd, LM head GEMMs, loss
  double embedding_and_head_critical = 0;  // the slowest rank's (what the iteration waits for)
  double gradient_sync_total = 0;          // sum of every bucket collective (reduce-scatter + all-gather)
  // What the iteration waited for them: the compute stream's waits, and the time the layers lost to the
  // buckets' NIC steps sharing their NICs (gradient_sync_contention, included here).
  double gradient_sync_exposed = 0;
  double gradient_sync_contention = 0;
  double optimizer = 0;
  double head_flops = 0;  // LM head GEMM FLOPs of the iteration, all ranks, fwd + bwd
  [[nodiscard]] double added_seconds() const {
    return embedding_and_head_critical + gradient_sync_exposed + optimizer;
  }
};

struct LayerWindow {
  double forward = 0;   // one layer's forward makespan
  double backward = 0;  // one layer's backward makespan; 0 when the run is forward only
  // The busiest NIC's busy fraction u over one layer of each pass: the bytes it carried (either direction)
  // / (its bandwidth · η · the pass's makespan), in [0, 1]. While a bucket's NIC steps overlap the layers
  // of that pass the two share the NICs (docs/METRICS.md, "The whole iteration"); 0: the layers put nothing
  // on the NICs and the buckets run as on an idle network.
  double forward_nic_busy = 0;
  double backward_nic_busy = 0;
};

// The NIC sharing between the layers and the gradient buckets for a busy fraction u (u_max of
// LayerWindow): while a bucket's NIC steps overlap a layer, the bucket gets `bucket_share` = max(1 − u, 1/2)
// of the NIC and the layer progresses at `layer_rate` = 1 − max(0, u + bucket_share − 1) of its pace.
struct NicSharing {
  double bucket_share = 1;
  double layer_rate = 1;
};
[[nodiscard]] NicSharing nic_sharing(double nic_busy);

// The busy fraction of the busiest NIC in [t0, t1) from per-link bytes: max over `link_bytes` of
// bytes / (capacity · (t1 − t0)), clamped to [0, 1]; 0 for an empty window.
[[nodiscard]] double nic_busy_fraction(const std::vector<double>& link_bytes, double capacity,
                                       double window_seconds);

// The parts for GPUs holding `tokens_per_rank` tokens each in the linear layout (index = rank; under TP every
// member of a group holds the group's tokens, as the expanded plan's layout does), with the
// layers' makespans `layer` (the windows the collectives overlap with) and `seconds[k]` the duration of
// bucket k. A forward-only run has no backward, no gradient synchronisation and no optimizer step.
// `compute_scale` (index = rank, empty = 1): the iteration's seeded compute multipliers m(r, i) of the
// simulator (docs/SIMULATOR.md, "Jitter and stragglers"), applied to each rank's embedding, head and
// optimizer; the planner never passes them. The NIC sharing of `layer`'s busy fractions applies when the
// profile's `interference` is on; off, the buckets run as on an idle network.
[[nodiscard]] WholeIterationParts whole_iteration_parts(const CostModel& cost,
                                                        const WholeIterationSetup& setup,
                                                        const std::vector<double>& tokens_per_rank,
                                                        LayerWindow layer,
                                                        const std::vector<BucketCollectiveSeconds>& seconds,
                                                        const std::vector<double>& compute_scale = {});

// Memory-bound kernels: HBM bandwidth a streaming kernel reaches on the scenario's GPU (bytes/s).
[[nodiscard]] double streaming_memory_bandwidth(const CostModel& cost);

}  // namespace zb
