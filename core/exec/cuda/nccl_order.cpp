#include "core/exec/cuda/nccl_order.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/common/error.hpp"

namespace zb::cuda {

using lower::Instr;
using lower::InstrKind;
using lower::Program;

namespace {

// A node of one pass's graph: a compute or wait instruction, a transfer (send + recv) or a collective.
struct Node {
  enum class Kind : std::uint8_t { local, transfer, collective } kind = Kind::local;
  int rank = -1, instr = -1;  // local: the instruction; transfer: the send
  int collective = -1;
  int pending = 0;  // predecessors not yet placed
  std::vector<int> successors;
};

// Ready nodes are taken earliest first: (schedule start, src, dst, key, node) for transfers, (start,
// rank, instr, 0, node) for the rest, so every rank derives the same order.
using Priority = std::tuple<double, int, int, std::uint64_t, int>;
// Transfers of one ring step on one communicator fuse into one NCCL group: (micro-batch, purpose, CP
// group, step, communicator).
using FusionKey = std::tuple<int, int, int, int, int>;

class OrderBuilder {
 public:
  OrderBuilder(const Program& program, const lower::Schedule& schedule) : p_(program), s_(schedule) {
    order_.issue.resize(static_cast<std::size_t>(p_.world_size));
    order_.first_backward_item.assign(static_cast<std::size_t>(p_.world_size), 0);
  }

  GlobalOrder build() {
    place_pass(Pass::fwd);
    order_.first_backward_step = static_cast<int>(order_.steps.size());
    for (int r = 0; r < p_.world_size; ++r)
      order_.first_backward_item[static_cast<std::size_t>(r)] =
          static_cast<int>(order_.issue[static_cast<std::size_t>(r)].size());
    place_pass(Pass::bwd);
    return std::move(order_);
  }

 private:
  double start_of(int rank, int id) const {
    const double t = s_.start.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(id));
    return t < 0 ? std::numeric_limits<double>::infinity() : t;
  }

