#pragma once
// Zeppelin's attention engine for one micro-batch (docs/STRATEGIES.md § zeppelin, step 6): the rings of
// different degrees and the local sequences run side by side, and local work fills the time a ring step
// waits for its K/V.
//
// Every executor runs a rank's compute in the order of its op list (one compute stream, as on a CUDA
// stream), so the order is decided here, once, in the plan: per rank the rings come in the partition's
// order (inter-node, then intra-node) and, after each ring step, the engine estimates how long the next
// step would wait for its K/V (step t's K/V arrives about t transfers after the ring starts: transfers
// are chained and never wait for compute) and puts local sequences whose varlen call fits that wait there,
// as a call of their own (the longest that fit first). What no wait holds runs in one call after the
// rings. The backward pass mirrors the order (core/lower/lower_backward.cpp), so the same local work fills
// the backward ring's waits.
#include <map>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/strategies/head_parallel.hpp"
#include "core/strategies/plan_builder.hpp"

namespace zb::zeppelin {

struct EngineOptions {
  bool routing = true;  // an inter-node step moves its K/V over the node's NIC aggregate (else one NIC)
};

// Emits the attention of `groups` (ids of one micro-batch's groups, rings first, local groups of one rank
// each) after `ready[rank]` (−1 = nothing). A group id that `heads` holds runs head-parallel
// (head_parallel.hpp; `heads` keyed by the id listed in `groups`), in its place in the order. Returns each
// rank's attention op ids (for a head-parallel group, what its output GEMMs wait for).
[[nodiscard]] std::vector<std::vector<int>> emit_attention(
    PlanBuilder& b, const CostModel& cost, const EngineOptions& options, const std::vector<int>& groups,
    const std::vector<int>& ready, const PlanBuilder::RouteFn& route,
    const std::map<int, HeadParallelGroup>& heads = {});

}  // namespace zb::zeppelin
