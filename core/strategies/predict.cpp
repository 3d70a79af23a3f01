#include "core/strategies/predict.hpp"

#include "core/cost/iteration_cost.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"

namespace zb {

plan::Prediction predict(const plan::Plan& plan, const CostModel& cost, Passes passes) {
  plan::Prediction p;
  p.per_rank.resize(static_cast<std::size_t>(plan.world_size));
  for (const auto& r : plan.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention)
        p.per_rank[static_cast<std::size_t>(r.rank)].attention_flops +=
            cost.attention_fwd_flops(op.pairs) * op.heads.share(cost.model().heads);
    }
  }
  for (const auto& l : plan.linear_layout) p.per_rank[static_cast<std::size_t>(l.rank)].tokens = l.tokens();
  if (!plan.feasible()) return p;
  const lower::Program program = lower::lower(plan, cost, {.backward = passes == Passes::fwd_bwd});
  const lower::ProgramEstimate e = lower::estimate(program, lower::nominal_transfers(program, cost));
  for (std::size_t r = 0; r < e.rank_forward_finish.size(); ++r)
    p.per_rank[r].seconds = e.rank_forward_finish[r];
  // The parts outside the layers (embedding, LM head and loss, exposed gradient synchronisation, optimizer)
  // as the run metrics charge them, with the gradient collectives by the cost model's formula.
  // A plan expanded to tensor parallelism lists its TP groups (tensor_parallel.cpp); a grid plan has none.
  // Replicas of different TP widths (Hydraulis) are charged as the run metrics charge them without a
  // scenario TP: data parallelism over every GPU with whole gradients (docs/STRATEGIES.md "hydraulis").
  int tensor =
      plan.tensor_parallel_groups.empty() ? 1 : static_cast<int>(plan.tensor_parallel_groups.front().size());
  for (const std::vector<int>& group : plan.tensor_parallel_groups) {
    if (static_cast<int>(group.size()) != tensor) tensor = 1;
  }
  const WholeIterationSetup setup = whole_iteration_setup(cost, tensor);
  const std::vector<double> tokens = plan::whole_iteration_tokens_per_rank(plan, setup.tensor);
  std::vector<BucketCollectiveSeconds> buckets;
  for (const GradientBucket& b : setup.buckets)
    buckets.push_back(formula_bucket_seconds(cost, setup, b.params * setup.bytes_per_gradient));
  const WholeIterationParts parts =
      whole_iteration_parts(cost, setup, tokens, {e.forward, e.backward}, buckets);
  p.iteration_seconds = (e.forward + e.backward) * cost.model().layers + parts.added_seconds();
  return p;
}

}  // namespace zb
