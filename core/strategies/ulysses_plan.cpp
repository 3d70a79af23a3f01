// The ulysses plan (docs/STRATEGIES.md § ulysses). Per group of C = u·r consecutive ranks and pack:
//   qkv GEMM over the member's sequence shard → Q/K/V all-to-all over its u-group (member j keeps heads
//   [j·H/u, (j+1)·H/u) of every token of the u-group) → attention for those heads → O all-to-all back →
//   the output GEMMs. With r = 1 attention runs over whole documents; with r > 1 (USP) the u-group holds
//   the zigzag ring chunks g and 2r−1−g of each document and member j rings its heads' K/V with member j
//   of the other u-groups. The lowering derives the backward (the adjoint all-to-alls: dO in, dQ/dK/dV out).
#include "core/strategies/ulysses.hpp"

#include <cmath>
#include <map>

#include "core/strategies/packing.hpp"
#include "core/strategies/plan_builder.hpp"
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

}  // namespace

double ulysses_kv_share(const UlyssesSetup& setup) {
  return setup.degree <= setup.kv_heads ? 1.0 / setup.degree : 1.0 / setup.kv_heads;
}

double ulysses_pack_need(const CostModel& cost, const UlyssesSetup& setup, std::int64_t padded) {
  const double act = cost.activation_bytes_per_token();
  const int u = setup.degree, r = setup.ring;
  const double s = static_cast<double>(padded), share = s / (u * r), ugroup = s / r;
  const double kv = cost.kv_bytes(1.0) * ulysses_kv_share(setup) / act;
  const double qkv = q_bytes_per_token(cost) / u / act + kv;
  return share + (ugroup - share) * qkv + (r > 1 ? 2.0 * ugroup * kv : 0.0);
}

std::int64_t ulysses_alignment(const UlyssesSetup& setup) {
  return 2LL * setup.ring * setup.degree;
}

std::int64_t ulysses_pack_capacity(const CostModel& cost, const UlyssesSetup& setup) {
  const auto m = static_cast<double>(cost.token_capacity_per_gpu());
  const double per_token =
      ulysses_pack_need(cost, setup, 1 << 20) / static_cast<double>(1 << 20);  // linear in S
  auto capacity = static_cast<std::int64_t>(std::floor(m / per_token));
  while (capacity > 0 && ulysses_pack_need(cost, setup, capacity) > m) --capacity;  // floating-point edge
  return capacity;
}

