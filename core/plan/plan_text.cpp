#include <algorithm>
#include <cstdio>
#include <map>

#include "core/plan/plan_format.hpp"

namespace zb::plan {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string to_text(const Plan& plan) {
  std::string out;
  out += "plan for " + plan.system + " (strategy " + plan.strategy + "): " + std::to_string(plan.world_size) +
         " ranks, " + std::to_string(plan.gpus_per_node) + " per node, " +
         std::to_string(plan.sequences.size()) + " sequences, " + std::to_string(plan.micro_batches) +
         " micro-batch(es)\n";
  if (!plan.feasible()) {
    out += "INFEASIBLE (out of memory):\n";
    for (const auto& o : plan.oom) out += "  " + o.str() + "\n";
    return out;
  }
  std::map<Level, std::pair<int, std::int64_t>> by_level;  // groups, tokens
  for (const auto& g : plan.groups) {
    auto& [count, tokens] = by_level[g.level];
    ++count;
    for (int s : g.sequences) tokens += plan.sequences[static_cast<std::size_t>(s)].length;
  }
  out += "groups:\n";
  for (const auto& [level, ct] : by_level) {
    out += "  " + std::string(to_string(level)) + ": " + std::to_string(ct.first) + " group(s), " +
           std::to_string(ct.second) + " tokens\n";
  }
  if (!plan.info.empty()) out += "strategy facts: " + plan.info.dump() + "\n";
  std::size_t ops = 0, sends = 0, routed = 0;
  for (const auto& r : plan.ranks) {
    ops += r.ops.size();
    for (const auto& op : r.ops) {
      if (op.kind == OpKind::send) {
        ++sends;
        if (op.route.kind == RouteKind::routed) ++routed;
      }
    }
  }
  out += "ops: " + std::to_string(ops) + " in all, " + std::to_string(sends) + " sends (" +
         std::to_string(routed) + " routed), " + std::to_string(plan.remap.size()) + " remap moves\n";
  out += "rank  attn tokens  linear tokens  attn GFLOP (fwd)  predicted ms\n";
  for (int r = 0; r < plan.world_size; ++r) {
    const auto& p = r < static_cast<int>(plan.predicted.per_rank.size())
                        ? plan.predicted.per_rank[static_cast<std::size_t>(r)]
                        : RankPrediction{};
    char line[160];
    std::snprintf(line, sizeof line, "%4d  %11lld  %13lld  %16.2f  %12.3f\n", r,
                  static_cast<long long>(plan.attention_layout[static_cast<std::size_t>(r)].tokens()),
                  static_cast<long long>(plan.linear_layout[static_cast<std::size_t>(r)].tokens()),
                  p.attention_flops / 1e9, p.seconds * 1e3);
    out += line;
  }
  out += "predicted iteration: " + fmt("%.3f", plan.predicted.iteration_seconds * 1e3) +
         " ms (planner cost model)\n";
  out += "planner time: " + fmt("%.3f", plan.planner_seconds * 1e3) + " ms\n";
  return out;
}

}  // namespace zb::plan
