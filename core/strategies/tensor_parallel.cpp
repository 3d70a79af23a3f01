#include "core/strategies/tensor_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/cost/pointwise_cost.hpp"

namespace zb {
namespace {

using plan::Op;
using plan::OpKind;

// Member i's part of `total` when it is cut into t near-equal integer parts (the parts sum to `total`).
std::int64_t share(std::int64_t total, int t, int i) {
  return total * (i + 1) / t - total * i / t;
}

// How a GEMM of the layer is split under Megatron TP (the names PlanBuilder and the MoE layer give them).
// The MoE router is not split: each member computes the gate's logits of its sequence-parallel share of
// the rows (Megatron-Core's router is replicated over TP); the shared and routed experts are split as a
// dense FFN is (ETP = TP, docs/MOE.md).
enum class GemmSplit { column, row, rows };
GemmSplit split_of(const Op& gemm) {
  const std::string_view name = gemm.name;
  if (name == "qkv" || name == "mlp_up" || name == "shared_up" || name == "expert_up")
    return GemmSplit::column;
  if (name == "o_proj" || name == "mlp_down" || name == "shared_down" || name == "expert_down")
    return GemmSplit::row;
  if (name == "router") return GemmSplit::rows;
  throw std::logic_error("tensor parallelism does not know how to split GEMM \"" + gemm.name + "\"");
}

class Expander {
 public:
  // `widths[v]`: the TP width of grid rank v; its members are consecutive GPUs after those of v − 1.
  Expander(const plan::Plan& grid, const CostModel& cost, std::vector<int> widths)
      : grid_(grid), cost_(cost), width_(std::move(widths)) {
    first_.resize(width_.size());
    int next = 0;
    for (std::size_t v = 0; v < width_.size(); ++v) {
      first_[v] = next;
      next += width_[v];
      widest_ = std::max(widest_, width_[v]);
    }
    world_ = next;
  }

  plan::Plan run() {
    plan::Plan out;
    out.system = grid_.system;
    out.strategy = grid_.strategy;
    out.world_size = world_;
    out.gpus_per_node = cost_.cluster().gpus_per_node;
    out.micro_batches = grid_.micro_batches;
    out.sequences = grid_.sequences;
    out.info = grid_.info;
    if (std::all_of(width_.begin(), width_.end(), [&](int w) { return w == widest_; }))
      out.info["tensor_parallel"] = widest_;
    else
      out.info["tensor_parallel"] = width_;
    // A grid plan already over TP groups (Hydraulis's replicas planned on the grid of the scenario's TP)
    // keeps them, each grown by its members' own TP groups; otherwise each grid rank's members are one.
    if (grid_.tensor_parallel_groups.empty()) {
      for (int v = 0; v < grid_.world_size; ++v) {
        std::vector<int> members;
        for (int i = 0; i < width(v); ++i) members.push_back(real(v, i));
        out.tensor_parallel_groups.push_back(std::move(members));
      }
    }
    for (const std::vector<int>& inner : grid_.tensor_parallel_groups) {
      std::vector<int> members;
      for (const int v : inner) {
        for (int i = 0; i < width(v); ++i) members.push_back(real(v, i));
      }
      out.tensor_parallel_groups.push_back(std::move(members));
    }
    for (const plan::OomReport& oom : grid_.oom) {
      plan::OomReport o = oom;
      o.rank = real(oom.rank, 0);
      out.oom.push_back(o);
    }
    // Group g becomes one group per member index of its ranks' TP groups (all of one width: a ring between
    // TP groups pairs member i with member i), numbered in order.
    group_base_.assign(grid_.groups.size(), 0);
    for (const plan::Group& g : grid_.groups) {
      const int w = uniform_width(g.ranks, "group " + std::to_string(g.id));
      group_base_[static_cast<std::size_t>(g.id)] = static_cast<int>(out.groups.size());
      for (int i = 0; i < w; ++i) {
        plan::Group m = g;
        m.id = static_cast<int>(out.groups.size());
        for (int& r : m.ranks) r = real(r, i);
        out.groups.push_back(std::move(m));
      }
    }
    const auto layouts = [&](const std::vector<plan::RankLayout>& from, std::vector<plan::RankLayout>& to) {
      to.resize(static_cast<std::size_t>(out.world_size));
      for (const plan::RankLayout& l : from) {
        for (int i = 0; i < width(l.rank); ++i) {
          plan::RankLayout& m = to[static_cast<std::size_t>(real(l.rank, i))];
          m = l;
          m.rank = real(l.rank, i);
        }
      }
    };
    layouts(grid_.attention_layout, out.attention_layout);
    layouts(grid_.linear_layout, out.linear_layout);
    for (const plan::RemapMove& mv : grid_.remap) {
      const int w = uniform_width({mv.src, mv.dst}, "a remap move");
      for (int i = 0; i < w; ++i) out.remap.push_back(moved(mv, i));
    }
    out.ranks.resize(static_cast<std::size_t>(out.world_size));
    for (const plan::RankOps& r : grid_.ranks) {
      for (int i = 0; i < width(r.rank); ++i)
        out.ranks[static_cast<std::size_t>(real(r.rank, i))] = member_ops(r, i);
    }
    return out;
  }

