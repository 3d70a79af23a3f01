#pragma once
// Run metrics: the figures reports print, computed from a Plan and the Trace an executor returned.
// Every formula is in docs/METRICS.md, section "Run metrics"; the names below follow it.
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/cost/iteration_cost.hpp"
#include "core/exec/trace.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// Where one rank's time goes in one iteration (seconds, all layers, both passes). Inside the layers each
// instant of the rank's timeline counts once, in this order of precedence: compute (attention or linear,
// whichever kernel runs), then remap in flight, then a tensor-parallel collective in flight, then a
// send/recv or other collective in flight (exposed communication), else idle. The whole-iteration parts
// outside the layers follow (docs/METRICS.md, "The whole iteration").
struct TimeBreakdown {
  double attention = 0;
  double linear = 0;
  double remap = 0;  // remap all-to-all in flight, compute stream idle
  double tensor_parallel =
      0;  // TP's sequence-parallel all-gather / reduce-scatter in flight, compute idle, no remap
  double exposed_communication =
      0;            // ring send/recv in flight, compute idle, no remap or TP collective in flight
  double idle = 0;  // nothing of this rank running (waiting on other ranks, or done early)
  double embedding_and_head =
      0;  // this rank's embedding, LM head GEMMs and loss (the slowest rank's wait is idle)
  double gradient_sync_exposed =
      0;                 // gradient reduce-scatter / param all-gather the compute stream waits for
  double optimizer = 0;  // the optimizer step on the rank's parameter shard

  [[nodiscard]] double total() const {
    return attention + linear + remap + tensor_parallel + exposed_communication + idle + embedding_and_head +
           gradient_sync_exposed + optimizer;
  }
};

struct NicMetrics {
  int node = 0;
  int nic = 0;           // local NIC index
  double bandwidth = 0;  // nominal bytes/s per direction
  double tx_bytes = 0;   // whole iteration
  double rx_bytes = 0;
  double tx_utilization = 0;  // bytes / (bandwidth · iteration time)
  double rx_utilization = 0;
  double busy_share = 0;            // max over the two directions of (time with a flow on it / trace time)
  std::vector<double> tx_timeline;  // utilisation per bin of the trace (one layer fwd + bwd)
  std::vector<double> rx_timeline;
  // Measured runs (the trace's links came from NIC counters): `measured` is set, and the expected
  // figures are the bytes the Program's transfers put on this NIC (whole iteration, like tx_bytes);
  // −1 for simulated NICs, whose bytes are the Program's by construction.
  bool measured = false;
  double expected_tx_bytes = -1;
  double expected_rx_bytes = -1;
};

// One GPU's NVLink port (its links to and from the NVSwitch): the layers' intra-node traffic through it,
// routed legs' dispatch and combine and tensor parallelism's collectives included (docs/METRICS.md,
// "NVLink utilisation").
struct NvlinkMetrics {
  int node = 0;
  int gpu = 0;                // local GPU index
  double bandwidth = 0;       // nominal bytes/s per direction
  double tx_bytes = 0;        // whole iteration: L · the layer's bytes out of this GPU over NVLink
  double rx_bytes = 0;        // likewise into it
  double tx_utilization = 0;  // bytes / (bandwidth · layers time), like a NIC's
  double rx_utilization = 0;
};

struct RunMetrics {
  double iteration_seconds = 0;           // layers_seconds + the whole-iteration parts
  double layers_seconds = 0;              // L · (F + B) of the trace
  double embedding_and_head_seconds = 0;  // the slowest rank's, per phase (what the iteration waits for)
  double gradient_sync_seconds = 0;       // every bucket collective, overlapped or not
  double gradient_sync_exposed_seconds = 0;
  double optimizer_seconds = 0;
  double tokens = 0;  // real tokens of the batch
  double tokens_per_second = 0;
  double useful_flops = 0;  // whole iteration, all ranks (docs/METRICS.md)
  double model_tflops_per_gpu = 0;
  double mfu = 0;

