#include "core/strategies/moe_layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/lower/resize.hpp"

namespace zb {
namespace {

using plan::CollectiveKind;
using plan::Op;
using plan::OpKind;

// Where a rank sits under tensor parallelism (core/strategies/tensor_parallel.hpp): the grid rank it is a
// member of (its TP group's index) and its index among that group's members. A plan without TP groups is
// its own grid: every rank alone.
struct TpSeats {
  std::vector<int> grid, member, width;   // per rank
  std::vector<std::vector<int>> members;  // per grid rank: its ranks, member 0 first

  explicit TpSeats(const plan::Plan& plan) {
    const auto world = static_cast<std::size_t>(plan.world_size);
    grid.assign(world, -1);
    member.assign(world, 0);
    width.assign(world, 1);
    if (plan.tensor_parallel_groups.empty()) {
      for (int r = 0; r < plan.world_size; ++r) members.push_back({r});
    } else {
      members = plan.tensor_parallel_groups;
    }
    for (std::size_t v = 0; v < members.size(); ++v) {
      for (std::size_t i = 0; i < members[v].size(); ++i) {
        const int r = members[v][i];
        if (r < 0 || r >= plan.world_size || grid[static_cast<std::size_t>(r)] >= 0)
          throw std::logic_error("MoE layer: the plan's tensor-parallel groups do not cover each rank once");
        grid[static_cast<std::size_t>(r)] = static_cast<int>(v);
        member[static_cast<std::size_t>(r)] = static_cast<int>(i);
        width[static_cast<std::size_t>(r)] = static_cast<int>(members[v].size());
      }
    }
    if (std::find(grid.begin(), grid.end(), -1) != grid.end())
      throw std::logic_error("MoE layer: the plan's tensor-parallel groups do not cover each rank once");
  }
  [[nodiscard]] int grid_world() const { return static_cast<int>(members.size()); }
};

// Member i's part of `total` cut into t near-equal parts, as tensor_parallel.cpp cuts a grid op's sizes.
std::int64_t share(std::int64_t total, int t, int i) {
  return total * (i + 1) / t - total * i / t;
}

// Where the experts are: expert groups of e consecutive grid ranks, grid rank v holding experts
// [(v mod e)·E/e, (v mod e + 1)·E/e), each of its TP members a column or row slice of them (ETP = TP).
struct ExpertPlacement {
  int degree = 1;
  int per_rank = 0;  // E / e

