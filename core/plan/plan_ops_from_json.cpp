// plan::from_json, the ops of one rank: one reader per op kind, each allowing exactly the keys the writer
// prints for that kind (a `peer` on a gemm is a mistake worth reporting, not a field to ignore).
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan_reader.hpp"

namespace zb::plan::detail {
namespace {

using nlohmann::json;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int_max = std::numeric_limits<int>::max();

constexpr std::array<std::string_view, 6> kind_names{"attention", "send", "recv",
                                                     "remap",     "gemm", "collective"};
constexpr std::array<std::string_view, 2> mask_names{"causal", "full"};
constexpr std::array<std::string_view, 2> route_names{"direct", "routed"};
constexpr std::array<std::string_view, 2> direction_names{"to_attention", "to_linear"};
constexpr std::array<std::string_view, 5> collective_names{"all_gather", "reduce_scatter", "all_reduce",
                                                           "all_to_all", "all_to_all_v"};

template <std::size_t N>
int position_of(const std::array<std::string_view, N>& names, const std::string& name) {
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

std::vector<std::string_view> keys_of(OpKind kind) {
  std::vector<std::string_view> keys{"id", "kind", "micro_batch", "name", "group", "step", "deps"};
  auto add = [&](std::initializer_list<std::string_view> more) { keys.insert(keys.end(), more); };
  switch (kind) {
    case OpKind::attention:
      add({"seq", "q", "k", "mask", "heads", "blocks", "zigzag", "pairs", "q_tokens", "calls"});
      break;
    case OpKind::send:
      add({"peer", "tag", "bytes", "kv_owner", "heads", "route"});
      break;
    case OpKind::recv:
      add({"peer", "tag", "bytes", "kv_owner", "heads"});
      break;
    case OpKind::remap:
      add({"direction", "bytes_out", "bytes_in", "moves"});
      break;
    case OpKind::gemm:
      add({"m", "n", "k"});
      break;
    case OpKind::collective:
      add({"collective", "ranks", "tag", "bytes", "peer_bytes"});
      break;
  }
  return keys;
}

// One block: from a `blocks` element, or from the op itself in the flat single-block form.
AttentionBlock read_block(const PlanReader& r, const ObjectReader& o) {
  AttentionBlock b;
  b.seq = r.index(o, "seq", r.sequence_ref(), true).value_or(0);
  if (const auto q = r.pair(o, "q", true)) std::tie(b.q0, b.q1) = *q;
  if (const auto k = r.pair(o, "k", true)) std::tie(b.k0, b.k1) = *k;
  if (const auto mask = r.choice(o, "mask", mask_names, true))
    b.mask = *mask == "causal" ? Mask::causal : Mask::full;
  b.heads = r.heads(o).value_or(HeadRange{});
  return b;
}

// An integer in [min, max], or nullopt (a float, a string, or out of range, unsigned giants included).
std::optional<std::int64_t> integer_in(const json& v, std::int64_t min, std::int64_t max) {
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) return std::nullopt;
  const auto n = v.get<std::int64_t>();
  if (n < min || n > max) return std::nullopt;
  return n;
}

// A block of a `blocks` list in the compact form: [seq, q0, q1, k0, k1], then optionally the mask, then
// optionally the heads' begin and end (plan_json.cpp's block_array).
AttentionBlock read_block_array(const PlanReader& r, const json& a, const std::string& path) {
  AttentionBlock b;
  if (!r.schema_3_form(path, "a block written as an array")) return b;
  if (a.size() != 5 && a.size() != 6 && a.size() != 8) {
    r.context().add(path,
                    "expected [seq, q0, q1, k0, k1], then optionally the mask and the heads' begin and "
                    "end (5, 6 or 8 elements), got an array of " +
                        std::to_string(a.size()));
    return b;
  }
  b.seq = r.index(a[0], index_path(path, 0), r.sequence_ref()).value_or(0);
  std::int64_t* const bounds[] = {&b.q0, &b.q1, &b.k0, &b.k1};
  for (std::size_t i = 1; i <= 4; ++i) {
    if (const auto v = integer_in(a[i], 0, int64_max)) {
      *bounds[i - 1] = *v;
    } else {
      r.context().add(index_path(path, i),
                      "expected a token position (an integer >= 0), got " + describe_json(a[i]));
    }
  }
  if (a.size() >= 6) {
    if (a[5].is_string() && (a[5] == "causal" || a[5] == "full")) {
      b.mask = a[5] == "causal" ? Mask::causal : Mask::full;
    } else {
      r.context().add(index_path(path, 5),
                      "expected the mask, \"causal\" or \"full\", got " + describe_json(a[5]));
    }
  }
  if (a.size() == 8) {
    const auto h0 = integer_in(a[6], 0, int_max);
    const auto h1 = integer_in(a[7], -1, int_max);
    if (!h0 || !h1 || (*h1 != -1 && *h1 <= *h0)) {
      r.context().add(index_path(path, 6),
                      "expected the heads' begin and end with 0 <= begin < end (end -1: "
                      "to the last head), got " +
                          a[6].dump() + ", " + a[7].dump());
    } else {
      b.heads = {static_cast<int>(*h0), static_cast<int>(*h1)};
    }
  }
  return b;
}

// q_tokens when a file does not give it (schema 1, or a hand-written op): the rule PlanBuilder uses, so a
// printed plan reads back to itself. Each distinct query range of a sequence is one tile of the varlen
// call; q_tokens is the pair-weighted harmonic mean of their lengths (EquivalentQTokens, cost_model.hpp).
double derived_q_tokens(const Plan& plan, int rank, const Op& op) {
  if (op.zigzag_kv_rank >= 0) {
    const Group& g = plan.groups[static_cast<std::size_t>(op.group)];
    if (std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end()) return 0;  // verify reports it
  }
  std::map<std::tuple<int, std::int64_t, std::int64_t>, double> tiles;  // (seq, q0, q1) → pairs
  for (const auto& b : expand_blocks(plan, rank, op)) {
    tiles[{b.seq, b.q0, b.q1}] +=
        static_cast<double>(CostModel::attention_pairs(b.q0, b.q1, b.k0, b.k1, b.mask == Mask::causal));
  }
  EquivalentQTokens q;
  for (const auto& [tile, pairs] : tiles)
    q.add(pairs, static_cast<double>(std::get<2>(tile) - std::get<1>(tile)));
  return q.value();
}

void read_attention(const PlanReader& r, const ObjectReader& o, Op& op, int rank, const Plan& plan) {
  const bool flat = o.has("seq") || o.has("q") || o.has("k") || o.has("mask");
  const int forms = int{flat} + int{o.has("blocks")} + int{o.has("zigzag")};
  if (forms != 1) {
    r.context().add(
        o.path(), forms == 0 ? "an attention op names no blocks" : "an attention op mixes block forms",
        "give exactly one of: seq/q/k/mask (one block), blocks (several), zigzag (the ring form)");
  } else if (flat) {
    op.blocks.push_back(read_block(r, o));  // the flat form's `heads` are the block's
  } else if (const json* blocks = r.array(o, "blocks", false)) {
    for (std::size_t i = 0; i < blocks->size() && !r.enough(); ++i) {
      const json& b = (*blocks)[i];
      const std::string path = index_path(o.path_of("blocks"), i);
      op.blocks.push_back(b.is_array() ? read_block_array(r, b, path)
                                       : read_block(r, ObjectReader(b, path, r.context(),
                                                                    {"seq", "q", "k", "mask", "heads"})));
    }
  } else if (const auto zigzag = o.object("zigzag", {"kv_rank"})) {
    op.zigzag_kv_rank = r.index(*zigzag, "kv_rank", r.ranks(), true).value_or(-1);
    if (op.group < 0) {
      r.context().add(o.path_of("zigzag"), "the ring form needs the op's group",
                      "add \"group\": the CP group whose sequences it covers");
      op.zigzag_kv_rank = -1;
    }
  }
  if (!flat) op.heads = r.heads(o).value_or(HeadRange{});
  op.pairs = r.non_negative(o, "pairs", true).value_or(0);
  op.calls = static_cast<int>(r.integer(o, "calls", 0, int_max, true).value_or(1));
  const auto q_tokens = r.non_negative(o, "q_tokens", false);
  op.q_tokens = q_tokens ? *q_tokens : derived_q_tokens(plan, rank, op);
}

void read_route(const PlanReader& r, const json& v, const std::string& path, Route& route) {
  const auto kind = kind_of(r, v, path, "kind", route_names);
  if (!kind) return;
  if (*kind == "direct") {
    (void)ObjectReader(v, path, r.context(), {"kind"});  // reports any other key
    return;
  }
  const ObjectReader o(v, path, r.context(), {"kind", "proxies", "peer_proxies", "part_bytes", "chunks"});
  route.kind = RouteKind::routed;
  route.proxies = r.indices(o, "proxies", r.ranks(), true).value_or(std::vector<int>{});
  route.peer_proxies = r.indices(o, "peer_proxies", r.ranks(), true).value_or(std::vector<int>{});
  route.part_bytes = r.integers(o, "part_bytes", 0, int64_max, true).value_or(std::vector<std::int64_t>{});
  route.chunks = static_cast<int>(r.integer(o, "chunks", 1, int_max, true).value_or(1));
}

void read_transfer(const PlanReader& r, const ObjectReader& o, Op& op) {
  op.peer = r.index(o, "peer", r.ranks(), true).value_or(-1);
  op.tag = static_cast<int>(r.integer(o, "tag", 0, int_max, true).value_or(-1));
  op.bytes = r.integer(o, "bytes", 0, int64_max, true).value_or(0);
  op.kv_owner = r.index(o, "kv_owner", r.ranks(), false).value_or(-1);
  op.heads = r.heads(o).value_or(HeadRange{});
  if (op.kind == OpKind::send && o.require("route"))
    read_route(r, *o.get("route"), o.path_of("route"), op.route);
}

void read_remap(const PlanReader& r, const ObjectReader& o, Op& op) {
  if (const auto d = r.choice(o, "direction", direction_names, true)) {
    op.direction = *d == "to_attention" ? RemapDirection::to_attention : RemapDirection::to_linear;
  }
  op.bytes_out = r.integer(o, "bytes_out", 0, int64_max, true).value_or(0);
  op.bytes_in = r.integer(o, "bytes_in", 0, int64_max, true).value_or(0);
  if (const json* moves = r.array(o, "moves", true)) {
    for (std::size_t i = 0; i < moves->size() && !r.enough(); ++i) {
      op.moves.push_back(read_move(r, (*moves)[i], index_path(o.path_of("moves"), i)));
    }
  }
}

void read_collective(const PlanReader& r, const ObjectReader& o, Op& op) {
  if (const auto c = r.choice(o, "collective", collective_names, true)) {
    op.collective = static_cast<CollectiveKind>(position_of(collective_names, *c));
  }
  op.collective_ranks = r.indices(o, "ranks", r.ranks(), true).value_or(std::vector<int>{});
  op.tag = static_cast<int>(r.integer(o, "tag", 0, int_max, true).value_or(-1));
  op.bytes = r.integer(o, "bytes", 0, int64_max, true).value_or(0);
  // An MoE exchange states each member's part; plan::verify checks they sum to `bytes`.
  if (op.collective != CollectiveKind::all_to_all_v) return;
  op.peer_bytes = r.integers(o, "peer_bytes", 0, int64_max, true).value_or(std::vector<std::int64_t>{});
}

}  // namespace

Op read_op(const PlanReader& r, const json& v, const std::string& path, int rank, std::size_t id,
           const Ref& ops, const Plan& plan) {
  Op op;
  op.id = static_cast<int>(id);
  const auto kind = kind_of(r, v, path, "kind", kind_names);
  if (!kind) return op;
  op.kind = static_cast<OpKind>(position_of(kind_names, *kind));
  const ObjectReader o(v, path, r.context(), keys_of(op.kind));
  expect_position(r, o, "id", id, "ops");
  op.micro_batch = r.index(o, "micro_batch", r.micro_batch_ref(), false).value_or(0);
  if (const auto name = r.text(o, "name", false)) op.name = *name;
  op.group = r.index(o, "group", r.group_ref(), false).value_or(-1);
  op.step = static_cast<int>(r.integer(o, "step", 0, int_max, false).value_or(-1));
  // Deps must name ops of this rank; that they name earlier ones is the DAG rule plan::verify checks.
  op.deps = r.indices(o, "deps", ops, true).value_or(std::vector<int>{});
  switch (op.kind) {
    case OpKind::attention:
      read_attention(r, o, op, rank, plan);
      break;
    case OpKind::send:
    case OpKind::recv:
      read_transfer(r, o, op);
      break;
    case OpKind::remap:
      read_remap(r, o, op);
      break;
    case OpKind::gemm:
      op.m = r.integer(o, "m", 0, int64_max, true).value_or(0);
      op.n = r.integer(o, "n", 0, int64_max, true).value_or(0);
      op.k = r.integer(o, "k", 0, int64_max, true).value_or(0);
      break;
    case OpKind::collective:
      read_collective(r, o, op);
      break;
  }
  return op;
}

std::vector<Op> read_ops(const PlanReader& r, const json& ops, const std::string& path, int rank,
                         const Plan& plan) {
  // The rank's op count once runs are expanded: a dep may name any of its ops.
  std::size_t total = 0;
  for (const json& entry : ops) total += entry.is_object() && entry.contains("run") ? run_length(entry) : 1;
  if (total > r.max_ops || r.ops_read > r.max_ops - total) {
    r.context().add(path,
                    "rank " + std::to_string(rank) + " has " + std::to_string(total) +
                        " ops once its runs are expanded, which takes the plan past " +
                        std::to_string(r.max_ops) + " ops, the most this build reads",
                    "a plan that large would not fit in memory; check the runs' `run` counts");
    return {};
  }
  r.ops_read += total;
  std::vector<Op> out;
  out.reserve(total);
  const Ref op_ref{"op", total, "rank " + std::to_string(rank) + " has " + std::to_string(total) + " ops"};
  std::size_t id = 0;  // the next entry's first op (a run that cannot be read still takes its ids)
  for (std::size_t i = 0; i < ops.size() && !r.enough(); ++i) {
    const std::string entry_path = index_path(path, i);
    if (ops[i].is_object() && ops[i].contains("run")) {
      read_run(r, ops[i], entry_path, rank, id, op_ref, plan, out);
      const std::size_t length = run_length(ops[i]);
      if (r.sources != nullptr && length > 0) {
        const std::size_t period = ops[i]["ops"].size();
        r.sources->add_run(rank, i, id, period, length / period);
      }
      id += length;
    } else {
      out.push_back(read_op(r, ops[i], entry_path, rank, id, op_ref, plan));
      ++id;
    }
  }
  return out;
}

}  // namespace zb::plan::detail
