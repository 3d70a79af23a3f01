#include "core/exec/sim/task_graph.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/common/rng.hpp"

namespace zb::sim {

using lower::CollectiveKind;
using lower::Instr;
using lower::InstrKind;

namespace {
// Keeps the jitter streams apart from the workload's (Rng(seed, iteration)) and the planner error's.
constexpr std::uint64_t kJitterSalt = 0x6A69747465723321ULL;  // "jitter3!"
}  // namespace

std::vector<double> compute_multipliers(const HardwareProfile& profile, std::uint64_t seed, int iteration,
                                        int world_size) {
  const double cv = profile.compute_jitter;
  const double p = profile.straggler_probability;
  if (!(cv > 0) && !(p > 0)) return {};
  // Lognormal exp(μ + σZ) has mean exp(μ + σ²/2) and CV sqrt(exp(σ²) − 1): σ² = ln(1 + c²), μ = −σ²/2.
  const double sigma2 = std::log1p(cv * cv);
  const double sigma = std::sqrt(sigma2);
  std::vector<double> m(static_cast<std::size_t>(std::max(0, world_size)), 1.0);
  for (int r = 0; r < world_size; ++r) {
    // One stream per (iteration, rank), drawn in a fixed order (the normal, then the straggler's uniform)
    // whether or not each part is on, so turning stragglers on leaves every rank's jitter as it was.
    Rng rng(seed ^ kJitterSalt, (static_cast<std::uint64_t>(static_cast<std::uint32_t>(iteration)) << 32) |
                                    static_cast<std::uint32_t>(r));
    const double z = rng.normal();
    const double straggle = rng.uniform();
    double x = cv > 0 ? std::exp(sigma * z - 0.5 * sigma2) : 1.0;
    if (straggle < p) x *= profile.straggler_slowdown;
    m[static_cast<std::size_t>(r)] = x;
  }
  return m;
}

TaskGraph::TaskGraph(const lower::Program& program, const TaskGraphOptions& options)
    : program_(program), options_(options) {
  const auto world = static_cast<std::size_t>(program.world_size);
  instrs_.resize(world);
  for (std::size_t r = 0; r < world; ++r) instrs_[r].resize(program.ranks[r].instrs.size());
  // 1. Tasks: per instruction (a send creates its pair's rendezvous and flow), then per collective.
  for (int r = 0; r < program.world_size; ++r) {
    for (std::size_t i = 0; i < program.ranks[static_cast<std::size_t>(r)].instrs.size(); ++i)
      add_instr_tasks(r, static_cast<int>(i));
  }
  for (std::size_t c = 0; c < program.collectives.size(); ++c) add_collective(static_cast<int>(c));
  // 2. Edges: dependencies, the compute stream's list order, the barrier between passes.
  if (program.backward) barrier_ = add_task(Task{});
  for (int r = 0; r < program.world_size; ++r) {
    const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
    int previous_compute = -1;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Instr& in = list[i];
      const InstrTasks& t = instrs_[static_cast<std::size_t>(r)][i];
      for (const int d : in.deps) {
        const InstrTasks& dep = instrs_[static_cast<std::size_t>(r)][static_cast<std::size_t>(d)];
        if (d != in.stream_from) {
          add_edge(dep.done, t.gate);
          continue;
        }
        // A streamed relay: posted once the first chunk has arrived; chunk c leaves after chunk c arrived.
        add_edge(dep.flows.front(), t.gate);
        for (std::size_t c = 1; c < t.flows.size() && c < dep.flows.size(); ++c)
          add_edge(dep.flows[c], t.flows[c]);
      }
      if (lower::is_compute(in)) {
        if (previous_compute >= 0)
          add_edge(instrs_[static_cast<std::size_t>(r)][static_cast<std::size_t>(previous_compute)].done,
                   t.gate);
        previous_compute = static_cast<int>(i);
      }
      if (barrier_ >= 0) {
        if (in.pass == Pass::fwd)
          add_edge(t.done, barrier_);
        else
          add_edge(barrier_, t.gate);
      }
    }
  }
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

int TaskGraph::add_flow(int src, int dst, double bytes, int message, int send_rank, int send_instr) {
  Task t;
  // Nothing to move, or transfers modelled as free: a join, done as soon as it may start.
  t.kind = bytes > 0 && src != dst && !options_.free_transfers ? TaskKind::flow : TaskKind::join;
  t.rank = src;
  t.dst = dst;
  t.amount = bytes;
  const int id = add_task(t);
  if (t.kind == TaskKind::flow) flows_.push_back(FlowInfo{id, message, send_rank, send_instr});
  return id;
}

void TaskGraph::add_instr_tasks(int rank, int id) {
  const Instr& in = program_.instr(rank, id);
  InstrTasks& t = instrs_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(id)];
  switch (in.kind) {
    case InstrKind::attention:
    case InstrKind::gemm: {
      Task task;
      task.kind = TaskKind::compute;
      task.rank = rank;
      task.amount = options_.compute_scale.empty()
                        ? in.seconds
                        : in.seconds * options_.compute_scale[static_cast<std::size_t>(rank)];
      t.gate = t.done = add_task(task);
      break;
    }
    case InstrKind::send: {
      // The pair's tasks hang off the send; the recv (checked by lower::verify) shares them. A chunked
      // leg is a chain of flows, one per chunk, each leaving once the previous one has arrived.
      const int rendezvous = add_task(Task{});
      const int chunks = std::max(1, in.chunks);
      int previous = rendezvous;
      for (int c = 0; c < chunks; ++c) {
        const std::int64_t bytes = in.bytes * (c + 1) / chunks - in.bytes * c / chunks;
        const int flow = add_flow(rank, in.peer, static_cast<double>(bytes), in.message, rank, id);
        add_edge(previous, flow);
        t.flows.push_back(flow);
        previous = flow;
      }
      t.gate = rendezvous;
      t.done = previous;
      InstrTasks& r = instrs_[static_cast<std::size_t>(in.peer)][static_cast<std::size_t>(in.match)];
      r.gate = rendezvous;
      r.done = previous;
      r.flows = t.flows;
      break;
    }
    case InstrKind::recv:
      break;  // filled in by its send
    case InstrKind::wait:
      t.gate = t.done = add_task(Task{});
      break;
    case InstrKind::collective:
      t.gate = add_task(Task{});
      t.done = add_task(Task{});
      add_edge(t.gate, t.done);  // a member with nothing to move ends when it is posted
      break;
  }
}