  void build_nodes(Pass pass) {
    nodes_.clear();
    node_of_.assign(p_.ranks.size(), {});
    for (std::size_t c = 0; c < p_.collectives.size(); ++c) collective_node_[static_cast<int>(c)] = -1;
    for (int r = 0; r < p_.world_size; ++r)
      node_of_[static_cast<std::size_t>(r)].assign(p_.ranks[static_cast<std::size_t>(r)].instrs.size(), -1);
    for (int r = 0; r < p_.world_size; ++r) {
      const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Instr& in = list[i];
        if (in.pass != pass) continue;
        int& slot = node_of_[static_cast<std::size_t>(r)][i];
        if (in.kind == InstrKind::recv) continue;  // joins its send's node below
        if (in.kind == InstrKind::collective) {
          int& shared = collective_node_[in.collective];
          if (shared < 0) {
            shared = static_cast<int>(nodes_.size());
            nodes_.push_back({Node::Kind::collective, r, static_cast<int>(i), in.collective, 0, {}});
          }
          slot = shared;
          continue;
        }
        slot = static_cast<int>(nodes_.size());
        nodes_.push_back({in.kind == InstrKind::send ? Node::Kind::transfer : Node::Kind::local,
                          r,
                          static_cast<int>(i),
                          -1,
                          0,
                          {}});
      }
    }
    for (int r = 0; r < p_.world_size; ++r) {
      const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
      for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i].pass == pass && list[i].kind == InstrKind::recv)
          node_of_[static_cast<std::size_t>(r)][i] =
              node_of_.at(static_cast<std::size_t>(list[i].peer)).at(static_cast<std::size_t>(list[i].match));
    }
    // Edges: deps and the compute stream's chain within the pass.
    for (int r = 0; r < p_.world_size; ++r) {
      const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
      int previous_compute = -1;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Instr& in = list[i];
        if (in.pass != pass) continue;
        const int to = node_of_[static_cast<std::size_t>(r)][i];
        auto edge = [&](int from_instr) {
          const int from = node_of_[static_cast<std::size_t>(r)].at(static_cast<std::size_t>(from_instr));
          if (from < 0 || from == to) return;  // a dep of the other pass is ordered by the barrier
          nodes_[static_cast<std::size_t>(from)].successors.push_back(to);
          ++nodes_[static_cast<std::size_t>(to)].pending;
        };
        for (const int d : in.deps) edge(d);
        if (lower::is_compute(in)) {
          if (previous_compute >= 0) edge(previous_compute);
          previous_compute = static_cast<int>(i);
        }
      }
    }
  }

  Priority priority(int node) const {
    const Node& n = nodes_[static_cast<std::size_t>(node)];
    if (n.kind == Node::Kind::transfer) {
      const Instr& send = p_.instr(n.rank, n.instr);
      const double t = std::max(start_of(n.rank, n.instr), start_of(send.peer, send.match));
      return {t, n.rank, send.peer, send.key, node};
    }
    if (n.kind == Node::Kind::collective) {
      const lower::Collective& c = p_.collectives[static_cast<std::size_t>(n.collective)];
      double t = 0;
      for (std::size_t m = 0; m < c.ranks.size(); ++m) t = std::max(t, start_of(c.ranks[m], c.instrs[m]));
      return {t, -1, -1, static_cast<std::uint64_t>(n.collective), node};
    }
    return {start_of(n.rank, n.instr), n.rank, n.instr, 0, node};
  }

  std::optional<FusionKey> fusion_key(int node) const {
    const Node& n = nodes_[static_cast<std::size_t>(node)];
    if (n.kind != Node::Kind::transfer) return std::nullopt;
    const lower::Message& m = p_.messages[static_cast<std::size_t>(p_.instr(n.rank, n.instr).message)];
    if (m.group < 0 || m.step < 0) return std::nullopt;
    return FusionKey{m.micro_batch, static_cast<int>(m.purpose), m.group, m.step,
                     static_cast<int>(on_rail(p_, n.rank, p_.instr(n.rank, n.instr)))};
  }

  void make_ready(int node) {
    const Priority pr = priority(node);
    ready_.insert(pr);
    if (const auto key = fusion_key(node)) fusable_[*key].insert(pr);
  }

  void take(const Priority& pr) {
    ready_.erase(pr);
    if (const auto key = fusion_key(std::get<4>(pr))) {
      auto it = fusable_.find(*key);
      it->second.erase(pr);
      if (it->second.empty()) fusable_.erase(it);
    }
  }

  void place_pass(Pass pass) {
    build_nodes(pass);
    ready_.clear();
    fusable_.clear();
    for (std::size_t n = 0; n < nodes_.size(); ++n)
      if (nodes_[n].pending == 0) make_ready(static_cast<int>(n));
    std::size_t placed = 0;
    while (!ready_.empty()) {
      const Priority first = *ready_.begin();
      std::vector<int> group;
      if (const auto key = fusion_key(std::get<4>(first))) {
        const std::set<Priority> same = fusable_[*key];
        for (const Priority& pr : same) group.push_back(std::get<4>(pr));
        for (const Priority& pr : same) take(pr);
      } else {
        group.push_back(std::get<4>(first));
        take(first);
      }
      emit(pass, group);
      placed += group.size();
      for (const int n : group)
        for (const int s : nodes_[static_cast<std::size_t>(n)].successors)
          if (--nodes_[static_cast<std::size_t>(s)].pending == 0) make_ready(s);
    }
    if (placed != nodes_.size()) {
      for (const Node& n : nodes_) {
        if (n.pending == 0) continue;
        throw Error(ExitCode::runtime, Location{},
                    "the NCCL order cannot place " + lower::describe(p_, n.rank, n.instr) +
                        ": its dependencies form a cycle",
                    "lower::verify should have refused this program; this is a bug in the lowering");
      }
    }
  }

  // Appends the nodes placed together: compute and wait nodes to their rank, transfers as one step.
  void emit(Pass pass, const std::vector<int>& group) {
    const Node& head = nodes_[static_cast<std::size_t>(group.front())];
    if (head.kind == Node::Kind::local) {
      const Instr& in = p_.instr(head.rank, head.instr);
      if (lower::is_compute(in))
        order_.issue[static_cast<std::size_t>(head.rank)].push_back(
            {true, head.instr, -1, {}, Communicator::world});
      return;
    }
    CommStep step;
    step.pass = pass;
    const int index = static_cast<int>(order_.steps.size());
    std::map<int, std::vector<NcclCall>> calls;  // per rank, in the step's order
    if (head.kind == Node::Kind::collective) {
      step.collective = head.collective;
      const lower::Collective& c = p_.collectives[static_cast<std::size_t>(head.collective)];
      for (std::size_t m = 0; m < c.ranks.size(); ++m)
        calls[c.ranks[m]].push_back({CallKind::collective, c.instrs[m], -1, head.collective});
    } else {
      for (const int n : group)
        step.sends.emplace_back(nodes_[static_cast<std::size_t>(n)].rank,
                                nodes_[static_cast<std::size_t>(n)].instr);
      std::sort(step.sends.begin(), step.sends.end(), [&](const auto& a, const auto& b) {
        const Instr& x = p_.instr(a.first, a.second);
        const Instr& y = p_.instr(b.first, b.second);
        return std::tie(a.first, x.peer, x.key) < std::tie(b.first, y.peer, y.key);
      });
      for (const auto& [src, id] : step.sends) {
        const Instr& send = p_.instr(src, id);
        calls[src].push_back({CallKind::send, id, send.peer, -1});
        calls[send.peer].push_back({CallKind::recv, send.match, src, -1});
      }
      const auto& [first_src, first_send] = step.sends.front();  // fusion made them one communicator's
      if (on_rail(p_, first_src, p_.instr(first_src, first_send))) step.communicator = Communicator::rail;
    }
    for (auto& [rank, list] : calls) {
      step.ranks.push_back(rank);
      order_.issue[static_cast<std::size_t>(rank)].push_back(
          {false, -1, index, std::move(list), step.communicator});
    }
    order_.steps.push_back(std::move(step));
  }

  const Program& p_;
  const lower::Schedule& s_;
  GlobalOrder order_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> node_of_;
  std::map<int, int> collective_node_;
  std::set<Priority> ready_;
  std::map<FusionKey, std::set<Priority>> fusable_;
};

}  // namespace

GlobalOrder derive_order(const Program& program, const lower::Schedule& schedule) {
  return OrderBuilder(program, schedule).build();
}

GlobalOrder derive_order(const Program& program) {
  return derive_order(program, lower::schedule(program, lower::free_transfers()));
}

bool on_rail(const Program& program, int src, const Instr& send) {
  const int g = program.gpus_per_node;
  return send.leg == lower::LegRole::nic && g > 0 && src % g == send.peer % g && src / g != send.peer / g;
}

int rank_in(const Program& program, Communicator communicator, int rank) {
  return communicator == Communicator::rail ? rank / program.gpus_per_node : rank;
}

std::vector<int> resolved_deps(const Program& program, int rank, int id) {
  std::vector<int> out, stack(program.instr(rank, id).deps.begin(), program.instr(rank, id).deps.end());
  std::set<int> seen;
  while (!stack.empty()) {
    const int d = stack.back();
    stack.pop_back();
    if (!seen.insert(d).second) continue;
    const Instr& in = program.instr(rank, d);
    if (in.kind == InstrKind::wait)
      stack.insert(stack.end(), in.deps.begin(), in.deps.end());
    else
      out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zb::cuda
