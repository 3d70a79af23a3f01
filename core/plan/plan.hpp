#pragma once
// The Plan: what one strategy decided for one batch, and the contract every executor runs.
//
// A Plan holds
//   * the sequences of the batch (id = index, length);
//   * the attention layout: per rank, the token ranges it owns while attention runs, and the CP groups
//     (ranks, level, sharding) that own each sequence;
//   * the linear layout (token-balanced for Zeppelin, equal to the attention layout otherwise) and the
//     remap moves between the two;
//   * a per-rank op DAG for ONE transformer layer, forward pass, for every micro-batch in order.
//
// What a Plan promises (plan::verify checks all of it):
//   1. Coverage: every causal pair (q, k), 0 ≤ k ≤ q < length, of every sequence is computed by exactly
//      one attention block, on a rank that owns q in the attention layout of that block's micro-batch.
//   2. Data: every KV range an attention block reads is owned by the computing rank or arrives at it by a
//      recv op the block depends on (directly or transitively).
//   3. Matching: every send has exactly one recv on its peer with the same tag and bytes, and vice versa.
//   4. DAG: deps name earlier ops of the same rank (ids are indices into the rank's op list), so the list
//      order is a valid topological order.
//   5. Memory: when `oom` is empty, each rank's tokens per micro-batch fit the per-GPU token capacity.
//      A strategy that cannot fit a batch returns a Plan with `oom` filled and no ops; it never
//      overcommits silently.
//
// Executors never read a Plan's ops directly: core/lower turns it into a Program (core/lower/program.hpp)
// that fixes what every op means (payloads, relay legs of routed sends through the listed proxies,
// pairing, the backward pass) and the one execution order every executor follows.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/token_layout.hpp"

namespace zb::lower {
struct Program;  // core/lower/program.hpp
}  // namespace zb::lower

namespace zb::plan {

// Where tokens and heads are (core/common/token_layout.hpp): shared with the Program.
using layout::AttentionBlock;
using layout::CollectiveKind;
using layout::HeadRange;
using layout::Level;
using layout::Mask;
using layout::RemapDirection;
using layout::Sequence;
using layout::Shard;

enum class Sharding { whole, zigzag };
enum class OpKind { attention, send, recv, remap, gemm, collective };
// Collectives a plan may state directly (Llama-3 CP's K/V all-gather, tensor parallelism's all-gather and
// reduce-scatter, gradient all-reduce, an MoE layer's dispatch and combine). all_to_all is the uniform form
// (equal parts); all_to_all_v as a collective op is an MoE exchange (`peer_bytes`: each member's part); the
// remap is an all-to-all-v too but keeps its own op kind because it carries explicit moves.
enum class RouteKind { direct, routed };

struct RankLayout {
  int rank = 0;
  std::vector<Shard> shards;
  [[nodiscard]] std::int64_t tokens() const;
};

// A CP group: the ranks that together own some sequences. A group of one rank is a "local" group.
// With zigzag sharding over P ranks each sequence is cut into 2P chunks; ranks[i] holds chunks i and
// 2P−1−i. As in TransformerEngine's THD layout, the sequence is padded to a multiple of 2P at its end:
// with u = ⌈s/2P⌉, chunk c is [min(c·u, s), min((c+1)·u, s)), so the last chunks of a short sequence are
// short or empty (padding is never computed, it only shapes the chunks).
struct Group {
  int id = 0;
  Level level = Level::local;
  std::vector<int> ranks;
  std::vector<int> sequences;
  Sharding sharding = Sharding::whole;
  int micro_batch = 0;
};

// Route of a send. Direct: one flow src → peer. Routed (Zeppelin's routing layer): part i of the bytes
// goes src → proxies[i] (NVLink; none when proxies[i] == src), proxies[i] → peer_proxies[i] over the NIC
// of proxies[i] (rail-aligned: same local NIC index on the peer node), peer_proxies[i] → peer (NVLink),
// each part in `chunks` pieces so the three legs pipeline.
struct Route {
  RouteKind kind = RouteKind::direct;
  std::vector<int> proxies;
  std::vector<int> peer_proxies;
  std::vector<std::int64_t> part_bytes;  // sums to the send's bytes
  int chunks = 1;
};

// One token range moved between layouts: tokens [begin, end) of `seq` go from rank src to rank dst
// (direction to_linear; the to_attention remap moves the same ranges back).
struct RemapMove {
  int src = 0;
  int dst = 0;
  Shard range;
};

// One node of a rank's DAG. A flat record: the fields used depend on `kind`.
struct Op {
  int id = 0;
  OpKind kind = OpKind::attention;
  std::vector<int> deps;  // ids of earlier ops of the same rank
  int micro_batch = 0;
  std::string name;  // short kind label for traces: "attn", "kv", "qkv", "mlp_up", ... (group and
                     // step are separate fields, so names stay short and allocation-free)
  int group = -1;    // CP group (attention, send, recv)
  int step = -1;     // ring step (attention, send, recv)

