#include "core/strategies/packed_cp.hpp"

#include <algorithm>

#include "core/strategies/packing.hpp"
#include "core/strategies/plan_builder.hpp"

namespace zb {

plan::Plan plan_packed_cp(const PackedCpSetup& setup, const CostModel& cost, const std::vector<std::int64_t>& lengths) {
  const int world = cost.cluster().world_size();
  const int c = setup.degree;
  const int groups = world / c;
  const std::int64_t per_gpu = cost.token_capacity_per_gpu();
  const std::int64_t capacity = per_gpu * c;
  const std::int64_t align = 2LL * c;

  // A document that does not fit one group's memory is an OOM: report it, never split it silently.
  std::vector<plan::OomReport> oom;
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    const std::int64_t need = pad_to(lengths[d], align);
    if (need > capacity && oom.empty()) oom.push_back({0, 0, need / c, per_gpu});
  }
  if (!oom.empty()) return oom_plan(cost, setup.system, setup.strategy, lengths, std::move(oom));

  const std::vector<Pack> packs = pack_ffd(lengths, align, capacity);
  PlanBuilder b(cost, setup.system, setup.strategy);
  b.set_passes(setup.passes);
  const int nodes_spanned = (c + cost.cluster().gpus_per_node - 1) / cost.cluster().gpus_per_node;
  const plan::Level level = c == 1 ? plan::Level::local : nodes_spanned > 1 ? plan::Level::inter_node : plan::Level::intra_node;

  // Packs are dealt round-robin: pack i goes to group i mod D as that group's micro-batch i / D.
  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  const int micro_batches = static_cast<int>((packs.size() + static_cast<std::size_t>(groups) - 1) / static_cast<std::size_t>(groups));
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int g = 0; g < groups; ++g) {
      const std::size_t pi = static_cast<std::size_t>(mb) * static_cast<std::size_t>(groups) + static_cast<std::size_t>(g);
      if (pi >= packs.size()) break;
      std::vector<int> seqs;
      for (int doc : packs[pi].docs) seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(doc)], mb));
      std::vector<int> ranks(static_cast<std::size_t>(c));
      for (int i = 0; i < c; ++i) ranks[static_cast<std::size_t>(i)] = g * c + i;
      const int gid = b.add_group(level, ranks, seqs, mb);
      const plan::Group& group = b.plan().groups.back();
      std::vector<int> ready(static_cast<std::size_t>(c));
      for (int i = 0; i < c; ++i) {
        const int r = ranks[static_cast<std::size_t>(i)];
        const auto tokens = b.zigzag_rank_tokens(group, i);
        const int prev = last_op[static_cast<std::size_t>(r)];
        ready[static_cast<std::size_t>(i)] = b.add_qkv_gemm(r, tokens, prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
      }
      const auto attn = b.add_attention(gid, ready);
      for (int i = 0; i < c; ++i) {
        const int r = ranks[static_cast<std::size_t>(i)];
        std::vector<int> deps = attn[static_cast<std::size_t>(i)];
        deps.push_back(ready[static_cast<std::size_t>(i)]);
        const auto tokens = b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(gid)], i);
        last_op[static_cast<std::size_t>(r)] = b.add_output_gemms(r, tokens, deps, mb);
      }
    }
  }
  b.set_micro_batches(std::max(1, micro_batches));
  b.add_info("degree", c);
  b.add_info("groups", groups);
  b.add_info("packs", packs.size());
  b.add_info("pack_capacity_tokens", capacity);
  return b.finish();
}

}  // namespace zb