  [[nodiscard]] int group_start(int v) const { return v / degree * degree; }
  [[nodiscard]] int first_expert(int v) const { return v % degree * per_rank; }
  // Choices of rank `from`'s tokens for the experts grid rank `to_grid` holds (loads over the plan's ranks).
  [[nodiscard]] std::int64_t sent(const ExpertLoads& loads, int from, int to_grid) const {
    std::int64_t n = 0;
    for (int x = first_expert(to_grid); x < first_expert(to_grid) + per_rank; ++x)
      n += loads.routed_of(from, x);
    return n;
  }
};

ExpertPlacement placement_of(const CostModel& cost, int grid_world) {
  const int experts = cost.model().moe.experts;
  const int e = cost.expert_degree();
  if (experts <= 0 || e < 1 || experts % e != 0 || grid_world % e != 0) {
    throw std::logic_error("MoE layer: expert degree " + std::to_string(e) + " does not divide the " +
                           std::to_string(experts) + " experts and the " + std::to_string(grid_world) +
                           " ranks (TP groups)");
  }
  return {e, experts / e};
}

// Loads over the plan's ranks summed into their grid ranks: what each TP group routed, which its members'
// expert GEMMs run together after the TP all-gather.
ExpertLoads folded(const ExpertLoads& loads, const TpSeats& seats) {
  if (seats.grid_world() == loads.ranks) return loads;
  ExpertLoads out(seats.grid_world(), loads.experts);
  for (int r = 0; r < loads.ranks; ++r)
    for (int x = 0; x < loads.experts; ++x)
      out.routed[static_cast<std::size_t>(seats.grid[static_cast<std::size_t>(r)]) *
                     static_cast<std::size_t>(loads.experts) +
                 static_cast<std::size_t>(x)] += loads.routed_of(r, x);
  return out;
}

// Under TP, the sequence-parallel collectives around the expert GEMMs (tensor_parallel.cpp: an all-gather
// before the column-parallel expert_up, a reduce-scatter after the row-parallel expert_down) carry the
// rows the routing sends to the group, sized as the expansion sizes them.
void resize_expert_tp_collectives(std::vector<Op>& ops, const CostModel& cost, int t, int i) {
  const auto part = [&](std::int64_t rows) {
    return share(static_cast<std::int64_t>(cost.hidden_bytes(static_cast<double>(rows))), t, i);
  };
  for (Op& op : ops) {
    if (op.deps.size() != 1) continue;
    Op& before = ops[static_cast<std::size_t>(op.deps.front())];
    if (op.kind == OpKind::gemm && op.name == "expert_up" && before.kind == OpKind::collective &&
        before.collective == CollectiveKind::all_gather)
      before.bytes = part(op.m);
    if (op.kind == OpKind::collective && op.collective == CollectiveKind::reduce_scatter &&
        before.kind == OpKind::gemm && before.name == "expert_down")
      op.bytes = part(before.m);
  }
}

// [micro-batch][rank] → tokens in the linear layout.
std::vector<std::vector<std::int64_t>> linear_tokens(const plan::Plan& plan) {
  std::vector<std::vector<std::int64_t>> tokens(static_cast<std::size_t>(std::max(plan.micro_batches, 1)),
                                                std::vector<std::int64_t>(plan.world_size, 0));
  for (const plan::RankLayout& layout : plan.linear_layout)
    for (const plan::Shard& s : layout.shards)
      tokens[static_cast<std::size_t>(plan.sequences[static_cast<std::size_t>(s.seq)].micro_batch)]
            [static_cast<std::size_t>(layout.rank)] += s.size();
  return tokens;
}

ExpertLoads summed(const std::vector<ExpertLoads>& per_micro_batch, int ranks, int experts) {
  ExpertLoads total(ranks, experts);
  for (const ExpertLoads& l : per_micro_batch)
    for (std::size_t i = 0; i < total.routed.size(); ++i) total.routed[i] += l.routed[i];
  return total;
}

bool is_mlp(const Op& op, const char* name) {
  return op.kind == OpKind::gemm && op.name == name;
}

Op moe_gemm(const ModelSpec& model, std::string_view name, int micro_batch, std::vector<int> deps) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = std::string(name);
  op.micro_batch = micro_batch;
  for (const MoeGemmShape& s : moe_gemm_shapes(model)) {
    if (name != s.name) continue;
    op.n = s.n;
    op.k = s.k;
  }
  op.deps = std::move(deps);
  return op;
}

Op exchange(const char* name, int micro_batch, int tag, std::vector<int> members, std::vector<int> deps) {
  Op op;
  op.kind = OpKind::collective;
  op.collective = CollectiveKind::all_to_all_v;
  op.name = name;
  op.micro_batch = micro_batch;
  op.tag = tag;
  op.peer_bytes.assign(members.size(), 0);
  op.collective_ranks = std::move(members);
  op.deps = std::move(deps);
  return op;
}

// Rebuilds one rank's op list with its MoE blocks in place of its FFN GEMMs.
class RankRewrite {
 public:
  RankRewrite(const CostModel& cost, const ExpertPlacement& where, int rank,
              const std::vector<std::vector<int>>& tags)
      : model_(cost.model()), where_(where), rank_(rank), tags_(tags) {}

