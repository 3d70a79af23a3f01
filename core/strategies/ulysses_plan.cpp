// The ulysses plan (docs/STRATEGIES.md § ulysses). Per group of C = u·r consecutive ranks and pack:
//   qkv GEMM over the member's sequence shard → Q/K/V all-to-all over its u-group (member j keeps heads
//   [j·H/u, (j+1)·H/u) of every token of the u-group) → attention for those heads → O all-to-all back →
//   the output GEMMs. With r = 1 attention runs over whole documents; with r > 1 (USP) the u-group holds
//   the zigzag ring chunks g and 2r−1−g of each document and member j rings its heads' K/V with member j
//   of the other u-groups. The lowering derives the backward (the adjoint all-to-alls: dO in, dQ/dK/dV out).
#include "core/strategies/ulysses.hpp"

#include <cmath>

#include "core/strategies/head_parallel.hpp"
#include "core/strategies/packing.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/predict.hpp"

namespace zb {
double ulysses_kv_share(const UlyssesSetup& setup) {
  return head_parallel_kv_share({setup.degree, setup.ring, setup.kv_heads});
}

double ulysses_pack_need(const CostModel& cost, const UlyssesSetup& setup, std::int64_t padded) {
  return head_parallel_member_need(cost, {setup.degree, setup.ring, setup.kv_heads},
                                   static_cast<double>(padded));
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
  const HeadParallelShape shape{u, r, setup.kv_heads};
  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  const int micro_batches = micro_batches_and_packs(dealt).first;
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int g = 0; g < groups; ++g) {
      const auto& packs = dealt[static_cast<std::size_t>(g)];
      if (static_cast<std::size_t>(mb) >= packs.size()) continue;
      std::vector<int> seqs;
      for (const int doc : packs[static_cast<std::size_t>(mb)].docs)
        seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(doc)], mb));
      std::vector<int> ranks(static_cast<std::size_t>(c));
      for (int k = 0; k < c; ++k) ranks[static_cast<std::size_t>(k)] = g * c + k;
      const HeadParallelGroup group = add_head_parallel_group(b, cost, shape, ranks, std::move(seqs), mb);
      std::vector<int> qkv(static_cast<std::size_t>(c));
      for (int k = 0; k < c; ++k) {
        const int prev = last_op[static_cast<std::size_t>(ranks[static_cast<std::size_t>(k)])];
        qkv[static_cast<std::size_t>(k)] =
            b.add_qkv_gemm(ranks[static_cast<std::size_t>(k)], group.tokens[static_cast<std::size_t>(k)],
                           prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
      }
      std::vector<std::vector<int>> after = add_head_parallel_attention(b, cost, group, qkv);
      for (int k = 0; k < c; ++k) {
        auto& deps = after[static_cast<std::size_t>(k)];
        deps.push_back(qkv[static_cast<std::size_t>(k)]);
        last_op[static_cast<std::size_t>(ranks[static_cast<std::size_t>(k)])] = b.add_output_gemms(
            ranks[static_cast<std::size_t>(k)], group.tokens[static_cast<std::size_t>(k)], deps, mb);
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
  return b.finish();
}

}  // namespace zb
