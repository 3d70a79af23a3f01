#include "core/strategies/head_parallel.hpp"

#include <cmath>
#include <utility>

#include "core/strategies/predict.hpp"

namespace zb {
namespace {

double q_bytes_per_token(const CostModel& cost) {
  return cost.qkv_bytes(1.0) - cost.kv_bytes(1.0);
}

plan::HeadRange head_slice(const CostModel& cost, int u, int j) {
  if (u <= 1) return {};
  const int h = cost.model().heads;  // model units: tensor parallelism splits each slice again
  return {j * h / u, (j + 1) * h / u};
}

plan::Level level_of(const CostModel& cost, const std::vector<int>& ranks) {
  if (ranks.size() <= 1) return plan::Level::local;
  const int g = cost.cluster().gpus_per_node;
  return ranks.front() / g == ranks.back() / g ? plan::Level::intra_node : plan::Level::inter_node;
}

// One collective all-to-all op of a u-group (bytes: everything this member sends).
plan::Op all_to_all(const std::string& name, int group, int mb, const std::vector<int>& ranks, int tag,
                    double bytes, std::vector<int> deps) {
  plan::Op op;
  op.kind = plan::OpKind::collective;
  op.collective = plan::CollectiveKind::all_to_all;
  op.name = name;
  op.group = group;
  op.micro_batch = mb;
  op.collective_ranks = ranks;
  op.tag = tag;
  op.bytes = std::llround(bytes);
  op.deps = std::move(deps);
  return op;
}

// Member m's part of its u-group's ring chunks (r > 1): the m-th u-th of each of chunks q and 2r−1−q.
std::vector<plan::Shard> usp_shards(int seq, std::int64_t length, int r, int q, int u, int m) {
  std::vector<plan::Shard> out;
  for (const int chunk : {q, 2 * r - 1 - q}) {
    const plan::Shard c = plan::zigzag_chunk(seq, length, r, chunk);
    const plan::Shard mine{seq, c.begin + c.size() * m / u, c.begin + c.size() * (m + 1) / u};
    if (mine.size() > 0) out.push_back(mine);
  }
  return out;
}

std::vector<int> u_group_ranks(const HeadParallelGroup& g, int q) {
  const int u = g.shape.degree;
  return {g.ranks.begin() + q * u, g.ranks.begin() + (q + 1) * u};
}

std::int64_t u_group_tokens(const HeadParallelGroup& g, int q) {
  std::int64_t tokens = 0;
  for (int m = 0; m < g.shape.degree; ++m)
    tokens += g.tokens[static_cast<std::size_t>(q * g.shape.degree + m)];
  return tokens;
}

}  // namespace

double head_parallel_kv_share(const HeadParallelShape& shape) {
  return shape.degree <= shape.kv_heads ? 1.0 / shape.degree : 1.0 / shape.kv_heads;
}

double head_parallel_member_need(const CostModel& cost, const HeadParallelShape& shape, double tokens) {
  const double act = cost.activation_bytes_per_token();
  const int u = shape.degree, r = shape.ring;
  const double share = tokens / (u * r), u_group = tokens / r;
  const double kv = cost.kv_bytes(1.0) * head_parallel_kv_share(shape) / act;
  const double qkv = q_bytes_per_token(cost) / u / act + kv;
  return share + (u_group - share) * qkv + (r > 1 ? 2.0 * u_group * kv : 0.0);
}

HeadParallelGroup add_head_parallel_group(PlanBuilder& b, const CostModel& cost,
                                          const HeadParallelShape& shape, std::vector<int> ranks,
                                          std::vector<int> sequences, int micro_batch) {
  HeadParallelGroup g;
  g.shape = shape;
  g.ranks = std::move(ranks);
  g.sequences = std::move(sequences);
  g.micro_batch = micro_batch;
  const int u = shape.degree, r = shape.ring;
  g.tokens.assign(static_cast<std::size_t>(u * r), 0);
  g.u_groups.assign(static_cast<std::size_t>(r), -1);
  if (r == 1) {  // the u-group is a plan group, its documents zigzagged over the members
    g.u_groups[0] = b.add_group(level_of(cost, g.ranks), g.ranks, g.sequences, micro_batch);
    for (int m = 0; m < u; ++m)
      g.tokens[static_cast<std::size_t>(m)] =
          b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(g.u_groups[0])], m);
    return g;
  }
  for (int q = 0; q < r; ++q) {
    for (int m = 0; m < u; ++m) {
      const int k = q * u + m;
      std::vector<plan::Shard> shards;
      for (const int seq : g.sequences) {
        for (const plan::Shard& s :
             usp_shards(seq, b.plan().sequences[static_cast<std::size_t>(seq)].length, r, q, u, m)) {
          shards.push_back(s);
          g.tokens[static_cast<std::size_t>(k)] += s.size();
        }
      }
      b.add_attention_shards(g.ranks[static_cast<std::size_t>(k)], shards);
    }
  }
  // Member j of every u-group rings head slice j's K/V. Each ring position computes its u-group's whole
  // ring chunks (the all-to-all brought them): the group lists the sequences, its layout stays the
  // members' own shards above.
  for (int j = 0; j < u; ++j) {
    std::vector<int> ring;
    for (int q = 0; q < r; ++q) ring.push_back(g.ranks[static_cast<std::size_t>(q * u + j)]);
    g.rings.push_back(b.add_group(level_of(cost, ring), ring, g.sequences, micro_batch, false));
  }
  // Each u-group is a plan group too, with no layout of its own: its all-to-alls name it, so that they
  // trade these sequences only (a Zeppelin GPU holds other groups' sequences in the same micro-batch).
  for (int q = 0; q < r; ++q) {
    const std::vector<int> members(g.ranks.begin() + q * u, g.ranks.begin() + (q + 1) * u);
    g.u_groups[static_cast<std::size_t>(q)] =
        b.add_group(level_of(cost, members), members, g.sequences, micro_batch, false);
  }
  return g;
}