  std::vector<Op> run(const std::vector<Op>& ops, const std::vector<bool>& exchange_without_tokens) {
    std::vector<int> new_id(ops.size(), -1);
    std::map<int, int> block_end;  // micro-batch → the op that ends its MoE block
    std::size_t next_empty = 0;    // the next micro-batch whose empty-rank block is still to place
    const auto place_empty_blocks = [&](std::size_t before) {
      for (; next_empty < std::min(before, exchange_without_tokens.size()); ++next_empty)
        if (exchange_without_tokens[next_empty]) add_block(static_cast<int>(next_empty), {}, false);
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      place_empty_blocks(static_cast<std::size_t>(op.micro_batch));
      std::vector<int> deps;
      for (const int d : op.deps) deps.push_back(new_id[static_cast<std::size_t>(d)]);
      if (is_mlp(op, "mlp_up")) {
        if (block_end.contains(op.micro_batch)) fail(op, "a second mlp_up in its micro-batch");
        block_end[op.micro_batch] = add_block(op.micro_batch, std::move(deps), true);
        new_id[i] = block_end[op.micro_batch];
      } else if (is_mlp(op, "mlp_down")) {
        const auto end = block_end.find(op.micro_batch);
        if (end == block_end.end() || op.deps.size() != 1 ||
            !is_mlp(ops[static_cast<std::size_t>(op.deps[0])], "mlp_up"))
          fail(op, "an mlp_down that does not follow its micro-batch's mlp_up alone");
        new_id[i] = end->second;
      } else {
        Op copy = op;
        copy.deps = std::move(deps);
        new_id[i] = append(std::move(copy));
      }
    }
    place_empty_blocks(exchange_without_tokens.size());
    return std::move(out_);
  }

 private:
  int append(Op op) {
    op.id = static_cast<int>(out_.size());
    out_.push_back(std::move(op));
    return out_.back().id;
  }

  // One micro-batch's MoE block; `tokens` false for a rank that only serves its experts. Returns the op
  // its consumers wait for.
  int add_block(int mb, std::vector<int> deps, bool tokens) {
    const bool exchanged = where_.degree > 1;
    int last = -1;
    if (tokens) {
      last = append(moe_gemm(model_, "router", mb, std::move(deps)));
      deps = {last};
      if (model_.moe.shared_experts > 0) {
        const int up = append(moe_gemm(model_, "shared_up", mb, {last}));
        append(moe_gemm(model_, "shared_down", mb, {up}));
      }
    }
    std::vector<int> members;
    for (int j = where_.group_start(rank_); j < where_.group_start(rank_) + where_.degree; ++j)
      members.push_back(j);
    const int group = rank_ / where_.degree;
    if (exchanged) {
      last = append(exchange("dispatch", mb,
                             tags_[static_cast<std::size_t>(mb)][static_cast<std::size_t>(2 * group)],
                             members, std::move(deps)));
      deps = {last};
    }
    last = append(moe_gemm(model_, "expert_up", mb, std::move(deps)));
    last = append(moe_gemm(model_, "expert_down", mb, {last}));
    if (exchanged) {
      last = append(exchange("combine", mb,
                             tags_[static_cast<std::size_t>(mb)][static_cast<std::size_t>(2 * group + 1)],
                             members, {last}));
    }
    return last;
  }

  [[noreturn]] void fail(const Op& op, const std::string& what) const {
    throw std::logic_error("MoE layer: rank " + std::to_string(rank_) + " op " + std::to_string(op.id) +
                           " is " + what);
  }

  const ModelSpec& model_;
  const ExpertPlacement& where_;
  int rank_;
  const std::vector<std::vector<int>>& tags_;  // [micro-batch][2·group + (0 dispatch | 1 combine)]
  std::vector<Op> out_;
};

}  // namespace

bool splits_gemms(const plan::Plan& plan) {
  return std::any_of(plan.tensor_parallel_groups.begin(), plan.tensor_parallel_groups.end(),
                     [](const std::vector<int>& g) { return g.size() > 1; });
}

std::vector<MoeGemmShape> moe_gemm_shapes(const ModelSpec& model) {
  const std::int64_t h = model.hidden, f = model.moe.expert_ffn_hidden;
  const std::int64_t shared = static_cast<std::int64_t>(model.moe.shared_experts) * f;
  std::vector<MoeGemmShape> shapes{{"router", model.moe.experts, h, true}};
  if (shared > 0) {
    shapes.push_back({"shared_up", 2 * shared, h, true});  // fused gate + up of the shared experts
    shapes.push_back({"shared_down", h, shared, true});
  }
  shapes.push_back({"expert_up", 2 * f, h, false});  // fused gate + up, per routed row
  shapes.push_back({"expert_down", h, f, false});
  return shapes;
}

