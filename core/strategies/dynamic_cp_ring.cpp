#include "core/strategies/dynamic_cp_ring.hpp"

#include "core/strategies/packing.hpp"

namespace zb {

std::int64_t ring_share_tokens(std::int64_t s, int p) {
  return p == 1 ? s : pad_to(s, 2LL * p) / p;
}

plan::Level ring_level(int first, int size, int gpus_per_node) {
  if (size == 1) return plan::Level::local;
  return first / gpus_per_node == (first + size - 1) / gpus_per_node ? plan::Level::intra_node
                                                                     : plan::Level::inter_node;
}

void add_ring_layer(PlanBuilder& b, const std::vector<int>& ranks, std::vector<int> sequences, int mb,
                    std::vector<int>& last_op) {
  const int gid =
      b.add_group(ring_level(ranks.front(), static_cast<int>(ranks.size()), b.plan().gpus_per_node), ranks,
                  std::move(sequences), mb);
  const std::size_t p = ranks.size();
  std::vector<int> ready(p);
  std::vector<std::int64_t> tokens(p);
  for (std::size_t i = 0; i < p; ++i) {
    const int prev = last_op[static_cast<std::size_t>(ranks[i])];
    tokens[i] = b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(gid)], static_cast<int>(i));
    ready[i] =
        b.add_qkv_gemm(ranks[i], tokens[i], prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
  }
  const auto attn = b.add_attention(gid, ready);
  for (std::size_t i = 0; i < p; ++i) {
    std::vector<int> deps = attn[i];
    deps.push_back(ready[i]);
    last_op[static_cast<std::size_t>(ranks[i])] = b.add_output_gemms(ranks[i], tokens[i], deps, mb);
  }
}

}  // namespace zb