  TimeBreakdown critical_rank_breakdown;  // the rank with the least idle time (the one everybody waits for)
  int critical_rank = 0;
  TimeBreakdown mean_breakdown;  // mean over ranks

  double attention_imbalance = 1;  // max/mean of per-rank attention FLOPs
  double token_imbalance = 1;      // max/mean of per-rank tokens in the linear layout

  std::vector<NicMetrics> nics;     // node-major
  double nic_utilization_mean = 0;  // over every NIC and both directions
  double nic_utilization_max = 0;
  double nic_busy_share_mean = 0;
  double nic_busy_share_max = 0;
  int timeline_bins = 0;
  double timeline_bin_seconds = 0;

  // Empty when the executor records no NVLink loads (measured backends): the figures are then unknown, not 0.
  std::vector<NvlinkMetrics> nvlinks;  // node-major, then local GPU
  double nvlink_bytes = 0;             // Σ tx_bytes over GPUs: every byte the layers moved inside a node
  double nvlink_utilization_mean = 0;  // over every GPU and both directions
  double nvlink_utilization_max = 0;
  [[nodiscard]] bool nvlink_recorded() const { return !nvlinks.empty(); }

  std::vector<RingStepStats> ring_steps;

  double predicted_seconds = 0;  // the planner's estimate of the iteration
  double prediction_ratio = 0;   // predicted / simulated; 0 when either is missing
  // Measured runs of the scenario's own model: the simulator's L·(F+B) for the same Program and profile,
  // and its ratio to the measured layers_seconds (> 1: the simulator is pessimistic); 0 otherwise.
  double simulated_layers_seconds = 0;
  double simulation_ratio = 0;

  // An MoE model's layer (docs/METRICS.md, "The MoE layer"; core/metrics/moe_metrics.hpp); 0 when the plan
  // has no routed MoE layer.
  double expert_load_imbalance = 0;   // max/mean rows per expert, the representative layer, whole batch
  double expert_rank_imbalance = 0;   // max/mean rows received per rank (its experts' rows)
  double moe_dispatch_bytes = 0;      // the iteration's forward dispatches: every part, every layer
  double moe_dispatch_nic_bytes = 0;  // the part of them between nodes
  double moe_share = 0;               // critical rank: time inside the MoE layer / layer time
  [[nodiscard]] bool moe_recorded() const { return expert_load_imbalance > 0; }
};

// `timeline_bins` bins over the trace (one layer forward + backward) for the NIC timelines. `parts` are
// the whole-iteration parts of this plan and trace (whole_iteration_parts_of).
[[nodiscard]] RunMetrics compute_run_metrics(const plan::Plan& plan, const Trace& trace,
                                             const CostModel& cost, const Scenario& scenario,
                                             const WholeIterationParts& parts, int timeline_bins = 50);
// The same with the gradient collectives timed by the cost model's formula (formula_bucket_seconds).
[[nodiscard]] RunMetrics compute_run_metrics(const plan::Plan& plan, const Trace& trace,
                                             const CostModel& cost, const Scenario& scenario,
                                             int timeline_bins = 50);

// The whole-iteration parts of `plan` run as `trace` shows, with bucket k's collectives taking `seconds[k]`.
[[nodiscard]] WholeIterationParts whole_iteration_parts_of(
    const plan::Plan& plan, const Trace& trace, const CostModel& cost, const WholeIterationSetup& setup,
    const std::vector<BucketCollectiveSeconds>& seconds);

// Per GPU, the NVLink figures of `trace` (its nvlink_out / nvlink_in loads, paired by node and GPU);
// empty when the trace has none.
[[nodiscard]] std::vector<NvlinkMetrics> nvlink_metrics(const Trace& trace);

// Per-rank breakdown of one iteration (index = rank), the building block of the figures above.
[[nodiscard]] std::vector<TimeBreakdown> rank_breakdowns(const Trace& trace);

}  // namespace zb