  // attention: explicit blocks, or the zigzag ring form (zigzag_kv_rank ≥ 0): for every sequence of
  // `group`, the pairs between this rank's zigzag chunks (queries) and zigzag_kv_rank's chunks (keys).
  std::vector<AttentionBlock> blocks;
  int zigzag_kv_rank = -1;
  HeadRange heads;      // attention: the heads of the zigzag form; send/recv: the heads of the KV carried
  double pairs = 0;     // causal pairs computed (exact)
  double q_tokens = 0;  // query rows touched (sets kernel efficiency)
  int calls = 1;        // kernel calls (one per block; one varlen call per ring step)

  // send / recv: `peer` is the destination (send) or the source (recv); tags match a send to its recv.
  int peer = -1;
  int tag = -1;
  std::int64_t bytes = 0;
  Route route;        // sends only
  int kv_owner = -1;  // the rank whose zigzag KV chunks of `group` this transfer carries

  // remap: this rank's part of an all-to-all-v.
  RemapDirection direction = RemapDirection::to_linear;
  std::vector<RemapMove> moves;  // moves with src == rank or dst == rank
  std::int64_t bytes_out = 0;
  std::int64_t bytes_in = 0;

  // gemm: m×k times k×n.
  std::int64_t m = 0, n = 0, k = 0;

  // collective: every rank of `collective_ranks` (in that order; this rank among them) has one op with the
  // same kind, ranks and `tag`; `bytes`: all-gather and reduce-scatter, the shard this rank contributes or
  // ends with; all-reduce, the whole buffer; all-to-all, everything it sends.
  CollectiveKind collective = CollectiveKind::all_gather;
  std::vector<int> collective_ranks;
  // all_to_all_v (an MoE dispatch or combine, core/strategies/moe_layer.hpp): the bytes this rank sends to
  // each member of collective_ranks, in that order (0 to itself); `bytes` is their sum.
  std::vector<std::int64_t> peer_bytes;
};

struct RankOps {
  int rank = 0;
  std::vector<Op> ops;
};

struct OomReport {
  int rank = 0;
  int micro_batch = 0;
  std::int64_t tokens_needed = 0;
  std::int64_t token_capacity = 0;
  [[nodiscard]] std::string str() const;
};

struct RankPrediction {
  double attention_flops = 0;  // forward, per layer
  std::int64_t tokens = 0;     // linear layout, all micro-batches
  double seconds = 0;          // predicted forward layer time of this rank
};

struct Prediction {
  double iteration_seconds = 0;  // the planner's estimate of a whole iteration (all layers, passes)
  std::vector<RankPrediction> per_rank;
};

struct Plan {
  std::string system;    // label
  std::string strategy;  // strategy name
  int world_size = 0;
  int gpus_per_node = 0;
  // Tensor parallelism: each entry is one TP group (ranks of one node that split every GEMM and the
  // attention heads); empty = no tensor parallelism (every rank is its own group of one).
  std::vector<std::vector<int>> tensor_parallel_groups;
  int micro_batches = 1;
  std::vector<Sequence> sequences;
  std::vector<Group> groups;
  std::vector<RankLayout> attention_layout;  // index = rank, all micro-batches
  std::vector<RankLayout> linear_layout;
  std::vector<RemapMove> remap;  // attention → linear
  std::vector<RankOps> ranks;    // index = rank
  Prediction predicted;
  double planner_seconds = 0;
  std::vector<OomReport> oom;                      // non-empty = infeasible
  nlohmann::json info = nlohmann::json::object();  // strategy-specific facts (thresholds, degree, ...)
  // The Program the prediction lowered (core/strategies/predict.hpp), kept so that a run executes that
  // lowering instead of lowering the plan again. Null when the plan was read from a file or edited after
  // its prediction, does not fit, or was predicted under a planner error (executors charge exact costs).
  // Not part of the plan's JSON. Mutable for one owner only: the run resizes an MoE plan's Program with
  // the router's choices (lower::resize, core/lower/resize.hpp) instead of lowering the plan again.
  std::shared_ptr<lower::Program> lowered;

