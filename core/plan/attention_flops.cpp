#include "core/plan/attention_flops.hpp"

#include <cstddef>

namespace zb::plan {

std::vector<double> attention_flops_per_rank(const Plan& plan, const CostModel& cost) {
  std::vector<double> out(static_cast<std::size_t>(plan.world_size), 0.0);
  for (const RankOps& r : plan.ranks) {
    for (const Op& op : r.ops) {
      if (op.kind == OpKind::attention)
        out[static_cast<std::size_t>(r.rank)] +=
            cost.attention_fwd_flops(op.pairs) * op.heads.share(cost.model().heads);
    }
  }
  return out;
}

}  // namespace zb::plan
