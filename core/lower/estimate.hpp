#pragma once
// The planner's estimate of a Program: its schedule (schedule.hpp) with every leg at its link's nominal
// rate, queueing behind other legs on the links both share. The simulator runs the same instructions with
// max-min bandwidth sharing; the ratio of the two is the cost-model error that reports print.
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/lower/schedule.hpp"

namespace zb::lower {

// Nominal leg times (latency + bytes / (bandwidth · p2p efficiency)):
//   * both ends on one node: NVLink;
//   * across nodes: one whole NIC (min with PCIe where the cluster sets it), divided by the core's
//     oversubscription.
// Links a leg holds, as the simulator's platform routes it: the source GPU's NVLink out-port and the
// destination's in-port on one node; the source's NIC transmit side and the destination's NIC receive
// side across nodes; a routed part's NVLink legs hold only the ends that are the message's own (the
// source's out-port, the destination's in-port), not the proxies'. GPUs that share a NIC (a800-4nic)
// therefore queue on it only when both send at once, where a fixed per-GPU share would charge a ring's
// lone boundary GPU half its NIC.
// Collectives other than all_to_all_v run as rings over their members at the slowest hop's rate:
//   all_gather, reduce_scatter: (P−1) steps of `bytes`; all_reduce: 2(P−1) steps of bytes/P;
//   all_to_all: (P−1) steps of bytes/(P−1) (`bytes` is everything a member sends, one part per peer).
[[nodiscard]] TransferModel nominal_transfers(const Program& program, const CostModel& cost);

struct ProgramEstimate {
  double forward = 0;                       // one layer's forward makespan
  double backward = 0;                      // one layer's backward makespan (0 without a backward pass)
  std::vector<double> rank_forward_finish;  // [rank]: when its last forward instruction ended
};

// Throws zb::Error (runtime) naming the stuck instructions when the program cannot finish.
[[nodiscard]] ProgramEstimate estimate(const Program& program, const TransferModel& model);

}  // namespace zb::lower
