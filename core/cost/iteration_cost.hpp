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
// (the GPUs of one tensor-parallel index; t groups run side by side).
struct DataParallelShape {
  int members_per_node = 1;
  int nodes = 1;
  [[nodiscard]] int size() const { return members_per_node * nodes; }
};

// One gradient bucket: `params` parameters of one GPU, complete (and its collective launchable) once the
// backward item `ready_after` has finished. Items in backward order: 0 the LM head with its loss, 1..L the
// layers from the last one to the first, L + 1 the input embedding.
struct GradientBucket {
  double params = 0;
  int ready_after = 0;
};

struct WholeIterationSetup {
  int tensor = 1;
  int layers = 0;
  DataParallelShape dp;
  GradientSync sync = GradientSync::zero1;
  double bucket_params = 0;       // Megatron's default bucket size for this data-parallel world
  double params_per_gpu = 0;      // (L·P + 2·V·h) / t
  double optimizer_shard = 0;     // parameters the optimizer steps on one GPU
  double bytes_per_gradient = 2;  // β: gradients are reduced in the model dtype (grad_reduce_in_fp32 off)
  std::vector<GradientBucket> buckets;  // in backward order
};

// The setup on the cost model's cluster with tensor-parallel degree `tensor`: every GPU holds 1/t of a model
// replica, and the data-parallel world (every strategy's DP × CP ranks) is the N/t GPUs of each tensor index.
[[nodiscard]] WholeIterationSetup whole_iteration_setup(const CostModel& cost, int tensor);

// Duration of one bucket's collectives over the data-parallel group.
struct BucketCollectiveSeconds {
  double reduce_scatter = 0;  // zero1: in the backward; all_reduce: the all-reduce itself
  double all_gather = 0;      // zero1: in the next forward; all_reduce: 0
};

// The hierarchical ring the cost model charges (and the simulator runs): a ring over the GPUs of the node
// (NVLink), then a ring over the nodes (every member on its own NIC), each of size−1 steps of bytes/size.
// `bytes` is one GPU's bucket. The simulator's figure for the same steps: core/exec/sim/gradient_collective.
[[nodiscard]] BucketCollectiveSeconds formula_bucket_seconds(const CostModel& cost,
                                                             const WholeIterationSetup& setup, double bytes);
// One ring step of `bytes` per member inside a node and across nodes (the cost model's transfer times:
// NVLink, and the NIC share of the most-shared NIC since every member sends at once).
[[nodiscard]] double intra_node_step_seconds(const CostModel& cost, double bytes);
[[nodiscard]] double inter_node_step_seconds(const CostModel& cost, double bytes);

// What the whole-iteration parts add, for the critical rank and per rank (seconds, one iteration).
struct WholeIterationParts {
  std::vector<double> embedding_and_head;  // per rank: embedding fwd/bwd, LM head GEMMs, loss
  double embedding_and_head_critical = 0;  // the slowest rank's (what the iteration waits for)
  double gradient_sync_total = 0;          // sum of every bucket collective (reduce-scatter + all-gather)
  double gradient_sync_exposed = 0;        // what the compute stream waited for them
  double optimizer = 0;
  double head_flops = 0;  // LM head GEMM FLOPs of the iteration, all ranks, fwd + bwd
  [[nodiscard]] double added_seconds() const {
    return embedding_and_head_critical + gradient_sync_exposed + optimizer;
  }
};

struct LayerWindow {
  double forward = 0;   // one layer's forward makespan
  double backward = 0;  // one layer's backward makespan; 0 when the run is forward only
};

// The parts for GPUs holding `tokens_per_rank` tokens each in the linear layout (index = rank; under TP every
// member of a group holds the group's tokens, as the expanded plan's layout does), with the
// layers' makespans `layer` (the windows the collectives overlap with) and `seconds[k]` the duration of
// bucket k. A forward-only run has no backward, no gradient synchronisation and no optimizer step.
[[nodiscard]] WholeIterationParts whole_iteration_parts(const CostModel& cost,
                                                        const WholeIterationSetup& setup,
                                                        const std::vector<double>& tokens_per_rank,
                                                        LayerWindow layer,
                                                        const std::vector<BucketCollectiveSeconds>& seconds);

// Memory-bound kernels: HBM bandwidth a streaming kernel reaches on the scenario's GPU (bytes/s).
[[nodiscard]] double streaming_memory_bandwidth(const CostModel& cost);

}  // namespace zb
