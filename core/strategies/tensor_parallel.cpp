#include "core/strategies/tensor_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

#include "core/cost/pointwise_cost.hpp"

namespace zb {
namespace {

using plan::Op;
using plan::OpKind;

// Member i's part of `total` when it is cut into t near-equal integer parts (the parts sum to `total`).
std::int64_t share(std::int64_t total, int t, int i) {
  return total * (i + 1) / t - total * i / t;
}

// How a GEMM of the layer is split under Megatron TP (the names PlanBuilder gives them).
enum class GemmSplit { column, row };
GemmSplit split_of(const Op& gemm) {
  const std::string_view name = gemm.name;
  if (name == "qkv" || name == "mlp_up") return GemmSplit::column;
  if (name == "o_proj" || name == "mlp_down") return GemmSplit::row;
  throw std::logic_error("tensor parallelism does not know how to split GEMM \"" + gemm.name + "\"");
}

class Expander {
 public:
  Expander(const plan::Plan& grid, const CostModel& cost, int t) : grid_(grid), cost_(cost), t_(t) {}

  plan::Plan run() {
    plan::Plan out;
    out.system = grid_.system;
    out.strategy = grid_.strategy;
    out.world_size = grid_.world_size * t_;
    out.gpus_per_node = grid_.gpus_per_node * t_;
    out.micro_batches = grid_.micro_batches;
    out.sequences = grid_.sequences;
    out.info = grid_.info;
    out.info["tensor_parallel"] = t_;
    for (int v = 0; v < grid_.world_size; ++v) {
      std::vector<int> members;
      for (int i = 0; i < t_; ++i) members.push_back(real(v, i));
      out.tensor_parallel_groups.push_back(std::move(members));
    }
    for (const plan::OomReport& oom : grid_.oom) {
      plan::OomReport o = oom;
      o.rank = real(oom.rank, 0);
      out.oom.push_back(o);
    }
    for (const plan::Group& g : grid_.groups) {
      for (int i = 0; i < t_; ++i) {
        plan::Group m = g;
        m.id = g.id * t_ + i;
        for (int& r : m.ranks) r = real(r, i);
        out.groups.push_back(std::move(m));
      }
    }
    const auto layouts = [&](const std::vector<plan::RankLayout>& from, std::vector<plan::RankLayout>& to) {
      to.resize(static_cast<std::size_t>(out.world_size));
      for (const plan::RankLayout& l : from) {
        for (int i = 0; i < t_; ++i) {
          plan::RankLayout& m = to[static_cast<std::size_t>(real(l.rank, i))];
          m = l;
          m.rank = real(l.rank, i);
        }
      }
    };
    layouts(grid_.attention_layout, out.attention_layout);
    layouts(grid_.linear_layout, out.linear_layout);
    for (int i = 0; i < t_; ++i) {
      for (const plan::RemapMove& mv : grid_.remap) out.remap.push_back(moved(mv, i));
    }
    out.ranks.resize(static_cast<std::size_t>(out.world_size));
    for (const plan::RankOps& r : grid_.ranks) {
      for (int i = 0; i < t_; ++i) out.ranks[static_cast<std::size_t>(real(r.rank, i))] = member_ops(r, i);
    }
    return out;
  }

 private:
  // Grid rank v's member i: the grid numbers TP groups node-major like GPUs, so group v is GPUs v·t ..
  // v·t + t − 1, all on one node.
  [[nodiscard]] int real(int v, int i) const { return v * t_ + i; }

  [[nodiscard]] plan::HeadRange heads_of(const plan::HeadRange& h, int i) const {
    const int begin = h.begin, end = h.end < 0 ? cost_.model().heads : h.end;
    return {begin + (end - begin) * i / t_, begin + (end - begin) * (i + 1) / t_};
  }

  [[nodiscard]] plan::RemapMove moved(plan::RemapMove mv, int i) const {
    mv.src = real(mv.src, i);
    mv.dst = real(mv.dst, i);
    return mv;
  }

  [[nodiscard]] plan::Route route_of(plan::Route route, std::int64_t bytes, int i) const {
    for (int& p : route.proxies) p = real(p, i);
    for (int& p : route.peer_proxies) p = real(p, i);
    std::int64_t total = 0;
    for (std::int64_t& b : route.part_bytes) total += (b = share(b, t_, i));
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
    for (int m = 0; m < t_; ++m) c.collective_ranks.push_back(real(v, m));
    c.bytes = share(static_cast<std::int64_t>(cost_.hidden_bytes(static_cast<double>(gemm.m))), t_, i);
    return c;
  }

  [[nodiscard]] plan::RankOps member_ops(const plan::RankOps& grid_rank, int i) const {
    plan::RankOps out;
    const int v = grid_rank.rank;
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
      if (op.group >= 0) op.group = g.group * t_ + i;
      switch (g.kind) {
        case OpKind::gemm: {
          if (split_of(g) == GemmSplit::column) {
            Op gather = tp_collective(g, v, i, plan::CollectiveKind::all_gather);
            gather.deps = op.deps;
            op.deps = {append(std::move(gather))};
            op.n = share(g.n, t_, i);
            id_of[static_cast<std::size_t>(g.id)] = append(std::move(op));
          } else {
            op.k = share(g.k, t_, i);
            Op scatter = tp_collective(g, v, i, plan::CollectiveKind::reduce_scatter);
            scatter.deps = {append(std::move(op))};
            id_of[static_cast<std::size_t>(g.id)] = append(std::move(scatter));
          }
          continue;
        }
        case OpKind::attention:
          op.heads = heads_of(g.heads, i);
          if (g.zigzag_kv_rank >= 0) op.zigzag_kv_rank = real(g.zigzag_kv_rank, i);
          for (plan::AttentionBlock& b : op.blocks) b.heads = heads_of(b.heads, i);
          break;
        case OpKind::send:
        case OpKind::recv:
          op.peer = real(g.peer, i);
          op.bytes = share(g.bytes, t_, i);
          op.heads = heads_of(g.heads, i);
          if (g.kv_owner >= 0) op.kv_owner = real(g.kv_owner, i);
          if (g.kind == OpKind::send) op.route = route_of(g.route, op.bytes, i);
          break;
        case OpKind::remap:
          for (plan::RemapMove& mv : op.moves) mv = moved(mv, i);
          op.bytes_out = share(g.bytes_out, t_, i);
          op.bytes_in = share(g.bytes_in, t_, i);
          break;
        case OpKind::collective:
          for (int& r : op.collective_ranks) r = real(r, i);
          op.tag = 2 * (g.tag * t_ + i);
          op.bytes = share(g.bytes, t_, i);
          break;
      }
      id_of[static_cast<std::size_t>(g.id)] = append(std::move(op));
    }
    return out;
  }

  const plan::Plan& grid_;
  const CostModel& cost_;
  int t_;
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
  return Expander(grid, cost, t).run();
}

}  // namespace zb
