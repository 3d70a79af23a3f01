#include <algorithm>

#include "core/plan/plan_format.hpp"

namespace zb::plan {
namespace {

using ojson = nlohmann::ordered_json;

ojson shards_json(const std::vector<Shard>& shards) {
  ojson a = ojson::array();
  for (const auto& s : shards) a.push_back({{"seq", s.seq}, {"begin", s.begin}, {"end", s.end}});
  return a;
}

ojson layout_json(const std::vector<RankLayout>& layout) {
  ojson a = ojson::array();
  for (const auto& l : layout) a.push_back({{"rank", l.rank}, {"shards", shards_json(l.shards)}});
  return a;
}

// Heads are printed only when they are not "every head", so plans without head parallelism read as in
// schema 1. [begin, end]; end −1 keeps its meaning ("to the last head").
void put_heads(ojson& j, const HeadRange& h) {
  if (!h.all()) j["heads"] = {h.begin, h.end};
}

ojson block_json(const AttentionBlock& b) {
  ojson j{{"seq", b.seq}, {"q", {b.q0, b.q1}}, {"k", {b.k0, b.k1}}, {"mask", to_string(b.mask)}};
  put_heads(j, b.heads);
  return j;
}

ojson move_json(const RemapMove& m) {
  return {
      {"src", m.src}, {"dst", m.dst}, {"seq", m.range.seq}, {"begin", m.range.begin}, {"end", m.range.end}};
}

ojson op_json(const Op& op) {
  ojson j{{"id", op.id}, {"kind", to_string(op.kind)}};
  if (op.micro_batch != 0) j["micro_batch"] = op.micro_batch;
  if (!op.name.empty()) j["name"] = op.name;
  if (op.group >= 0) j["group"] = op.group;
  if (op.step >= 0) j["step"] = op.step;
  switch (op.kind) {
    case OpKind::attention:
      if (op.zigzag_kv_rank >= 0) {
        j["zigzag"] = {{"kv_rank", op.zigzag_kv_rank}};
        put_heads(j, op.heads);
      } else if (op.blocks.size() == 1 && op.heads.all()) {
        // The common single-block form is flat, as in DESIGN §5's example; its `heads` are the block's.
        j.update(block_json(op.blocks.front()));
      } else {
        ojson blocks = ojson::array();
        for (const auto& b : op.blocks) blocks.push_back(block_json(b));
        j["blocks"] = std::move(blocks);
        put_heads(j, op.heads);
      }
      j["pairs"] = op.pairs;
      j["q_tokens"] = op.q_tokens;  // sets the kernel's efficiency: an executor needs it to time the op
      j["calls"] = op.calls;
      break;
    case OpKind::send:
    case OpKind::recv:
      j["peer"] = op.peer;
      j["tag"] = op.tag;
      j["bytes"] = op.bytes;
      if (op.kv_owner >= 0) j["kv_owner"] = op.kv_owner;
      put_heads(j, op.heads);
      if (op.kind == OpKind::send) {
        ojson route{{"kind", to_string(op.route.kind)}};
        if (op.route.kind == RouteKind::routed) {
          route["proxies"] = op.route.proxies;
          route["peer_proxies"] = op.route.peer_proxies;
          route["part_bytes"] = op.route.part_bytes;
          route["chunks"] = op.route.chunks;
        }
        j["route"] = std::move(route);
      }
      break;
    case OpKind::remap: {
      j["direction"] = to_string(op.direction);
      j["bytes_out"] = op.bytes_out;
      j["bytes_in"] = op.bytes_in;
      ojson moves = ojson::array();
      for (const auto& m : op.moves) moves.push_back(move_json(m));
      j["moves"] = std::move(moves);
      break;
    }
    case OpKind::gemm:
      j["m"] = op.m;
      j["n"] = op.n;
      j["k"] = op.k;
      break;
    case OpKind::collective:
      j["collective"] = to_string(op.collective);
      j["ranks"] = op.collective_ranks;
      j["tag"] = op.tag;
      j["bytes"] = op.bytes;
      break;
  }
  j["deps"] = op.deps;
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Plan& plan) {
  ojson j;
  j["schema_version"] = plan_schema_version;
  j["system"] = plan.system;
  j["strategy"] = plan.strategy;
  j["world_size"] = plan.world_size;
  j["gpus_per_node"] = plan.gpus_per_node;
  j["tensor_parallel_groups"] = plan.tensor_parallel_groups;
  j["micro_batches"] = plan.micro_batches;
  j["feasible"] = plan.feasible();
  ojson seqs = ojson::array();
  for (const auto& s : plan.sequences) {
    ojson sj{{"id", s.id}, {"length", s.length}};
    if (s.micro_batch != 0) sj["micro_batch"] = s.micro_batch;
    seqs.push_back(std::move(sj));
  }
  j["sequences"] = std::move(seqs);
  ojson groups = ojson::array();
  for (const auto& g : plan.groups) {
    groups.push_back({{"id", g.id},
                      {"level", to_string(g.level)},
                      {"ranks", g.ranks},
                      {"sequences", g.sequences},
                      {"sharding", to_string(g.sharding)},
                      {"micro_batch", g.micro_batch}});
  }
  j["groups"] = std::move(groups);
  j["attention_layout"] = layout_json(plan.attention_layout);
  j["linear_layout"] = layout_json(plan.linear_layout);
  ojson remap = ojson::array();
  for (const auto& m : plan.remap) remap.push_back(move_json(m));
  j["remap"] = std::move(remap);
  ojson ranks = ojson::array();
  for (const auto& r : plan.ranks) {
    ojson ops = ojson::array();
    for (const auto& op : r.ops) ops.push_back(op_json(op));
    ranks.push_back({{"rank", r.rank}, {"ops", std::move(ops)}});
  }
  j["ranks"] = std::move(ranks);
  ojson per_rank = ojson::array();
  for (const auto& p : plan.predicted.per_rank) {
    per_rank.push_back(
        {{"attention_flops", p.attention_flops}, {"tokens", p.tokens}, {"seconds", p.seconds}});
  }
  j["predicted"] = {{"iteration_seconds", plan.predicted.iteration_seconds},
                    {"per_rank", std::move(per_rank)}};
  ojson oom = ojson::array();
  for (const auto& o : plan.oom) {
    oom.push_back({{"rank", o.rank},
                   {"micro_batch", o.micro_batch},
                   {"tokens_needed", o.tokens_needed},
                   {"token_capacity", o.token_capacity}});
  }
  j["oom"] = std::move(oom);
  j["info"] = ojson::parse(plan.info.dump());
  j["planner_seconds"] = plan.planner_seconds;
  return j;
}

}  // namespace zb::plan
