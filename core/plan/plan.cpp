#include "core/plan/plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace zb::plan {

std::int64_t RankLayout::tokens() const {
  std::int64_t total = 0;
  for (const auto& s : shards) total += s.size();
  return total;
}

std::string OomReport::str() const {
  return "rank " + std::to_string(rank) + " needs " + std::to_string(tokens_needed) +
         " tokens in micro-batch " + std::to_string(micro_batch) + " but holds at most " +
         std::to_string(token_capacity) + " (short by " + std::to_string(tokens_needed - token_capacity) +
         ")";
}

std::vector<int> Plan::tensor_parallel_width_per_rank() const {
  std::vector<int> width(static_cast<std::size_t>(std::max(0, world_size)), 1);
  for (const std::vector<int>& group : tensor_parallel_groups) {
    for (const int r : group) {
      if (r >= 0 && r < world_size) width[static_cast<std::size_t>(r)] = static_cast<int>(group.size());
    }
  }
  return width;
}

std::vector<double> Plan::linear_tokens_per_rank() const {
  std::vector<double> tokens(static_cast<std::size_t>(std::max(0, world_size)), 0.0);
  for (const RankLayout& l : linear_layout) {
    if (l.rank >= 0 && l.rank < world_size)
      tokens[static_cast<std::size_t>(l.rank)] += static_cast<double>(l.tokens());
  }
  return tokens;
}

std::vector<double> whole_iteration_tokens_per_rank(const Plan& plan, int setup_tensor) {
  std::vector<double> tokens = plan.linear_tokens_per_rank();
  const std::vector<int> width = plan.tensor_parallel_width_per_rank();
  for (std::size_t r = 0; r < tokens.size(); ++r) tokens[r] *= static_cast<double>(setup_tensor) / width[r];
  return tokens;
}

const Group& Plan::group_of_sequence(int seq) const {
  for (const auto& g : groups) {
    if (std::find(g.sequences.begin(), g.sequences.end(), seq) != g.sequences.end()) return g;
  }
  throw std::out_of_range("sequence " + std::to_string(seq) + " belongs to no group");
}

Shard zigzag_chunk(int seq, std::int64_t length, int parts, int chunk) {
  const std::int64_t n = 2LL * parts;
  const std::int64_t u = (length + n - 1) / n;  // padded chunk size
  return Shard{seq, std::min(chunk * u, length), std::min((chunk + 1) * u, length)};
}

std::pair<Shard, Shard> zigzag_shards(int seq, std::int64_t length, int parts, int pos) {
  return {zigzag_chunk(seq, length, parts, pos), zigzag_chunk(seq, length, parts, 2 * parts - 1 - pos)};
}

std::vector<Shard> owned_shards(int seq, std::int64_t length, int parts, int pos) {
  if (parts == 1) return {Shard{seq, 0, length}};
  const auto [a, b] = zigzag_shards(seq, length, parts, pos);
  std::vector<Shard> out;
  if (a.size() > 0) out.push_back(a);
  if (b.size() > 0) out.push_back(b);
  return out;
}

std::vector<AttentionBlock> zigzag_blocks(int seq, std::int64_t length, int parts, int q_pos, int kv_pos) {
  std::vector<AttentionBlock> out;
  const auto [qa, qb] = zigzag_shards(seq, length, parts, q_pos);
  const auto [ka, kb] = zigzag_shards(seq, length, parts, kv_pos);
  for (const Shard& q : {qa, qb}) {
    if (q.size() == 0) continue;
    for (const Shard& k : {ka, kb}) {
      if (k.size() == 0) continue;
      if (k.begin == q.begin) {
        out.push_back({seq, q.begin, q.end, k.begin, k.end, Mask::causal, {}});
      } else if (k.end <= q.begin) {
        out.push_back({seq, q.begin, q.end, k.begin, k.end, Mask::full, {}});
      }
      // k entirely after q: no causal pair.
    }
  }
  return out;
}

int position_in(const Group& g, int rank) {
  const auto it = std::find(g.ranks.begin(), g.ranks.end(), rank);
  if (it == g.ranks.end()) return -1;
  return static_cast<int>(it - g.ranks.begin());
}

std::vector<AttentionBlock> expand_blocks(const Plan& plan, int rank, const Op& op) {
  if (op.zigzag_kv_rank < 0) return op.blocks;
  const Group& g = plan.groups.at(static_cast<std::size_t>(op.group));
  const int parts = static_cast<int>(g.ranks.size());
  const int q_pos = position_in(g, rank);
  const int kv_pos = position_in(g, op.zigzag_kv_rank);
  std::vector<AttentionBlock> out;
  if (q_pos < 0 || kv_pos < 0) return out;  // verify reports this
  for (int seq : g.sequences) {
    const auto blocks =
        zigzag_blocks(seq, plan.sequences.at(static_cast<std::size_t>(seq)).length, parts, q_pos, kv_pos);
    out.insert(out.end(), blocks.begin(), blocks.end());
  }
  return out;
}

const char* to_string(Level v) {
  switch (v) {
    case Level::local:
      return "local";
    case Level::intra_node:
      return "intra-node";
    case Level::inter_node:
      return "inter-node";
  }
  return "?";
}
const char* to_string(Mask v) {
  return v == Mask::causal ? "causal" : "full";
}
const char* to_string(Sharding v) {
  return v == Sharding::whole ? "whole" : "zigzag";
}
const char* to_string(OpKind v) {
  switch (v) {
    case OpKind::attention:
      return "attention";
    case OpKind::send:
      return "send";
    case OpKind::recv:
      return "recv";
    case OpKind::remap:
      return "remap";
    case OpKind::gemm:
      return "gemm";
    case OpKind::collective:
      return "collective";
  }
  return "?";
}
const char* to_string(RouteKind v) {
  return v == RouteKind::direct ? "direct" : "routed";
}
const char* to_string(RemapDirection v) {
  return v == RemapDirection::to_attention ? "to_attention" : "to_linear";
}

}  // namespace zb::plan
