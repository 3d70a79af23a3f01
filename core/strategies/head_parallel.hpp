#pragma once
// Head-parallel attention of one group of documents on C = u·r GPUs (DeepSpeed-Ulysses, and USP's u × r
// hybrid): the mechanics that the ulysses baseline applies to every group and Zeppelin's `heads: auto`
// to the groups where its estimate says it pays. Members hold their sequence shards for the linear
// modules; around attention a Q/K/V all-to-all inside each u-group trades them for head shards (member j
// of a u-group gets heads [j·H/u, (j+1)·H/u) of every token of the u-group), attention runs over whole
// documents (r = 1) or as a zigzag ring of each head slice across the r u-groups (r > 1), and an O
// all-to-all brings the rows back. See docs/STRATEGIES.md § ulysses.
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/strategies/plan_builder.hpp"

namespace zb {

struct HeadParallelShape {
  int degree = 1;    // u: the all-to-all group, inside one node
  int ring = 1;      // r: u-groups on a zigzag ring per head slice; 1 = plain Ulysses
  int kv_heads = 1;  // K/V heads per TP rank: u ≤ kv_heads splits them, else each member gets a replica
};

// The fraction of one token's K/V bytes a member receives for its heads: 1/u when the K/V heads split,
// 1/kv_heads when they are replicated.
[[nodiscard]] double head_parallel_kv_share(const HeadParallelShape& shape);

// Per-member memory of a group holding `tokens` tokens, in token-equivalents of the GPU's capacity M: the
// member's sequence share S/C of every layer's activations, plus one layer's received Q/K/V rows of its
// u-group's other tokens for its heads, plus (r > 1) two ring K/V buffers of a u-group's tokens.
[[nodiscard]] double head_parallel_member_need(const CostModel& cost, const HeadParallelShape& shape,
                                               double tokens);

// One group as the builder holds it. Members are ordered u-group by u-group: member q·u + m is member m
// of u-group q (the u ranks of a u-group share a node).
struct HeadParallelGroup {
  HeadParallelShape shape;
  std::vector<int> ranks;
  std::vector<int> sequences;
  int micro_batch = 0;
  std::vector<int> u_groups;         // per u-group, its plan group (its all-to-alls name it)
  std::vector<int> rings;            // r > 1: per head slice j, the plan group of its ring; else empty
  std::vector<std::int64_t> tokens;  // per member: its sequence-shard rows
};

// Adds the group's plan groups and its members' attention-layout shards (r = 1: each document zigzagged
// over the u-group; r > 1: member m's m-th u-th of its u-group's two zigzag ring chunks).
[[nodiscard]] HeadParallelGroup add_head_parallel_group(PlanBuilder& b, const CostModel& cost,
                                                        const HeadParallelShape& shape,
                                                        std::vector<int> ranks, std::vector<int> sequences,
                                                        int micro_batch);

// Emits the group's all-to-alls and attention after `ready[k]` (member k's op its Q/K/V rows wait for,
// −1 = none); ring hops between nodes take `route`. Returns, per member, the ops its output GEMMs wait
// for (the O all-to-all; the attention itself when u = 1).
[[nodiscard]] std::vector<std::vector<int>> add_head_parallel_attention(
    PlanBuilder& b, const CostModel& cost, const HeadParallelGroup& group, const std::vector<int>& ready,
    const PlanBuilder::RouteFn& route = {});

}  // namespace zb
