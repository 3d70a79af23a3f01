#include "core/exec/sim/task_graph.hpp"

#include <map>
#include <algorithm>
#include <tuple>

#include "core/common/error.hpp"
#include "core/strategies/predict.hpp"

namespace zb::sim {

using plan::Op;
using plan::OpKind;

namespace {

double compute_flops(const Op& op, const CostModel& cost, bool backward) {
  if (op.kind == OpKind::attention) {
    return backward ? cost.attention_bwd_flops(op.pairs) : cost.attention_fwd_flops(op.pairs);
  }
  const double forward = 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  return backward ? forward * cost.profile().backward_linear_factor : forward;
}

Error plan_error(int rank, const std::string& what) {
  Location where;
  where.rank = rank;
  return Error(ExitCode::runtime, where, what, "run `zeppelin-bench plan` on the scenario: plan::verify names the fault");
}

}  // namespace

TaskGraph::TaskGraph(const plan::Plan& plan, const CostModel& cost, bool backward)
    : plan_(plan), cost_(cost), world_size_(plan.world_size) {
  build_pass(Pass::fwd, -1);
  if (!backward) return;
  // The backward pass of a layer starts once the forward layer has ended on every rank (docs/SIMULATOR.md).
  barrier_ = add_task(Task{});
  for (const auto& op : ops_) add_edge(op.done, barrier_);
  build_pass(Pass::bwd, barrier_);
}

int TaskGraph::add_task(const Task& task) {
  tasks_.push_back(task);
  successors_.emplace_back();
  return static_cast<int>(tasks_.size()) - 1;
}

void TaskGraph::add_edge(int from, int to) {
  successors_[static_cast<std::size_t>(from)].push_back(to);
  ++tasks_[static_cast<std::size_t>(to)].predecessors;
}

int TaskGraph::add_flow(Pass pass, int src, int dst, double bytes, EventCategory category, int owner, int op) {
  Task t;
  // A flow that moves nothing or stays on its GPU costs nothing: it becomes a join.
  t.kind = bytes > 0 && src != dst ? TaskKind::flow : TaskKind::join;
  t.pass = pass;
  t.rank = src;
  t.dst = dst;
  t.amount = bytes;
  const int id = add_task(t);
  if (t.kind == TaskKind::flow) flows_.push_back(FlowInfo{id, category, owner, op});
  return id;
}

void TaskGraph::build_pass(Pass pass, int after) {
  const bool backward = pass == Pass::bwd;
  const std::size_t first_op = ops_.size();
  std::vector<std::vector<int>> op_index(static_cast<std::size_t>(world_size_));  // [rank][op] → ops_ index
  std::map<std::tuple<int, int, int>, int> transfer_of;                          // (src, dst, tag)

  // 1. Tasks for every op; a send and its recv find their shared transfer by (src, dst, tag).
  for (int rank = 0; rank < world_size_; ++rank) {
    const auto& rank_ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
    for (std::size_t i = 0; i < rank_ops.size(); ++i) {
      const Op& op = rank_ops[i];
      OpTasks ot;
      ot.pass = pass;
      ot.rank = rank;
      ot.op = static_cast<int>(i);
      switch (op.kind) {
        case OpKind::attention:
        case OpKind::gemm: {
          Task t;
          t.kind = TaskKind::compute;
          t.pass = pass;
          t.rank = rank;
          t.order = static_cast<int>(i);
          t.amount = op_seconds(plan_, rank, op, cost_, backward);
          ot.gate = ot.done = add_task(t);
          ot.flops = compute_flops(op, cost_, backward);
          break;
        }
        case OpKind::send:
        case OpKind::recv: {
          const bool is_send = op.kind == OpKind::send;
          const auto key = std::make_tuple(is_send ? rank : op.peer, is_send ? op.peer : rank, op.tag);
          auto [it, inserted] = transfer_of.try_emplace(key, static_cast<int>(transfers_.size()));
          if (inserted) {
            Transfer t;
            t.pass = pass;
            t.src = std::get<0>(key);
            t.dst = std::get<1>(key);
            t.rendezvous = add_task(Task{});
            t.done = add_task(Task{});
            transfers_.push_back(std::move(t));
          }
          Transfer& t = transfers_[static_cast<std::size_t>(it->second)];
          int& slot = is_send ? t.send_op : t.recv_op;
          if (slot >= 0) throw plan_error(rank, "two ops share the transfer tag " + std::to_string(op.tag));
          slot = static_cast<int>(i);
          t.group = op.group;
          t.step = op.step;
          t.micro_batch = op.micro_batch;
          ot.gate = t.rendezvous;
          ot.done = t.done;
          ot.transfer = it->second;
          break;
        }
        case OpKind::remap:
          ot.gate = add_task(Task{});
          ot.done = add_task(Task{});
          add_edge(ot.gate, ot.done);  // a remap with no traffic ends when it is posted
          break;
      }
      op_index[static_cast<std::size_t>(rank)].push_back(static_cast<int>(ops_.size()));
      ops_.push_back(std::move(ot));
    }
  }

  // 2. Dependencies as the plan states them, plus the barrier in front of the backward pass.
  for (std::size_t k = first_op; k < ops_.size(); ++k) {
    const OpTasks& ot = ops_[k];
    const Op& op = plan_.ranks[static_cast<std::size_t>(ot.rank)].ops[static_cast<std::size_t>(ot.op)];
    for (int d : op.deps) {
      if (d < 0 || d >= ot.op) throw plan_error(ot.rank, "op " + std::to_string(ot.op) + " depends on a later op");
      add_edge(ops_[static_cast<std::size_t>(op_index[static_cast<std::size_t>(ot.rank)][static_cast<std::size_t>(d)])].done,
               ot.gate);
    }
    if (after >= 0) add_edge(after, ot.gate);
  }

  // 3. Transfers become flows, in (src, dst, tag) order: std::map iteration is deterministic.
  for (auto& [key, index] : transfer_of) {
    (void)key;
    Transfer& t = transfers_[static_cast<std::size_t>(index)];
    if (t.send_op < 0 || t.recv_op < 0) {
      throw plan_error(t.send_op < 0 ? t.dst : t.src, "a transfer " + std::to_string(t.src) + " → " +
                                                          std::to_string(t.dst) + " has no matching send or recv");
    }
    const Op& send = plan_.ranks[static_cast<std::size_t>(t.src)].ops[static_cast<std::size_t>(t.send_op)];
    lower_transfer(t, send);
  }
  lower_remaps(first_op);
}

void TaskGraph::lower_transfer(Transfer& t, const Op& send) {
  // Backward: the ring carries K,V again and dK,dV along with them (TransformerEngine passes both around
  // the ring in the same direction), so twice the bytes on the same path.
  const double factor = t.pass == Pass::bwd ? 2.0 : 1.0;
  t.bytes = static_cast<double>(send.bytes) * factor;
  const plan::Route& route = send.route;
  if (route.kind == plan::RouteKind::direct || route.proxies.empty()) {
    const int flow = add_flow(t.pass, t.src, t.dst, t.bytes, EventCategory::send, t.src, t.send_op);
    t.flows.push_back(flow);
    add_edge(t.rendezvous, flow);
    add_edge(flow, t.done);
    return;
  }
  // Routed: each part runs a three-stage pipeline of `chunks` pieces: dispatch (src → proxy, NVLink),
  // network (proxy → peer proxy, its NIC), combine (peer proxy → dst, NVLink). A stage sends piece c
  // once it has piece c from the stage before and has finished sending piece c−1.
  const int chunks = std::max(1, route.chunks);
  bool any = false;
  for (std::size_t part = 0; part < route.proxies.size(); ++part) {
    const int proxy = route.proxies[part];
    const int peer_proxy = route.peer_proxies.at(part);
    const double piece = static_cast<double>(route.part_bytes.at(part)) * factor / chunks;
    if (piece <= 0) continue;
    int prev_dispatch = -1, prev_network = -1, prev_combine = -1;
    for (int c = 0; c < chunks; ++c) {
      int ready = t.rendezvous;
      auto stage = [&](int from, int to, EventCategory category, int owner, int& previous) {
        const int flow = add_flow(t.pass, from, to, piece, category, owner, owner == t.src ? t.send_op : -1);
        add_edge(ready, flow);
        if (previous >= 0) add_edge(previous, flow);
        t.flows.push_back(flow);
        previous = flow;
        ready = flow;
      };
      if (proxy != t.src) stage(t.src, proxy, EventCategory::route_dispatch, t.src, prev_dispatch);
      stage(proxy, peer_proxy, EventCategory::route_nic, proxy, prev_network);
      if (peer_proxy != t.dst) stage(peer_proxy, t.dst, EventCategory::route_combine, peer_proxy, prev_combine);
      if (c + 1 == chunks) add_edge(ready, t.done);
    }
    any = true;
  }
  if (!any) add_edge(t.rendezvous, t.done);
}

void TaskGraph::lower_remaps(std::size_t first_op) {
  // The peer's remap op of the same direction and micro-batch receives what this rank sends.
  std::map<std::tuple<int, plan::RemapDirection, int>, int> remap_of;
  for (std::size_t k = first_op; k < ops_.size(); ++k) {
    const Op& op = plan_.ranks[static_cast<std::size_t>(ops_[k].rank)].ops[static_cast<std::size_t>(ops_[k].op)];
    if (op.kind == OpKind::remap) remap_of.try_emplace({ops_[k].rank, op.direction, op.micro_batch}, static_cast<int>(k));
  }
  for (const auto& [key, k] : remap_of) {
    const int rank = std::get<0>(key);
    const Op& op = plan_.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(ops_[static_cast<std::size_t>(k)].op)];
    const bool to_linear = op.direction == plan::RemapDirection::to_linear;
    double out_tokens = 0;
    for (const auto& mv : op.moves) {
      if ((to_linear ? mv.src : mv.dst) == rank) out_tokens += static_cast<double>(mv.range.size());
    }
    const double bytes_per_token = out_tokens > 0 ? static_cast<double>(op.bytes_out) / out_tokens : 0.0;
    // An all-to-all-v sends one buffer per peer: every range this rank sends to one peer travels in one
    // flow (std::map: peers in ascending order, a deterministic flow order).
    std::map<int, double> tokens_to;
    for (const auto& mv : op.moves) {
      const int from = to_linear ? mv.src : mv.dst;
      const int to = to_linear ? mv.dst : mv.src;
      if (from != rank || from == to) continue;  // each move once, from its sender
      tokens_to[to] += static_cast<double>(mv.range.size());
    }
    for (const auto& [to, tokens] : tokens_to) {
      const auto peer = remap_of.find({to, op.direction, op.micro_batch});
      const int flow = add_flow(ops_[static_cast<std::size_t>(k)].pass, rank, to, bytes_per_token * tokens,
                                EventCategory::remap, rank, ops_[static_cast<std::size_t>(k)].op);
      OpTasks& mine = ops_[static_cast<std::size_t>(k)];
      add_edge(mine.gate, flow);
      add_edge(flow, mine.done);
      mine.flows.push_back(flow);
      if (peer != remap_of.end()) {
        OpTasks& theirs = ops_[static_cast<std::size_t>(peer->second)];
        add_edge(theirs.gate, flow);
        add_edge(flow, theirs.done);
        theirs.flows.push_back(flow);
      }
    }
  }
}

}  // namespace zb::sim
