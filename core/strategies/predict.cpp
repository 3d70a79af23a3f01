#include "core/strategies/predict.hpp"

#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"

namespace zb {

plan::Prediction predict(const plan::Plan& plan, const CostModel& cost, Passes passes) {
  plan::Prediction p;
  p.per_rank.resize(static_cast<std::size_t>(plan.world_size));
  for (const auto& r : plan.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention) p.per_rank[static_cast<std::size_t>(r.rank)].attention_flops += cost.attention_fwd_flops(op.pairs) * op.heads.share(cost.model().heads);
    }
  }
  for (const auto& l : plan.linear_layout) p.per_rank[static_cast<std::size_t>(l.rank)].tokens = l.tokens();
  if (!plan.feasible()) return p;
  const lower::Program program = lower::lower(plan, cost, {.backward = passes == Passes::fwd_bwd});
  const lower::ProgramEstimate e = lower::estimate(program, lower::nominal_transfers(program, cost));
  for (std::size_t r = 0; r < e.rank_forward_finish.size(); ++r) p.per_rank[r].seconds = e.rank_forward_finish[r];
  p.iteration_seconds = (e.forward + e.backward) * cost.model().layers;
  return p;
}

}  // namespace zb