plan::Plan plan_ulysses(const UlyssesSetup& setup, const CostModel& cost,
                        const std::vector<std::int64_t>& lengths) {
  const int world = cost.cluster().world_size();
  const int u = setup.degree, r = setup.ring, c = u * r, groups = world / c;
  // Padding to 2·r·u, not the ring's 2·r: a member holds ⌈·/u⌉ of each of its zigzag chunks (⌈len/2r⌉
  // rows), at most pad_to(len, 2ru)/(ru) rows of a document, so packs budgeted on these padded lengths
  // never leave a member over its capacity by rounding (with 2·r a pack of many short documents could:
  // 22022 tokens against 22016 on prolong64k's batch).
  const std::int64_t align = ulysses_alignment(setup);
  const std::int64_t capacity = ulysses_pack_capacity(cost, setup);
  for (std::size_t d = 0; d < lengths.size(); ++d) {  // a document is never split across packs
    const std::int64_t padded = pad_to(lengths[d], align);
    if (padded <= capacity) continue;
    plan::Plan p =
        oom_plan(cost, setup.system, setup.strategy, lengths,
                 {{0, 0, static_cast<std::int64_t>(std::ceil(ulysses_pack_need(cost, setup, padded))),
                   cost.token_capacity_per_gpu()}});
    p.info["degree"] = u;
    p.info["ring"] = r;
    p.info["oversized_document"] = {{"index", d}, {"length", lengths[d]}, {"pack_capacity_tokens", capacity}};
    return p;
  }
  const std::vector<std::vector<Pack>> dealt =
      deal_packs(cost, lengths, groups, align, capacity, setup.dealing);
  PlanBuilder b(cost, setup.system, setup.strategy);
  b.set_passes(setup.passes);
  const double kv_share = ulysses_kv_share(setup);
  const double qkv_per_token = q_bytes_per_token(cost) / u + cost.kv_bytes(1.0) * kv_share;  // to one member
  const double o_per_token = cost.hidden_bytes(1.0) / u;
  std::vector<plan::RankLayout> layout(static_cast<std::size_t>(world));  // USP's shards (r > 1)
  for (int rank = 0; rank < world; ++rank) layout[static_cast<std::size_t>(rank)].rank = rank;
  std::map<int, int> ring_slot;  // USP ring group → the head slice its members compute
  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  const int micro_batches = micro_batches_and_packs(dealt).first;
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int g = 0; g < groups; ++g) {
      const auto& packs = dealt[static_cast<std::size_t>(g)];
      if (static_cast<std::size_t>(mb) >= packs.size()) continue;
      std::vector<int> seqs;
      for (const int doc : packs[static_cast<std::size_t>(mb)].docs)
        seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(doc)], mb));
      const int base = g * c;
      // Each member's sequence shard: r = 1, per-document zigzag over the u-group (add_group's layout);
      // r > 1, its part of its u-group's ring chunks (written into the layout after finish()).
      std::vector<std::int64_t> tokens(static_cast<std::size_t>(c), 0);
      std::vector<int> ugroup_gid(static_cast<std::size_t>(r), -1), ring_gid(static_cast<std::size_t>(u), -1);
      for (int q = 0; q < r; ++q) {
        std::vector<int> ranks;
        for (int m = 0; m < u; ++m) ranks.push_back(base + q * u + m);
        if (r == 1) {
          ugroup_gid[0] = b.add_group(level_of(cost, ranks), ranks, seqs, mb);
          for (int m = 0; m < u; ++m)
            tokens[static_cast<std::size_t>(m)] =
                b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(ugroup_gid[0])], m);
          continue;
        }
        for (int m = 0; m < u; ++m) {
          for (const int seq : seqs) {
            for (const plan::Shard& s :
                 usp_shards(seq, b.plan().sequences[static_cast<std::size_t>(seq)].length, r, q, u, m)) {
              layout[static_cast<std::size_t>(base + q * u + m)].shards.push_back(s);
              tokens[static_cast<std::size_t>(q * u + m)] += s.size();
            }
          }
        }
      }
      if (r > 1) {
        for (int j = 0; j < u; ++j) {
          std::vector<int> ranks;
          for (int q = 0; q < r; ++q) ranks.push_back(base + q * u + j);
          ring_gid[static_cast<std::size_t>(j)] = b.add_group(level_of(cost, ranks), ranks, seqs, mb);
          ring_slot[ring_gid[static_cast<std::size_t>(j)]] = j;
        }
      }
      std::vector<int> qkv(static_cast<std::size_t>(c)), ready(static_cast<std::size_t>(c));
      std::vector<std::vector<int>> attn(static_cast<std::size_t>(c));
      for (int q = 0; q < r; ++q) {
        std::vector<int> ranks;
        for (int m = 0; m < u; ++m) ranks.push_back(base + q * u + m);
        const int in_tag = b.new_tag();
        for (int m = 0; m < u; ++m) {
          const auto k = static_cast<std::size_t>(q * u + m);
          const int rank = ranks[static_cast<std::size_t>(m)];
          const int prev = last_op[static_cast<std::size_t>(rank)];
          qkv[k] =
              b.add_qkv_gemm(rank, tokens[k], prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
          ready[k] = qkv[k];
          if (u > 1) {
            const double sent = static_cast<double>(u - 1) * static_cast<double>(tokens[k]) * qkv_per_token;
            ready[k] = b.add_op(rank, all_to_all("qkv all-to-all", ugroup_gid[static_cast<std::size_t>(q)],
                                                 mb, ranks, in_tag, sent, {qkv[k]}));
          }
          if (r > 1) continue;
          plan::Op op;  // every query of the u-group's documents against its keys, for the member's heads
          op.kind = plan::OpKind::attention;
          op.name = "attn";
          op.group = ugroup_gid[0];
          op.micro_batch = mb;
          op.heads = head_slice(cost, u, m);
          op.deps = {ready[k]};
          EquivalentQTokens eq;
          for (const int seq : seqs) {
            const std::int64_t len = b.plan().sequences[static_cast<std::size_t>(seq)].length;
            op.blocks.push_back({seq, 0, len, 0, len, plan::Mask::causal, op.heads});
            const double pairs = static_cast<double>(len) * static_cast<double>(len + 1) / 2;
            op.pairs += pairs;
            eq.add(pairs, static_cast<double>(len));
          }
          op.q_tokens = eq.value();
          attn[k].push_back(b.add_op(rank, std::move(op)));
        }
      }
      if (r > 1) {  // the zigzag ring of each head slice across the u-groups, once every all-to-all is posted
        for (int j = 0; j < u; ++j) {
          std::vector<int> ring_ready;
          for (int q = 0; q < r; ++q) ring_ready.push_back(ready[static_cast<std::size_t>(q * u + j)]);
          const auto steps = b.add_attention(ring_gid[static_cast<std::size_t>(j)], ring_ready);
          for (int q = 0; q < r; ++q)
            attn[static_cast<std::size_t>(q * u + j)] = steps[static_cast<std::size_t>(q)];
        }
      }
      for (int q = 0; q < r; ++q) {
        std::vector<int> ranks;
        std::int64_t ugroup_tokens = 0;
        for (int m = 0; m < u; ++m) {
          ranks.push_back(base + q * u + m);
          ugroup_tokens += tokens[static_cast<std::size_t>(q * u + m)];
        }
        const int out_tag = b.new_tag();
        for (int m = 0; m < u; ++m) {
          const auto k = static_cast<std::size_t>(q * u + m);
          const int rank = ranks[static_cast<std::size_t>(m)];
          std::vector<int> after = attn[k].empty() ? std::vector<int>{ready[k]} : attn[k];
          if (u > 1) {  // O rows of the other members' tokens, for this member's heads
            const double sent = static_cast<double>(ugroup_tokens - tokens[k]) * o_per_token;
            after = {b.add_op(rank, all_to_all("o all-to-all", ugroup_gid[static_cast<std::size_t>(q)], mb,
                                               ranks, out_tag, sent, after))};
          }
          after.push_back(qkv[k]);
          last_op[static_cast<std::size_t>(rank)] = b.add_output_gemms(rank, tokens[k], after, mb);
        }
      }
    }
  }
  const auto [mbs, pack_count] = micro_batches_and_packs(dealt);
  b.set_micro_batches(std::max(1, mbs));
  b.add_info("degree", u);
  b.add_info("ring", r);
  b.add_info("cp_degree", c);
  b.add_info("groups", groups);
  b.add_info("dealing", setup.dealing == Dealing::balanced ? "balanced" : "round-robin");
  b.add_info("packs", pack_count);
  b.add_info("pack_capacity_tokens", capacity);
  b.add_info("kv_heads", u <= setup.kv_heads ? "split" : "replicated");
  if (r == 1) return b.finish();
  // USP: PlanBuilder's ring groups give each member its u-group's whole ring chunks; the member holds
  // only its part of them (the all-to-all brings the rest for its heads), and its ring carries the K/V of
  // its head slice only. Both are fixed here, and the plan predicted once, as it now stands.
  plan::Plan p = b.finish_unpredicted();
  p.attention_layout = layout;
  p.linear_layout = std::move(layout);
  for (auto& rank_ops : p.ranks) {
    for (plan::Op& op : rank_ops.ops) {
      const auto slot = ring_slot.find(op.group);
      if (u == 1 || slot == ring_slot.end() || op.kind == plan::OpKind::collective) continue;
      op.heads = head_slice(cost, u, slot->second);
      if (op.kind == plan::OpKind::send || op.kind == plan::OpKind::recv)
        op.bytes = std::llround(static_cast<double>(op.bytes) * kv_share);
    }
  }
  p.predicted = predict(p, cost, setup.passes);
  return p;
}

}  // namespace zb