std::vector<TokenLayout> moe_token_layouts(const plan::Plan& plan) {
  const TpSeats seats(plan);
  std::vector<TokenLayout> layouts(static_cast<std::size_t>(std::max(plan.micro_batches, 1)),
                                   TokenLayout(static_cast<std::size_t>(plan.world_size)));
  // A rank's pieces of one document are one slice (a zigzag rank holds two chunks of each): the router
  // draws per slice, so this keeps its work to one draw per (rank, document). slice_of[sequence] is its
  // slice in the list of the rank that last met it (holder).
  std::vector<std::size_t> slice_of(plan.sequences.size(), 0);
  std::vector<int> holder(plan.sequences.size(), -1);
  for (const plan::RankLayout& layout : plan.linear_layout) {
    for (const plan::Shard& s : layout.shards) {
      if (s.size() <= 0) continue;
      const auto q = static_cast<std::size_t>(s.seq);
      const plan::Sequence& seq = plan.sequences[q];
      std::vector<DocumentSlice>& slices =
          layouts[static_cast<std::size_t>(seq.micro_batch)][static_cast<std::size_t>(layout.rank)];
      if (holder[q] != layout.rank) {
        holder[q] = layout.rank;
        slice_of[q] = slices.size();
        slices.push_back({seq.id, 0});
      }
      slices[slice_of[q]].tokens += s.size();
    }
    // Sequence parallelism: each member of a TP group holds, and routes, its share of every document
    // slice of the group (the group's members all list the group's tokens in the linear layout).
    const auto r = static_cast<std::size_t>(layout.rank);
    if (seats.width[r] == 1) continue;
    for (TokenLayout& mb : layouts)
      for (DocumentSlice& slice : mb[r]) slice.tokens = share(slice.tokens, seats.width[r], seats.member[r]);
  }
  return layouts;
}

MoeRouting balanced_routing(const plan::Plan& plan, const MoeSpec& moe) {
  MoeRouting routing;
  for (const TokenLayout& layout : moe_token_layouts(plan)) {
    ExpertLoads loads(plan.world_size, moe.experts);
    for (int r = 0; r < plan.world_size; ++r) {
      std::int64_t tokens = 0;
      for (const DocumentSlice& slice : layout[static_cast<std::size_t>(r)]) tokens += slice.tokens;
      const std::int64_t choices = tokens * moe.top_k;
      const std::int64_t each = choices / moe.experts, extra = choices % moe.experts;
      for (int x = 0; x < moe.experts; ++x) {
        // The remainder starts at an expert that moves with the rank, so no expert gets every rank's extra.
        const bool one_more = (x - r % moe.experts + moe.experts) % moe.experts < extra;
        loads.routed[static_cast<std::size_t>(r) * static_cast<std::size_t>(moe.experts) +
                     static_cast<std::size_t>(x)] = each + (one_more ? 1 : 0);
      }
    }
    routing.micro_batches.push_back(std::move(loads));
  }
  return routing;
}

MoeRouting realised_routing(const plan::Plan& plan, const MoeRouter& router, int iteration) {
  MoeRouting r;
  r.layer = router.sampled_layer(iteration);
  for (const TokenLayout& layout : moe_token_layouts(plan))
    r.micro_batches.push_back(router.route(iteration, r.layer, layout));
  return r;
}

