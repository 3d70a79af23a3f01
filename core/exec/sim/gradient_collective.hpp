#pragma once
// The data-parallel gradient collectives (core/cost/iteration_cost.hpp) timed on the SimGrid model of the
// scenario's cluster instead of by formula: the hierarchical ring (NVLink inside the node, then across
// nodes with every GPU on its own NIC) is a chain of identical steps, each a barrier, so one simulated step
// of each level, every GPU of the cluster sending at once, times all of them exactly (docs/SIMULATOR.md,
// "Gradient collectives").
#include <vector>

#include "core/cost/iteration_cost.hpp"

namespace zb::sim {

// One ring step of `bytes` per GPU, simulated: inside the node (each GPU to the next GPU of its data-parallel
// group on the node) and across nodes (each GPU to the same GPU of the next node), every GPU at once.
struct RingStepTimes {
  double intra_node = 0;
  double inter_node = 0;
};
[[nodiscard]] RingStepTimes simulate_ring_steps(const CostModel& cost, const WholeIterationSetup& setup,
                                                double intra_bytes, double inter_bytes);
// The same over group `group` (a routed expert's expert-data-parallel group: setup.expert_dp).
[[nodiscard]] RingStepTimes simulate_ring_steps(const CostModel& cost, const DataParallelShape& group,
                                                double intra_bytes, double inter_bytes);

// Every bucket's collectives of `setup` (index = bucket) over its group, one simulation per distinct
// bucket size and group.
[[nodiscard]] std::vector<BucketCollectiveSeconds> simulate_bucket_seconds(const CostModel& cost,
                                                                           const WholeIterationSetup& setup);

}  // namespace zb::sim
