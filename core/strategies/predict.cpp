#include "core/strategies/predict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zb {

using plan::Op;
using plan::OpKind;

double op_seconds(const plan::Plan& plan, int rank, const Op& op, const CostModel& cost, bool backward) {
  const auto& prof = cost.profile();
  const int g = plan.gpus_per_node;
  switch (op.kind) {
    case OpKind::attention: {
      const double flops = backward ? cost.attention_bwd_flops(op.pairs) : cost.attention_fwd_flops(op.pairs);
      return cost.attention_time(flops, op.q_tokens) + (op.calls - 1) * prof.attention_call_overhead;
    }
    case OpKind::gemm: {
      const double t = cost.gemm_time(static_cast<double>(op.m), static_cast<double>(op.n), static_cast<double>(op.k));
      return backward ? t * prof.backward_linear_factor : t;
    }
    case OpKind::send:
    case OpKind::recv: {
      const double bytes = static_cast<double>(op.bytes) * (backward ? 2.0 : 1.0);
      const int src = op.kind == OpKind::send ? rank : op.peer;
      const int dst = op.kind == OpKind::send ? op.peer : rank;
      if (src / g == dst / g) return cost.transfer_time(bytes, cost.nvlink());
      // A recv does not know the route; both ends use the send's route through the matching below.
      return cost.transfer_time(bytes, op.route.kind == plan::RouteKind::routed ? cost.routed_internode() : cost.nic_per_gpu());
    }
    case OpKind::remap: {
      // Bytes split between NVLink and NIC in proportion to the tokens of same-node and cross-node moves.
      double intra_tokens = 0, inter_tokens = 0;
      for (const auto& m : op.moves) (m.src / g == m.dst / g ? intra_tokens : inter_tokens) += static_cast<double>(m.range.size());
      const double tokens = std::max(1.0, intra_tokens + inter_tokens);
      // Backward moves the gradients of the same rows: the same bytes.
      const double bytes = static_cast<double>(op.bytes_out + op.bytes_in);
      // Sends and receives use the two directions of the links, so each direction carries half.
      return cost.transfer_time(bytes * intra_tokens / tokens / 2, cost.nvlink()) +
             cost.transfer_time(bytes * inter_tokens / tokens / 2, cost.nic_per_gpu());
    }
  }
  return 0;
}

LayerEstimate estimate_layer(const plan::Plan& plan, const CostModel& cost, bool backward) {
  const auto n = static_cast<std::size_t>(plan.world_size);
  std::vector<std::vector<double>> finish(n), start(n);
  std::vector<std::size_t> next(n, 0);
  std::vector<double> stream_free(n, 0.0);
  // Tags are unique in a plan and dense, so a send's start and duration are indexed by tag; a NaN start
  // means "not yet issued".
  int max_tag = -1;
  for (const auto& r : plan.ranks) {
    for (const auto& op : r.ops) max_tag = std::max(max_tag, op.tag);
  }
  std::vector<double> send_start(static_cast<std::size_t>(max_tag + 1), std::numeric_limits<double>::quiet_NaN());
  std::vector<double> send_time(static_cast<std::size_t>(max_tag + 1), 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    finish[r].assign(plan.ranks[r].ops.size(), 0.0);
    start[r].assign(plan.ranks[r].ops.size(), 0.0);
  }
  // In-order issue per rank, event-driven: a rank that reaches a recv whose send is not issued yet parks
  // on that tag and is resumed when the send is issued, so every op is visited once.
  std::vector<int> waiting_on_tag(static_cast<std::size_t>(max_tag + 1), -1);
  std::vector<std::size_t> runnable(n);
  for (std::size_t r = 0; r < n; ++r) runnable[r] = n - 1 - r;  // pop_back order: rank 0 first
  while (!runnable.empty()) {
    const std::size_t r = runnable.back();
    runnable.pop_back();
    const auto& ops = plan.ranks[r].ops;
    while (next[r] < ops.size()) {
      const Op& op = ops[next[r]];
      double ready = 0;
      for (int d : op.deps) ready = std::max(ready, finish[r][static_cast<std::size_t>(d)]);
      const auto tag = static_cast<std::size_t>(std::max(op.tag, 0));
      if (op.kind == OpKind::recv && std::isnan(send_start[tag])) {
        waiting_on_tag[tag] = static_cast<int>(r);  // resumed when the sender issues this tag
        break;
      }
      double s = ready, f = ready;
      if (op.kind == OpKind::recv) {
        s = std::max(ready, send_start[tag]);
        f = s + send_time[tag];
      } else {
        const double dur = op_seconds(plan, static_cast<int>(r), op, cost, backward);
        if (op.kind == OpKind::attention || op.kind == OpKind::gemm) {
          s = std::max(ready, stream_free[r]);
          stream_free[r] = s + dur;
        } else if (op.kind == OpKind::send) {
          send_start[tag] = s;
          send_time[tag] = dur;
          if (waiting_on_tag[tag] >= 0) {
            runnable.push_back(static_cast<std::size_t>(waiting_on_tag[tag]));
            waiting_on_tag[tag] = -1;
          }
        }
        f = s + dur;
      }
      start[r][next[r]] = s;
      finish[r][next[r]] = f;
      ++next[r];
    }
  }
  LayerEstimate e;
  e.rank_finish.resize(n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    for (double f : finish[r]) e.rank_finish[r] = std::max(e.rank_finish[r], f);
    e.makespan = std::max(e.makespan, e.rank_finish[r]);
  }
  return e;
}

plan::Prediction predict(const plan::Plan& plan, const CostModel& cost, Passes passes) {
  plan::Prediction p;
  p.per_rank.resize(static_cast<std::size_t>(plan.world_size));
  for (const auto& r : plan.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind == OpKind::attention) p.per_rank[static_cast<std::size_t>(r.rank)].attention_flops += cost.attention_fwd_flops(op.pairs);
    }
  }
  for (const auto& l : plan.linear_layout) p.per_rank[static_cast<std::size_t>(l.rank)].tokens = l.tokens();
  if (!plan.feasible()) return p;
  const LayerEstimate fwd = estimate_layer(plan, cost, false);
  for (std::size_t r = 0; r < fwd.rank_finish.size(); ++r) p.per_rank[r].seconds = fwd.rank_finish[r];
  double layer = fwd.makespan;
  if (passes == Passes::fwd_bwd) layer += estimate_layer(plan, cost, true).makespan;
  p.iteration_seconds = layer * cost.model().layers;
  return p;
}

}  // namespace zb