  [[nodiscard]] bool feasible() const { return oom.empty(); }
  [[nodiscard]] const Group& group_of_sequence(int seq) const;
  // Each rank's tensor-parallel width: the size of its TP group, 1 outside any.
  [[nodiscard]] std::vector<int> tensor_parallel_width_per_rank() const;
  // Each rank's tokens in the linear layout (all micro-batches).
  [[nodiscard]] std::vector<double> linear_tokens_per_rank() const;
};

// --- helpers shared by strategies, executors and verify --------------------------------------------

// Chunk c of 2P zigzag chunks of a sequence of length s.
[[nodiscard]] Shard zigzag_chunk(int seq, std::int64_t length, int parts, int chunk);
// The two zigzag chunks of group position `pos` of P (chunk pos and 2P−1−pos); empty chunks included.
[[nodiscard]] std::pair<Shard, Shard> zigzag_shards(int seq, std::int64_t length, int parts, int pos);
// The shards group position `pos` of `parts` ranks owns of one sequence: the whole sequence for a group of
// one, otherwise its non-empty zigzag chunks.
[[nodiscard]] std::vector<Shard> owned_shards(int seq, std::int64_t length, int parts, int pos);
// Explicit blocks of a zigzag ring attention op: the pairs between the query chunks of `q_pos` and the
// key chunks of `kv_pos` for one sequence (blocks with no causal pairs are omitted).
[[nodiscard]] std::vector<AttentionBlock> zigzag_blocks(int seq, std::int64_t length, int parts, int q_pos,
                                                        int kv_pos);
// The position of `rank` in the group's ranks, or −1 when it is not a member.
[[nodiscard]] int position_in(const Group& g, int rank);
// Every block an attention op computes, expanded (explicit blocks, or the zigzag form for each sequence).
[[nodiscard]] std::vector<AttentionBlock> expand_blocks(const Plan& plan, int rank, const Op& op);

[[nodiscard]] const char* to_string(Level v);
[[nodiscard]] const char* to_string(Mask v);
[[nodiscard]] const char* to_string(Sharding v);
[[nodiscard]] const char* to_string(OpKind v);
[[nodiscard]] const char* to_string(RouteKind v);
[[nodiscard]] const char* to_string(RemapDirection v);
using layout::to_string;  // CollectiveKind

// The tokens whose embedding and LM head each rank pays for, as the whole-iteration model charges them with
// the parts split `setup_tensor` ways: a rank of a TP group of width w splits them w ways, so its linear
// tokens count setup_tensor / w times (1 under uniform TP; 1/w for Hydraulis's replicas of width w).
[[nodiscard]] std::vector<double> whole_iteration_tokens_per_rank(const Plan& plan, int setup_tensor);

}  // namespace zb::plan