plan::Plan add_moe_layer(plan::Plan dense, const CostModel& cost, const MoeRouting& routing) {
  if (!dense.feasible() || splits_gemms(dense))
    throw std::logic_error("MoE layer: only a feasible plan without tensor-parallel groups takes one");
  const ExpertPlacement where = placement_of(cost, dense.world_size);
  const auto tokens = linear_tokens(dense);
  int next_tag = 0;
  for (const plan::RankOps& r : dense.ranks)
    for (const Op& op : r.ops) next_tag = std::max(next_tag, op.tag + 1);
  // Tags of each (micro-batch, group) exchange; a group exchanges when any member holds tokens.
  const int groups = dense.world_size / where.degree;
  std::vector<std::vector<int>> tags(tokens.size(),
                                     std::vector<int>(2 * static_cast<std::size_t>(groups), -1));
  std::vector<std::vector<bool>> active(tokens.size(),
                                        std::vector<bool>(static_cast<std::size_t>(groups), false));
  for (std::size_t mb = 0; mb < tokens.size(); ++mb) {
    for (int r = 0; r < dense.world_size; ++r)
      if (tokens[mb][static_cast<std::size_t>(r)] > 0)
        active[mb][static_cast<std::size_t>(r / where.degree)] = true;
    for (int g = 0; g < groups; ++g) {
      tags[mb][static_cast<std::size_t>(2 * g)] = next_tag++;
      tags[mb][static_cast<std::size_t>(2 * g + 1)] = next_tag++;
    }
  }
  plan::Plan out = std::move(dense);  // rewritten in place: a large plan is not held twice
  out.lowered.reset();
  for (plan::RankOps& r : out.ranks) {
    std::vector<bool> has_ffn(tokens.size(), false);
    for (const Op& op : r.ops)
      if (is_mlp(op, "mlp_up")) has_ffn[static_cast<std::size_t>(op.micro_batch)] = true;
    // A rank without an FFN of its own in a micro-batch still serves its experts when its group exchanges.
    std::vector<bool> serves_only(tokens.size(), false);
    for (std::size_t mb = 0; mb < tokens.size(); ++mb) {
      if (tokens[mb][static_cast<std::size_t>(r.rank)] > 0 && !has_ffn[mb])
        throw std::logic_error("MoE layer: rank " + std::to_string(r.rank) + " holds tokens of micro-batch " +
                               std::to_string(mb) + " but runs no mlp_up for them");
      serves_only[mb] =
          where.degree > 1 && !has_ffn[mb] && active[mb][static_cast<std::size_t>(r.rank / where.degree)];
    }
    r.ops = RankRewrite(cost, where, r.rank, tags).run(r.ops, serves_only);
  }
  out.info["moe_layer"] = {{"expert_degree", where.degree}, {"experts_per_rank", where.per_rank}};
  route_moe_layer(out, cost, routing);
  return out;
}

void give_moe_layer(plan::Plan& plan, const CostModel& cost) {
  if (!cost.model().has_experts() || !plan.feasible() || plan.info.contains("moe_layer") ||
      splits_gemms(plan))
    return;
  const MoeRouting balanced = balanced_routing(plan, cost.model().moe);
  plan = add_moe_layer(std::move(plan), cost, balanced);
}

