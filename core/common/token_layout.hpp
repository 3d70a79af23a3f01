#pragma once
// The vocabulary of where tokens and heads are: the words a Plan decides in and a Program still speaks,
// defined below both so that executors (core/exec) read a Program without any header of core/plan.
// core/plan/plan.hpp names them plan::Shard, plan::HeadRange, ... (the same types).
#include <cstdint>

namespace zb::layout {

// Which class of CP group a sequence runs in: one GPU, the GPUs of one node, GPUs of several nodes.
enum class Level { local, intra_node, inter_node };
enum class Mask { causal, full };
enum class RemapDirection { to_attention, to_linear };
// A collective's operation. A plan names the first four; the lowering turns an all-to-all whose peers
// exchange different byte counts into all_to_all_v (a plan file cannot name it).
enum class CollectiveKind : std::uint8_t { all_gather, reduce_scatter, all_reduce, all_to_all, all_to_all_v };

[[nodiscard]] constexpr const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_gather:
      return "all_gather";
    case CollectiveKind::reduce_scatter:
      return "reduce_scatter";
    case CollectiveKind::all_reduce:
      return "all_reduce";
    case CollectiveKind::all_to_all:
      return "all_to_all";
    case CollectiveKind::all_to_all_v:
      return "all_to_all_v";
  }
  return "?";
}

struct Sequence {
  int id = 0;
  std::int64_t length = 0;
  int micro_batch = 0;
};

// A token range [begin, end) of one sequence.
struct Shard {
  int seq = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
};

// A range of query heads [begin, end); end = −1 means "every head" (the default: context parallelism
// splits tokens, not heads). Head-parallel attention (Ulysses) gives each rank a slice; the K/V heads a
// slice reads follow from GQA (kv head = q head / (heads / kv_heads)).
struct HeadRange {
  int begin = 0;
  int end = -1;
  [[nodiscard]] bool all() const { return begin == 0 && end < 0; }
  [[nodiscard]] int count(int heads) const { return (end < 0 ? heads : end) - begin; }
  // The fraction of a model's `heads` this range computes: what an attention op's FLOPs are scaled by
  // (tensor and head parallelism split the heads; pairs count positions, not heads).
  [[nodiscard]] double share(int heads) const {
    return all() || heads <= 0 ? 1.0 : static_cast<double>(count(heads)) / heads;
  }
  friend bool operator==(const HeadRange&, const HeadRange&) = default;
};

// Queries [q0, q1) of sequence `seq` against its keys [k0, k1), for `heads`.
struct AttentionBlock {
  int seq = 0;
  std::int64_t q0 = 0, q1 = 0;
  std::int64_t k0 = 0, k1 = 0;
  Mask mask = Mask::causal;
  HeadRange heads;
};

}  // namespace zb::layout