 private:
  [[nodiscard]] int width(int v) const { return width_.at(static_cast<std::size_t>(v)); }
  // Grid rank v's member i: the grid numbers TP groups node-major like GPUs, so group v is GPUs
  // first(v) .. first(v) + width(v) − 1, all on one node.
  [[nodiscard]] int real(int v, int i) const { return first_.at(static_cast<std::size_t>(v)) + i; }

  // The one width of TP groups that exchange data (member i talks to member i); a plan that pairs TP
  // groups of different widths has no such mapping.
  [[nodiscard]] int uniform_width(const std::vector<int>& ranks, const std::string& what) const {
    const int w = width(ranks.front());
    for (const int r : ranks) {
      if (width(r) != w)
        throw std::logic_error("tensor parallelism: " + what + " joins TP groups of widths " +
                               std::to_string(w) + " and " + std::to_string(width(r)));
    }
    return w;
  }

  [[nodiscard]] plan::HeadRange heads_of(const plan::HeadRange& h, int t, int i) const {
    const int begin = h.begin, end = h.end < 0 ? cost_.model().heads : h.end;
    return {begin + (end - begin) * i / t, begin + (end - begin) * (i + 1) / t};
  }

  [[nodiscard]] plan::RemapMove moved(plan::RemapMove mv, int i) const {
    mv.src = real(mv.src, i);
    mv.dst = real(mv.dst, i);
    return mv;
  }

  [[nodiscard]] plan::Route route_of(plan::Route route, std::int64_t bytes, int t, int i) const {
    for (int& p : route.proxies) p = real(p, i);
    for (int& p : route.peer_proxies) p = real(p, i);
    std::int64_t total = 0;
    for (std::int64_t& b : route.part_bytes) total += (b = share(b, t, i));
    // Rounding the parts separately may miss the send's share by a few bytes; the largest part absorbs it.
    if (!route.part_bytes.empty())
      *std::max_element(route.part_bytes.begin(), route.part_bytes.end()) += bytes - total;
    return route;
  }

  // The sequence-parallel collective of one GEMM: the all-gather of its m input rows before a
  // column-parallel GEMM, the reduce-scatter of its m output rows after a row-parallel one. Each member
  // contributes (or ends with) m/t rows of the hidden state.
  [[nodiscard]] Op tp_collective(const Op& gemm, int v, int i, plan::CollectiveKind kind) const {
    Op c;
    c.kind = OpKind::collective;
    c.collective = kind;
    c.name = kind == plan::CollectiveKind::all_gather ? "tp_ag" : "tp_rs";
    c.micro_batch = gemm.micro_batch;
    // Tags are unique per collective across the plan: odd ones for TP's (one per grid rank and GEMM), even
    // ones for the grid's own collectives (one per member, see member_ops).
    c.tag = 2 * (gemm.id * grid_.world_size + v) + 1;
    for (int m = 0; m < width(v); ++m) c.collective_ranks.push_back(real(v, m));
    c.bytes = share(static_cast<std::int64_t>(cost_.hidden_bytes(static_cast<double>(gemm.m))), width(v), i);
    return c;
  }

