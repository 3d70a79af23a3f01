// The plan writer: walks a Plan once and hands each element to a sink (plan_json_sink.hpp), so the DOM
// (to_json) and the streamed text (write_json) are one document. docs/PLAN_FORMAT.md is the reference.
#include <algorithm>
#include <map>

#include "core/plan/plan_format.hpp"
#include "core/plan/plan_json_writer.hpp"
#include "core/plan/plan_layout_form.hpp"

namespace zb::plan {
namespace detail {
namespace {

ojson shards_json(const std::vector<Shard>& shards) {
  ojson a = ojson::array();
  for (const auto& s : shards) a.push_back({{"seq", s.seq}, {"begin", s.begin}, {"end", s.end}});
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

// A block of a `blocks` list in the compact form: [seq, q0, q1, k0, k1], then the mask only when it is not
// causal or heads follow, then the heads when they are not all: a causal block of every head is five numbers
// instead of an object with four keys (llama3-cp lists two blocks per rank and sequence).
ojson block_array(const AttentionBlock& b) {
  ojson a{b.seq, b.q0, b.q1, b.k0, b.k1};
  if (b.mask != Mask::causal || !b.heads.all()) a.push_back(to_string(b.mask));
  if (!b.heads.all()) {
    a.push_back(b.heads.begin);
    a.push_back(b.heads.end);
  }
  return a;
}

ojson move_json(const RemapMove& m) {
  return {
      {"src", m.src}, {"dst", m.dst}, {"seq", m.range.seq}, {"begin", m.range.begin}, {"end", m.range.end}};
}

}  // namespace

ojson op_json(const Op& op, Detail detail) {
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
        for (const auto& b : op.blocks)
          blocks.push_back(detail == Detail::compact ? block_array(b) : block_json(b));
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
      if (op.collective == CollectiveKind::all_to_all_v) j["peer_bytes"] = op.peer_bytes;
      break;
  }
  j["deps"] = op.deps;
  return j;
}

namespace {

// A rank's shards as listed, or in the compact form a word for what they equal: "attention" (the linear
// layout is the rank's attention layout) or "groups" (what its groups imply). An empty list is shorter
// listed.
void write_layout(JsonSink& sink, const Plan& plan, const std::vector<std::vector<Seat>>& seats,
                  std::string_view key, const std::vector<RankLayout>& layout, Detail detail) {
  sink.begin_array(key);
  for (std::size_t r = 0; r < layout.size(); ++r) {
    const RankLayout& l = layout[r];
    const bool shorthand = detail == Detail::compact && !l.shards.empty();
    ojson shards;
    if (shorthand && key == "linear_layout" && r < plan.attention_layout.size() &&
        same_shards(plan.attention_layout[r].shards, l.shards)) {
      shards = "attention";
    } else if (shorthand && r < seats.size() && implied_by_groups(plan, seats[r], l.shards)) {
      shards = "groups";
    } else {
      shards = shards_json(l.shards);
    }
    sink.value("", {{"rank", l.rank}, {"shards", std::move(shards)}});
  }
  sink.end();
}

// What a reader of a summary wants per rank: how much it does, not how.
ojson rank_summary(const RankOps& r) {
  std::map<std::string, int> kinds;
  std::int64_t bytes_sent = 0;
  double pairs = 0;
  for (const Op& op : r.ops) {
    ++kinds[to_string(op.kind)];
    if (op.kind == OpKind::send) bytes_sent += op.bytes;
    if (op.kind == OpKind::remap) bytes_sent += op.bytes_out;
    pairs += op.pairs;
  }
  ojson k = ojson::object();
  for (const auto& [kind, n] : kinds) k[kind] = n;
  return {{"rank", r.rank},
          {"ops", r.ops.size()},
          {"kinds", std::move(k)},
          {"bytes_sent", bytes_sent},
          {"pairs", pairs}};
}

void write_ranks(JsonSink& sink, const Plan& plan, Detail detail) {
  sink.begin_array("ranks");
  for (const auto& r : plan.ranks) {
    if (detail == Detail::summary) {
      sink.value("", rank_summary(r));
      continue;
    }
    sink.begin_object("");
    sink.value("rank", r.rank);
    sink.begin_array("ops");
    write_ops(sink, r.ops, detail);
    sink.end();
    sink.end();
  }
  sink.end();
}

template <typename T, typename F>
void write_list(JsonSink& sink, std::string_view key, const std::vector<T>& items, F&& element) {
  sink.begin_array(key);
  for (const T& item : items) sink.value("", element(item));
  sink.end();
}

void write_plan(JsonSink& sink, const Plan& plan, Detail detail) {
  sink.begin_object("");
  sink.value("schema_version", plan_schema_version);
  sink.value("detail", to_string(detail));
  sink.value("system", plan.system);
  sink.value("strategy", plan.strategy);
  sink.value("world_size", plan.world_size);
  sink.value("gpus_per_node", plan.gpus_per_node);
  sink.value("tensor_parallel_groups", plan.tensor_parallel_groups);
  sink.value("micro_batches", plan.micro_batches);
  sink.value("feasible", plan.feasible());
  write_list(sink, "sequences", plan.sequences, [](const Sequence& s) {
    ojson sj{{"id", s.id}, {"length", s.length}};
    if (s.micro_batch != 0) sj["micro_batch"] = s.micro_batch;
    return sj;
  });
  write_list(sink, "groups", plan.groups, [](const Group& g) -> ojson {
    return {{"id", g.id},
            {"level", to_string(g.level)},
            {"ranks", g.ranks},
            {"sequences", g.sequences},
            {"sharding", to_string(g.sharding)},
            {"micro_batch", g.micro_batch}};
  });
  if (detail != Detail::summary) {
    const auto seats = detail == Detail::compact ? seats_of(plan) : std::vector<std::vector<Seat>>{};
    write_layout(sink, plan, seats, "attention_layout", plan.attention_layout, detail);
    write_layout(sink, plan, seats, "linear_layout", plan.linear_layout, detail);
    write_list(sink, "remap", plan.remap, move_json);
  }
  write_ranks(sink, plan, detail);
  sink.begin_object("predicted");
  sink.value("iteration_seconds", plan.predicted.iteration_seconds);
  write_list(sink, "per_rank", plan.predicted.per_rank, [](const RankPrediction& p) -> ojson {
    return {{"attention_flops", p.attention_flops}, {"tokens", p.tokens}, {"seconds", p.seconds}};
  });
  sink.end();
  write_list(sink, "oom", plan.oom, [](const OomReport& o) -> ojson {
    return {{"rank", o.rank},
            {"micro_batch", o.micro_batch},
            {"tokens_needed", o.tokens_needed},
            {"token_capacity", o.token_capacity}};
  });
  sink.value("info", ojson::parse(plan.info.dump()));
  sink.value("planner_seconds", plan.planner_seconds);
  sink.end();
}

}  // namespace
}  // namespace detail

const char* to_string(Detail d) {
  switch (d) {
    case Detail::summary:
      return "summary";
    case Detail::compact:
      return "compact";
    case Detail::full:
      return "full";
  }
  return "?";
}

nlohmann::ordered_json to_json(const Plan& plan, Detail detail) {
  detail::DomSink sink;
  detail::write_plan(sink, plan, detail);
  return sink.take();
}

void write_json(const Plan& plan, Detail detail, const std::function<void(std::string_view)>& out) {
  detail::TextSink sink(out);
  detail::write_plan(sink, plan, detail);
  sink.finish();
}

std::string to_json_text(const Plan& plan, Detail detail) {
  std::string text;
  write_json(plan, detail, [&](std::string_view chunk) { text += chunk; });
  return text;
}

}  // namespace zb::plan
