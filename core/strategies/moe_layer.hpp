#pragma once
// The MoE layer of a plan (issue 34, item 4; docs/MOE.md, "The MoE layer in the Program").
//
// Strategies plan an MoE model as a dense one whose FFN is a token's experts side by side (the cost
// model's balanced routing): that is all a planner can know before the router runs. add_moe_layer turns
// each rank's FFN GEMMs of each micro-batch (mlp_up, mlp_down) into what Megatron-Core's MoE layer runs
// with the all-to-all token dispatcher and grouped expert GEMMs:
//   router       GEMM T × E by h: the gate's logits for the rank's T tokens;
//   shared_up,   the shared experts' GEMMs over the same T tokens (models with shared experts), placed
//   shared_down  before the expert GEMMs so they overlap the dispatch, as Megatron-Core overlaps them;
//   dispatch     all_to_all_v over the rank's expert group: to each member, the rows routed to its experts;
//   expert_up    grouped GEMM R × 2·f_e by h over the R rows the rank's experts received (its own included),
//   expert_down  and R × h by f_e: one grouped call, as Megatron-Core's GroupedMLP makes it;
//   combine      all_to_all_v back: to each member, the rows it dispatched here.
// Whatever waited for mlp_down (the next ops, the remap back) waits for the combine. Expert groups are e
// consecutive ranks (docs/MOE.md, "Expert parallelism"); with e = 1 every rank holds every expert and there
// is no exchange. A rank without tokens in a micro-batch still takes part in its group's exchange.
//
// The structure depends on the layout only; the sizes on a routing. The planner's plan is sized by the
// balanced routing; a run resizes it with the router's realised choices for its iteration
// (route_moe_layer), never seen by the planner.
//
// Under tensor parallelism (ETP = TP, docs/MOE.md) the layer is added to the plan on the TP-group grid,
// whose expansion (tensor_parallel.hpp) gives each member: the router over its sequence-parallel share of
// the group's tokens; its column and row slices of the shared and routed experts between an all-gather and
// a reduce-scatter of the group's rows; and the dispatch and combine between the same members of the expert
// group's TP groups, each part the rows of the member's own tokens. The routing functions below take such
// an expanded plan: a member routes its share of each document slice of its group.
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/workload/expert_loads.hpp"
#include "core/workload/moe_router.hpp"

namespace zb {

// The MoE layer's GEMMs on `model`, n by k (shared_up and shared_down only with shared experts). m is the
// rank's tokens for the router and the shared experts (`m_is_tokens`), and for expert_up and expert_down the
// rows the rank's experts received, which the routing decides.
struct MoeGemmShape {
  const char* name = "";
  std::int64_t n = 0, k = 0;
  bool m_is_tokens = true;
};
[[nodiscard]] std::vector<MoeGemmShape> moe_gemm_shapes(const ModelSpec& model);

// What one MoE layer's router chose, per micro-batch of a plan: ExpertLoads over the plan's ranks (the
// owners of the tokens in the linear layout).
struct MoeRouting {
  std::vector<ExpertLoads> micro_batches;
  int layer = -1;  // the router's layer these loads are; −1 for the planner's balanced routing
};

// The tokens of each (micro-batch, rank) in the plan's linear layout, as the router sees them: a rank's
// pieces of one sequence are one slice of that document (document id = sequence id).
[[nodiscard]] std::vector<TokenLayout> moe_token_layouts(const plan::Plan& plan);

// Every rank's T·k choices spread evenly over the experts (the remainder one each, starting at an expert
// that rotates with the rank): the expectation a planner can form without the router.
[[nodiscard]] MoeRouting balanced_routing(const plan::Plan& plan, const MoeSpec& moe);

// The router's choices in `iteration` for the plan's layout, in the layer the router draws for the
// iteration (MoeRouter::sampled_layer): the representative of the iteration's layers in the one-layer
// Program, an unbiased sample of them (docs/MOE.md, "One layer stands for all").
[[nodiscard]] MoeRouting realised_routing(const plan::Plan& plan, const MoeRouter& router, int iteration);

// Whether the plan has a tensor-parallel group of more than one GPU (its GEMMs split), which the MoE
// layer does not handle yet.
[[nodiscard]] bool splits_gemms(const plan::Plan& plan);

// The plan with its FFN GEMMs made the MoE layer above, sized by `routing`. `plan` must be feasible, have
// no GEMMs split by tensor parallelism (splits_gemms), and hold at most one mlp_up and one mlp_down per
// (rank, micro-batch), on the ranks that hold tokens (std::logic_error otherwise: a strategy bug). The
// prediction is not redone.
[[nodiscard]] plan::Plan add_moe_layer(plan::Plan plan, const CostModel& cost, const MoeRouting& routing);

// Sets the sizes of a plan's MoE ops (router and shared-expert rows, the exchanges' parts, the expert
// GEMMs' rows) from `routing`; a plan without MoE ops is left as it is. The plan's lowered Program is sized
// again with them (lower::resize) when the routing leaves its shape as it is, else dropped (the run then
// lowers the plan again).
void route_moe_layer(plan::Plan& plan, const CostModel& cost, const MoeRouting& routing);

// What predict() does first to a plan of an MoE model (core/strategies/predict.hpp): a feasible plan without
// its MoE layer and without tensor-parallel groups gets it, sized by the balanced routing; any other plan is
// left as it is. So every strategy prices (and chooses among its candidates with) the MoE layer a planner
// can know before the router runs, and the plan is lowered once for its prediction.
void give_moe_layer(plan::Plan& plan, const CostModel& cost);

}  // namespace zb
