#include "core/metrics/moe_metrics.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace zb {

bool is_moe_instruction(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kNames{
      "router", "shared_up", "shared_down", "dispatch", "expert_up", "expert_down", "combine"};
  const std::string_view first = name.substr(0, name.find(' '));
  return std::find(kNames.begin(), kNames.end(), first) != kNames.end();
}

void fill_moe_metrics(RunMetrics& m, const plan::Plan& plan, const Trace& trace, int layers) {
  const auto info = plan.info.find("moe_layer");
  if (info == plan.info.end() || !info->contains("expert_load_imbalance")) return;
  m.expert_load_imbalance = info->at("expert_load_imbalance").get<double>();
  m.expert_rank_imbalance = info->at("rank_load_imbalance").get<double>();

  // Every forward dispatch part; the combine and both backward exchanges move the same bytes again.
  const int gpn = std::max(1, plan.gpus_per_node);
  for (const plan::RankOps& r : plan.ranks) {
    for (const plan::Op& op : r.ops) {
      if (op.kind != plan::OpKind::collective || op.name != "dispatch") continue;
      for (std::size_t j = 0; j < op.peer_bytes.size(); ++j) {
        const auto bytes = static_cast<double>(op.peer_bytes[j]) * layers;
        m.moe_dispatch_bytes += bytes;
        if (op.collective_ranks[j] / gpn != r.rank / gpn) m.moe_dispatch_nic_bytes += bytes;
      }
    }
  }

  // The critical rank's time inside the MoE layer: the union of its MoE instructions' spans (a shared
  // expert's GEMM overlapping the dispatch counts once), over its layers' time.
  std::vector<std::pair<double, double>> spans;
  for (const TraceEvent& e : trace.events)
    if (e.rank == m.critical_rank && e.track != Track::nic && is_moe_instruction(e.name))
      spans.emplace_back(e.start, e.end);
  std::sort(spans.begin(), spans.end());
  double covered = 0, reach = -1;
  for (const auto& [start, end] : spans) {
    const double from = std::max(start, reach);
    if (end > from) covered += end - from;
    reach = std::max(reach, end);
  }
  if (trace.trace_seconds() > 0) m.moe_share = covered / trace.trace_seconds();
}

}  // namespace zb