void route_moe_layer(plan::Plan& plan, const CostModel& cost, const MoeRouting& routing) {
  if (!plan.info.contains("moe_layer")) return;
  // The Program the prediction lowered is sized again below, when the routing leaves its shape as it is.
  std::shared_ptr<lower::Program> program = std::move(plan.lowered);
  const TpSeats seats(plan);
  const ExpertPlacement where = placement_of(cost, seats.grid_world());
  const auto tokens = linear_tokens(plan);  // a TP member's: its group's, all gathered
  if (routing.micro_batches.size() != tokens.size())
    throw std::logic_error("MoE layer: a routing of " + std::to_string(routing.micro_batches.size()) +
                           " micro-batches for a plan of " + std::to_string(tokens.size()));
  const double row_bytes = cost.hidden_bytes(1.0);
  const auto bytes_of = [row_bytes](std::int64_t rows) {
    return static_cast<std::int64_t>(std::llround(row_bytes * static_cast<double>(rows)));
  };
  for (const ExpertLoads& loads : routing.micro_batches) {
    if (loads.ranks != plan.world_size || loads.experts != cost.model().moe.experts)
      throw std::logic_error("MoE layer: a routing over " + std::to_string(loads.ranks) + " ranks and " +
                             std::to_string(loads.experts) + " experts for a plan of " +
                             std::to_string(plan.world_size) + " ranks and " +
                             std::to_string(cost.model().moe.experts) + " experts");
  }
  // Per micro-batch: the rows each grid rank's experts receive from its whole expert group (its own
  // tokens' included; under TP every member's share, all gathered), and under TP the tokens each rank
  // routes (without TP, its tokens in the linear layout).
  const bool members = seats.grid_world() != plan.world_size;
  std::vector<std::vector<std::int64_t>> received, routed;
  for (const ExpertLoads& loads : routing.micro_batches) {
    received.push_back(tokens_received_per_rank(folded(loads, seats), where.degree));
    if (!members) continue;
    std::vector<std::int64_t> own(static_cast<std::size_t>(plan.world_size), 0);
    for (int r = 0; r < plan.world_size; ++r)
      for (int x = 0; x < loads.experts; ++x)
        own[static_cast<std::size_t>(r)] +=
            loads.routed_of(r, x) + (loads.dropped.empty() ? 0 : loads.dropped_of(r, x));
    routed.push_back(std::move(own));
  }
  const std::vector<MoeGemmShape> shapes = moe_gemm_shapes(cost.model());
  const int k = std::max(1, cost.model().moe.top_k);
  for (plan::RankOps& r : plan.ranks) {
    const auto rank = static_cast<std::size_t>(r.rank);
    const int t = seats.width[rank], i = seats.member[rank];
    for (Op& op : r.ops) {
      const auto mb = static_cast<std::size_t>(op.micro_batch);
      const ExpertLoads& loads = routing.micro_batches[mb];
      const auto shape = op.kind != OpKind::gemm
                             ? shapes.end()
                             : std::find_if(shapes.begin(), shapes.end(),
                                            [&](const MoeGemmShape& g) { return op.name == g.name; });
      if (shape != shapes.end()) {
        // The router runs on the rank's own (sequence-parallel) tokens; the shared and routed experts, split
        // by columns and rows over a TP group, on the group's gathered rows.
        // (routed / k: every token the rank routes makes k choices, kept or dropped).
        if (op.name == "router")
          op.m = t == 1 ? tokens[mb][rank] : routed[mb][rank] / k;
        else
          op.m = shape->m_is_tokens ? tokens[mb][rank]
                                    : received[mb][static_cast<std::size_t>(seats.grid[rank])];
      } else if (op.kind == OpKind::collective && (op.name == "dispatch" || op.name == "combine")) {
        op.bytes = 0;
        for (std::size_t j = 0; j < op.collective_ranks.size(); ++j) {
          const int peer = op.collective_ranks[j];
          const int peer_grid = seats.grid[static_cast<std::size_t>(peer)];
          const std::int64_t rows = peer == r.rank          ? 0
                                    : op.name == "dispatch" ? where.sent(loads, r.rank, peer_grid)
                                                            : where.sent(loads, peer, seats.grid[rank]);
          op.peer_bytes[j] = bytes_of(rows);
          op.bytes += op.peer_bytes[j];
        }
      }
    }
    if (t > 1) resize_expert_tp_collectives(r.ops, cost, t, i);
  }
  // What the reports state of the routing (docs/METRICS.md, "The MoE layer"), over the whole batch, per
  // grid rank (a TP group's members run its experts together).
  nlohmann::json& facts = plan.info["moe_layer"];
  facts["routing"] = routing.layer < 0 ? "balanced" : "realised";
  if (routing.layer >= 0) facts["layer"] = routing.layer;
  const ExpertLoads batch =
      folded(summed(routing.micro_batches, plan.world_size, cost.model().moe.experts), seats);
  facts["expert_load_imbalance"] = expert_load_imbalance(batch);
  facts["rank_load_imbalance"] = rank_load_imbalance(batch, where.degree);
  if (program && lower::resize(*program, plan, cost)) plan.lowered = std::move(program);
}

}  // namespace zb
