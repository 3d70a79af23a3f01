#pragma once
// Tensor parallelism under every strategy (scenario "parallelism": {"tensor": t}): Megatron TP with
// sequence parallelism, t consecutive GPUs of a node per TP group.
//
// Strategies never see TP. They plan on the TP-group grid: a cluster whose "GPUs" are the TP groups, each
// with t times a GPU's peak, memory, NVLink bandwidth and PCIe, and the bandwidth of the NICs its GPUs
// use. Under TP that grid is exact for what strategies decide: a GEMM split t ways by columns (or rows)
// keeps its m rows, hence its efficiency, and takes 1/t of the time; attention over 1/t of the heads keeps
// its query tiles; weights, gradients and activations (sequence parallelism) are divided by t per GPU.
// What the grid omits, TP's own all-gathers and reduce-scatters, the expansion below adds to the plan, so
// the simulator runs them on NVLink and the prediction includes them.
//
// The expansion turns a grid plan into the plan of the real GPUs: member i of every TP group runs each op
// of its group for heads [i·H/t, (i+1)·H/t) and 1/t of the bytes, with peers, K/V owners, proxies and
// remap ends mapped to member i of their groups (Megatron forms CP and DP groups from GPUs of one TP
// rank), and around the layer's GEMMs the sequence-parallel collectives: an all-gather of the hidden rows
// before each column-parallel GEMM (qkv, mlp_up) and a reduce-scatter after each row-parallel one (o_proj,
// mlp_down). docs/STRATEGIES.md, "Tensor parallelism", gives the semantics and sources.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/strategies/registration.hpp"

namespace zb {

// The cluster of TP groups that strategies plan on (t = 1: the cluster itself).
[[nodiscard]] ClusterSpec tensor_parallel_grid(const ClusterSpec& cluster, int t);

// The real-GPU plan of `grid`, a plan made on tensor_parallel_grid(cost.cluster(), t). `cost` is the real
// cluster's cost model (it sizes the collectives). An infeasible plan keeps its OOM reports, each naming
// the first GPU of the TP group that ran out.
[[nodiscard]] plan::Plan expand_tensor_parallel(const plan::Plan& grid, const CostModel& cost, int t);
// The same with a width per grid rank (model replicas of different TP widths, as Hydraulis runs them):
// grid rank v's members are the widths[v] GPUs after those of v − 1, each TP group inside one node.
// Groups, ring hops and remap moves may only join grid ranks of one width (std::logic_error otherwise).
[[nodiscard]] plan::Plan expand_tensor_parallel(const plan::Plan& grid, const CostModel& cost,
                                                const std::vector<int>& widths);

// The strategy `factory` makes, planning on the grid of scenario.parallelism.tensor and expanding each
// plan to the real GPUs, with the prediction redone on the expanded plan (TP's collectives included).
// `system` has its options completed and checked against the grid's world size.
[[nodiscard]] std::unique_ptr<Strategy> make_tensor_parallel_strategy(StrategyFactory factory,
                                                                      const SystemSpec& system,
                                                                      const Scenario& scenario,
                                                                      const CostModel& cost);

// What one GPU can hold of its TP group's micro-batch, in tokens (the grid's capacity per "GPU").
[[nodiscard]] std::int64_t tensor_parallel_token_capacity(const CostModel& cost, int t);

}  // namespace zb