  [[nodiscard]] plan::RankOps member_ops(const plan::RankOps& grid_rank, int i) const {
    plan::RankOps out;
    const int v = grid_rank.rank;
    const int t = width(v);
    out.rank = real(v, i);
    std::vector<int> id_of(grid_rank.ops.size(), -1);  // grid op id → the member op its dependants wait on
    const auto append = [&](Op op) {
      op.id = static_cast<int>(out.ops.size());
      out.ops.push_back(std::move(op));
      return static_cast<int>(out.ops.size()) - 1;
    };
    for (const Op& g : grid_rank.ops) {
      Op op = g;
      op.deps.clear();
      for (const int d : g.deps) op.deps.push_back(id_of.at(static_cast<std::size_t>(d)));
      if (op.group >= 0) op.group = group_base_.at(static_cast<std::size_t>(g.group)) + i;
      switch (g.kind) {
        case OpKind::gemm: {
          if (split_of(g) == GemmSplit::rows) {
            op.m = share(g.m, t, i);
            break;
          }
          if (split_of(g) == GemmSplit::column) {
            Op gather = tp_collective(g, v, i, plan::CollectiveKind::all_gather);
            gather.deps = op.deps;
            op.deps = {append(std::move(gather))};
            op.n = share(g.n, t, i);
            id_of[static_cast<std::size_t>(g.id)] = append(std::move(op));
          } else {
            op.k = share(g.k, t, i);
            Op scatter = tp_collective(g, v, i, plan::CollectiveKind::reduce_scatter);
            scatter.deps = {append(std::move(op))};
            id_of[static_cast<std::size_t>(g.id)] = append(std::move(scatter));
          }
          continue;
        }
        case OpKind::attention:
          op.heads = heads_of(g.heads, t, i);
          if (g.zigzag_kv_rank >= 0) op.zigzag_kv_rank = real(g.zigzag_kv_rank, i);
          for (plan::AttentionBlock& b : op.blocks) b.heads = heads_of(b.heads, t, i);
          break;
        case OpKind::send:
        case OpKind::recv:
          op.peer = real(g.peer, i);
          op.bytes = share(g.bytes, t, i);
          op.heads = heads_of(g.heads, t, i);
          if (g.kv_owner >= 0) op.kv_owner = real(g.kv_owner, i);
          if (g.kind == OpKind::send) op.route = route_of(g.route, op.bytes, t, i);
          break;
        case OpKind::remap:
          for (plan::RemapMove& mv : op.moves) mv = moved(mv, i);
          op.bytes_out = share(g.bytes_out, t, i);
          op.bytes_in = share(g.bytes_in, t, i);
          break;
        case OpKind::collective:
          for (int& r : op.collective_ranks) r = real(r, i);
          op.tag = 2 * (g.tag * widest_ + i);
          op.bytes = share(g.bytes, t, i);
          if (!g.peer_bytes.empty()) {
            // An MoE exchange: each part is whole hidden rows, member i sending its share of them.
            const double row = cost_.hidden_bytes(1.0);
            op.bytes = 0;
            for (std::int64_t& part : op.peer_bytes) {
              const std::int64_t rows = std::llround(static_cast<double>(part) / row);
              op.bytes += part = std::llround(row * static_cast<double>(share(rows, t, i)));
            }
          }
          break;
      }
      id_of[static_cast<std::size_t>(g.id)] = append(std::move(op));
    }
    return out;
  }

  const plan::Plan& grid_;
  const CostModel& cost_;
  std::vector<int> width_;       // per grid rank
  std::vector<int> first_;       // per grid rank: its member 0
  std::vector<int> group_base_;  // per grid group: the id of its member-0 group
  int widest_ = 1;
  int world_ = 0;
};

}  // namespace

ClusterSpec tensor_parallel_grid(const ClusterSpec& cluster, int t) {
  if (t <= 1) return cluster;
  ClusterSpec grid = cluster;
  grid.gpus_per_node = cluster.gpus_per_node / t;
  grid.gpu.name = fmt::format("TP{} group of {}", t, cluster.gpu.name);
  grid.gpu.peak_flops *= t;
  grid.gpu.memory_bytes *= t;
  // The group streams through all its members' HBM; by name the grid GPU would be unknown to the table.
  grid.gpu.memory_bandwidth = hbm_bandwidth(cluster.gpu) * t;
  grid.nvlink.bandwidth *= t;
  if (grid.pcie_bandwidth) *grid.pcie_bandwidth *= t;
  // A TP group's NICs are the distinct NICs of its GPUs; the grid gives each distinct set one NIC of their
  // combined bandwidth (a800-4nic at t = 2: one NIC per group; dgx-h200 at t = 2: two NICs per group).
  std::map<std::set<int>, int> set_index;
  std::size_t narrowest = static_cast<std::size_t>(cluster.nics_per_node);
  grid.gpu_to_nic.clear();
  for (int g = 0; g < grid.gpus_per_node; ++g) {
    std::set<int> nics;
    for (int i = 0; i < t; ++i) nics.insert(cluster.gpu_to_nic.at(static_cast<std::size_t>(g * t + i)));
    narrowest = std::min(narrowest, nics.size());
    const auto [it, added] = set_index.try_emplace(nics, static_cast<int>(set_index.size()));
    grid.gpu_to_nic.push_back(it->second);
  }
  grid.nics_per_node = static_cast<int>(set_index.size());
  grid.nic.bandwidth *= static_cast<double>(narrowest);
  return grid;
}

plan::Plan expand_tensor_parallel(const plan::Plan& grid, const CostModel& cost, int t) {
  if (t <= 1) return grid;
  return Expander(grid, cost, std::vector<int>(static_cast<std::size_t>(grid.world_size), t)).run();
}

plan::Plan expand_tensor_parallel(const plan::Plan& grid, const CostModel& cost,
                                  const std::vector<int>& widths) {
  return Expander(grid, cost, widths).run();
}

}  // namespace zb