std::vector<std::vector<int>> add_head_parallel_attention(PlanBuilder& b, const CostModel& cost,
                                                          const HeadParallelGroup& g,
                                                          const std::vector<int>& ready,
                                                          const PlanBuilder::RouteFn& route) {
  const int u = g.shape.degree, r = g.shape.ring, c = u * r, mb = g.micro_batch;
  const double kv_share = head_parallel_kv_share(g.shape);
  const double qkv_per_token = q_bytes_per_token(cost) / u + cost.kv_bytes(1.0) * kv_share;  // to one member
  const double o_per_token = cost.hidden_bytes(1.0) / u;
  auto deps_of = [](int id) { return id >= 0 ? std::vector<int>{id} : std::vector<int>{}; };
  std::vector<int> heads_ready(ready.begin(), ready.end());  // per member: its heads' Q/K/V have arrived
  std::vector<std::vector<int>> attn(static_cast<std::size_t>(c));
  for (int q = 0; q < r; ++q) {
    const std::vector<int> ranks = u_group_ranks(g, q);
    const int in_tag = b.new_tag();
    // A USP u-group whose ring chunks are all empty (every document shorter than the ring has chunks)
    // holds no rows and computes no attention: it trades nothing, and its all-to-alls would name no heads
    // (the lowering refuses those). So it has none, here and for O below.
    const bool trades = u > 1 && u_group_tokens(g, q) > 0;
    for (int m = 0; m < u; ++m) {
      const auto k = static_cast<std::size_t>(q * u + m);
      if (trades) {
        const double sent = static_cast<double>(u - 1) * static_cast<double>(g.tokens[k]) * qkv_per_token;
        heads_ready[k] = b.add_op(ranks[static_cast<std::size_t>(m)],
                                  all_to_all("qkv all-to-all", g.u_groups[static_cast<std::size_t>(q)], mb,
                                             ranks, in_tag, sent, deps_of(ready[k])));
      }
      if (r > 1) continue;
      plan::Op op;  // every query of the u-group's documents against its keys, for the member's heads
      op.kind = plan::OpKind::attention;
      op.name = "attn";
      op.group = g.u_groups[0];
      op.micro_batch = mb;
      op.heads = head_slice(cost, u, m);
      op.deps = deps_of(heads_ready[k]);
      EquivalentQTokens eq;
      for (const int seq : g.sequences) {
        const std::int64_t len = b.plan().sequences[static_cast<std::size_t>(seq)].length;
        op.blocks.push_back({seq, 0, len, 0, len, plan::Mask::causal, op.heads});
        const double pairs = static_cast<double>(len) * static_cast<double>(len + 1) / 2;
        op.pairs += pairs;
        eq.add(pairs, static_cast<double>(len));
      }
      op.q_tokens = eq.value();
      attn[k].push_back(b.add_op(ranks[static_cast<std::size_t>(m)], std::move(op)));
    }
  }
  if (r > 1) {  // the zigzag ring of each head slice across the u-groups, once every all-to-all is posted
    for (int j = 0; j < u; ++j) {
      const int ring = g.rings[static_cast<std::size_t>(j)];
      std::vector<int> ring_ready;
      std::vector<std::size_t> first_new;  // per position: its rank's first op of this ring
      for (int q = 0; q < r; ++q) {
        const int rank = g.ranks[static_cast<std::size_t>(q * u + j)];
        ring_ready.push_back(heads_ready[static_cast<std::size_t>(q * u + j)]);
        first_new.push_back(b.plan().ranks[static_cast<std::size_t>(rank)].ops.size());
      }
      // The ring carries head slice j only: its hops move that slice's K/V, so routes split those bytes.
      PlanBuilder::RouteFn slice_route;
      if (route) {
        slice_route = [&route, u, kv_share](int src, int dst, std::int64_t bytes, int step) {
          return route(src, dst, u > 1 ? std::llround(static_cast<double>(bytes) * kv_share) : bytes, step);
        };
      }
      const auto steps = b.add_attention(ring, ring_ready, slice_route);
      for (int q = 0; q < r; ++q) {
        const auto k = static_cast<std::size_t>(q * u + j);
        attn[k] = steps[static_cast<std::size_t>(q)];
        if (u == 1) continue;
        // Its steps compute those heads, its hops move their K/V (the bytes the routes above split).
        const int rank = g.ranks[k];
        const std::size_t end = b.plan().ranks[static_cast<std::size_t>(rank)].ops.size();
        for (std::size_t i = first_new[static_cast<std::size_t>(q)]; i < end; ++i) {
          plan::Op& op = b.mutable_op(rank, static_cast<int>(i));
          if (op.group != ring || op.kind == plan::OpKind::collective) continue;
          op.heads = head_slice(cost, u, j);
          if (op.kind == plan::OpKind::send || op.kind == plan::OpKind::recv)
            op.bytes = std::llround(static_cast<double>(op.bytes) * kv_share);
        }
      }
    }
  }
  std::vector<std::vector<int>> out(static_cast<std::size_t>(c));
  for (int q = 0; q < r; ++q) {
    const std::vector<int> ranks = u_group_ranks(g, q);
    const std::int64_t tokens = u_group_tokens(g, q);
    const int out_tag = b.new_tag();
    for (int m = 0; m < u; ++m) {
      const auto k = static_cast<std::size_t>(q * u + m);
      std::vector<int> after = attn[k].empty() ? deps_of(heads_ready[k]) : attn[k];
      if (u > 1 && tokens > 0) {  // O rows of the other members' tokens, for this member's heads
        const double sent = static_cast<double>(tokens - g.tokens[k]) * o_per_token;
        after = {b.add_op(ranks[static_cast<std::size_t>(m)],
                          all_to_all("o all-to-all", g.u_groups[static_cast<std::size_t>(q)], mb, ranks,
                                     out_tag, sent, after))};
      }
      out[k] = std::move(after);
    }
  }
  return out;
}

}  // namespace zb
