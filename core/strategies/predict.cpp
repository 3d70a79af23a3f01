#include "core/strategies/predict.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/cost/iteration_cost.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/plan/attention_flops.hpp"
#include "core/strategies/moe_layer.hpp"

namespace zb {
namespace {

// The busiest NIC's busy fraction over each pass of the Program at its estimated makespans: the bytes
// every leg, remap message and collective ring step between nodes puts on the sender's NIC (tx) and the
// receiver's (rx), as the simulator routes them, over the NIC's rate (docs/METRICS.md, "The whole
// iteration"). None when the Program is not on the cost model's cluster.
void add_nic_busy(const lower::Program& program, const CostModel& cost, LayerWindow& window) {
  const ClusterSpec& cluster = cost.cluster();
  if (program.world_size != cluster.world_size() || cluster.nics_per_node <= 0) return;
  const auto links = static_cast<std::size_t>(cluster.nodes * cluster.nics_per_node);
  std::vector<double> tx[2] = {std::vector<double>(links, 0.0), std::vector<double>(links, 0.0)};
  std::vector<double> rx[2] = {std::vector<double>(links, 0.0), std::vector<double>(links, 0.0)};
  const auto carry = [&](Pass pass, int src, int dst, double bytes) {
    if (bytes <= 0 || cluster.node_of(src) == cluster.node_of(dst)) return;
    const int p = pass == Pass::fwd ? 0 : 1;
    tx[p][static_cast<std::size_t>(cluster.global_nic_of(src))] += bytes;
    rx[p][static_cast<std::size_t>(cluster.global_nic_of(dst))] += bytes;
  };
  for (const lower::RankProgram& r : program.ranks) {
    for (const lower::Instr& in : r.instrs) {
      if (in.kind == lower::InstrKind::send) carry(in.pass, r.rank, in.peer, static_cast<double>(in.bytes));
    }
  }
  for (const lower::Collective& col : program.collectives) {
    const auto members = static_cast<int>(col.ranks.size());
    if (col.kind == lower::CollectiveKind::all_to_all_v ||
        (col.kind == lower::CollectiveKind::all_to_all && !col.messages.empty())) {
      for (const int m : col.messages) {
        const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
        carry(col.pass, msg.src, msg.dst, static_cast<double>(msg.bytes));
      }
      continue;
    }
    if (members < 2) continue;
    const auto bytes = static_cast<double>(col.bytes);
    for (int k = 0; k < members; ++k) {
      const int src = col.ranks[static_cast<std::size_t>(k)];
      if (col.kind == lower::CollectiveKind::all_to_all) {
        for (int s = 1; s < members; ++s)
          carry(col.pass, src, col.ranks[static_cast<std::size_t>((k + s) % members)], bytes / (members - 1));
        continue;
      }
      const double moved = col.kind == lower::CollectiveKind::all_reduce
                               ? 2.0 * (members - 1) * bytes / members
                               : (members - 1) * bytes;
      carry(col.pass, src, col.ranks[static_cast<std::size_t>((k + 1) % members)], moved);
    }
  }
  const double capacity = cluster.nic.bandwidth * cost.profile().nic_efficiency();
  for (int p = 0; p < 2; ++p) tx[p].insert(tx[p].end(), rx[p].begin(), rx[p].end());
  window.forward_nic_busy = nic_busy_fraction(tx[0], capacity, window.forward);
  window.backward_nic_busy = nic_busy_fraction(tx[1], capacity, window.backward);
}

// The parts outside the layers (embedding, LM head and loss, exposed gradient synchronisation, optimizer)
// as the run metrics charge them, with the gradient collectives by the cost model's formula.
// A plan expanded to tensor parallelism lists its TP groups (tensor_parallel.cpp); a grid plan has none.
// Replicas of different TP widths (Hydraulis) are charged as the run metrics charge them without a
// scenario TP: data parallelism over every GPU with whole gradients (docs/STRATEGIES.md "hydraulis").
WholeIterationParts outside_layers(const plan::Plan& plan, const CostModel& cost, const LayerWindow& window) {
  int tensor =
      plan.tensor_parallel_groups.empty() ? 1 : static_cast<int>(plan.tensor_parallel_groups.front().size());
  for (const std::vector<int>& group : plan.tensor_parallel_groups) {
    if (static_cast<int>(group.size()) != tensor) tensor = 1;
  }
  const WholeIterationSetup setup = whole_iteration_setup(cost, tensor);
  const std::vector<double> tokens = plan::whole_iteration_tokens_per_rank(plan, setup.tensor);
  return whole_iteration_parts(cost, setup, tokens, window, formula_buckets_seconds(cost, setup));
}

}  // namespace

double predicted_floor(const plan::Plan& plan, const CostModel& cost, Passes passes) {
  if (!plan.feasible()) return 0;
  const bool backward = passes == Passes::fwd_bwd;
  double forward_most = 0, backward_most = 0;
  for (const plan::RankOps& rank : plan.ranks) {
    double forward = 0, back = 0;
    for (const plan::Op& op : rank.ops) {
      forward += lower::compute_seconds(op, cost, Pass::fwd);
      if (backward) back += lower::compute_seconds(op, cost, Pass::bwd);
    }
    forward_most = std::max(forward_most, forward);
    backward_most = std::max(backward_most, back);
  }
  const WholeIterationParts parts = outside_layers(plan, cost, LayerWindow{forward_most, backward_most});
  return (forward_most + backward_most) * cost.model().layers + parts.embedding_and_head_critical +
         parts.optimizer;
}

void predict(plan::Plan& plan, const CostModel& cost, Passes passes) {
  plan.lowered.reset();
  give_moe_layer(plan, cost);
  plan::Prediction& p = plan.predicted;
  p = plan::Prediction{};
  p.per_rank.resize(static_cast<std::size_t>(plan.world_size));
  const std::vector<double> attention = plan::attention_flops_per_rank(plan, cost);
  for (std::size_t r = 0; r < attention.size(); ++r) p.per_rank[r].attention_flops = attention[r];
  for (const auto& l : plan.linear_layout) p.per_rank[static_cast<std::size_t>(l.rank)].tokens = l.tokens();
  if (!plan.feasible()) return;
  // Without rows: the estimate and the simulator time bytes; an executor that moves rows lowers it again.
  auto lowered = std::make_shared<lower::Program>(
      lower::lower(plan, cost, {.backward = passes == Passes::fwd_bwd, .rows = false}));
  const lower::Program& program = *lowered;
  const lower::ProgramEstimate e = lower::estimate(program, lower::nominal_transfers(program, cost));
  for (std::size_t r = 0; r < e.rank_forward_finish.size(); ++r)
    p.per_rank[r].seconds = e.rank_forward_finish[r];
  // The buckets share the NICs with the layers' traffic as the run metrics charge it, the layers' NIC
  // bytes from the Program at the estimate's makespans.
  LayerWindow window{e.forward, e.backward};
  add_nic_busy(program, cost, window);
  const WholeIterationParts parts = outside_layers(plan, cost, window);
  p.iteration_seconds = (e.forward + e.backward) * cost.model().layers + parts.added_seconds();
  if (cost.planner_error().relative <= 0) plan.lowered = std::move(lowered);
}

}  // namespace zb