void TaskGraph::add_collective(int c) {
  const lower::Collective& col = program_.collectives[static_cast<std::size_t>(c)];
  std::map<int, int> instr_of;  // member rank → its instruction
  for (std::size_t k = 0; k < col.ranks.size(); ++k) instr_of.emplace(col.ranks[k], col.instrs[k]);
  const auto member = [&](int rank) -> InstrTasks& {
    return instrs_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(instr_of.at(rank))];
  };
  if (col.kind == CollectiveKind::all_to_all_v) {
    // Each message moves once its sender and its receiver have posted.
    for (const int m : col.messages) {
      const lower::Message& msg = program_.messages[static_cast<std::size_t>(m)];
      const int flow = add_flow(msg.src, msg.dst, static_cast<double>(msg.bytes), m, -1, -1);
      for (const int end : {msg.src, msg.dst}) {
        InstrTasks& t = member(end);
        add_edge(t.gate, flow);
        add_edge(flow, t.done);
        t.flows.push_back(flow);
      }
    }
    return;
  }
  // Ring collectives: every member posts, then steps of one flow per member to the next.
  const auto p = static_cast<int>(col.ranks.size());
  if (p < 2) return;
  const auto bytes = static_cast<double>(col.bytes);
  int steps = p - 1;
  double step_bytes = bytes;
  if (col.kind == CollectiveKind::all_reduce) {
    steps = 2 * (p - 1);
    step_bytes = bytes / p;
  } else if (col.kind == CollectiveKind::all_to_all) {
    step_bytes = bytes / (p - 1);  // `bytes` is everything a member sends (plan.hpp), one part per peer
  }
  // A head all-to-all's messages name each pair's rows (lower_head_all_to_all.cpp): step s moves exactly
  // those from each member to the member s + 1 places on, so the simulator moves the Program's bytes.
  std::map<std::pair<int, int>, double> pair_bytes;
  if (col.kind == CollectiveKind::all_to_all) {
    for (const int m : col.messages) {
      const lower::Message& msg = program_.messages[static_cast<std::size_t>(m)];
      pair_bytes[{msg.src, msg.dst}] += static_cast<double>(msg.bytes);
    }
  }
  int previous = add_task(Task{});
  for (int k = 0; k < p; ++k) add_edge(member(col.ranks[static_cast<std::size_t>(k)]).gate, previous);
  for (int s = 0; s < steps; ++s) {
    const int joined = add_task(Task{});
    for (int k = 0; k < p; ++k) {
      // Ring steps pass to the next member; all-to-all step s sends to the member s + 1 places on.
      const int shift = col.kind == CollectiveKind::all_to_all ? s + 1 : 1;
      const int src = col.ranks[static_cast<std::size_t>(k)],
                dst = col.ranks[static_cast<std::size_t>((k + shift) % p)];
      const auto exact = pair_bytes.find({src, dst});
      const int flow = add_flow(src, dst,
                                pair_bytes.empty()          ? step_bytes
                                : exact == pair_bytes.end() ? 0.0
                                                            : exact->second,
                                -1, -1, -1);
      add_edge(previous, flow);
      add_edge(flow, joined);
      member(src).flows.push_back(flow);
    }
    previous = joined;
  }
  for (int k = 0; k < p; ++k) add_edge(previous, member(col.ranks[static_cast<std::size_t>(k)]).done);
}

}  // namespace zb::sim
