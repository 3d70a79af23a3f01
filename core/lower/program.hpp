#pragma once
// The Program: a Plan lowered to what every executor runs. One lowering (core/lower/lower.cpp) derives,
// once, everything an executor used to work out for itself: the backward pass, which instruction sends
// which bytes to whom, the relay legs of routed sends, the pairing of every send with its recv, the
// remap exchange, and when a received buffer may be freed. The simulator, the reference executor and
// the planner's estimate (core/lower/estimate.hpp) walk these instructions and nothing else.
//
// Shape. Per rank, one ordered list of instructions for one representative layer: every forward
// instruction first, then every backward one (`first_backward`). An instruction has
//   * a kind (attention, gemm, send, recv, collective, wait) and a stream (compute, comm, relay);
//   * explicit dependencies: ids of earlier instructions of the same rank (ids are list indices);
//   * for transfers, the message it belongs to (what is carried: tensor, sequence, token range, heads),
//     the byte fragment of that message this leg moves, and its counterpart on the peer (`match`, and a
//     `key` unique per (src, dst) pair, the tag NCCL-style matching would use).
//
// What a Program promises (lower::verify checks all of it):
//   1. Dependencies name earlier instructions of the same rank; backward instructions depend only on
//      instructions of their pass (the barrier below orders the passes).
//   2. Every send has exactly one recv on its peer with the same message, fragment and key, and vice
//      versa (`match` points at it); keys are unique per ordered (src, dst) pair.
//   3. Every collective instruction's members each hold exactly one instruction of it.
//   4. Rendezvous safety: with no send buffering at all (a send completes only once its recv is posted,
//      as with NCCL), the program cannot deadlock under the execution rules below.
//
// Execution rules every executor follows (and may assume):
//   * the compute stream of a rank runs its compute instructions one at a time in strict list order, each
//     once its deps are done (as a CUDA stream would), never reordered;
//   * comm and relay instructions have no stream order: each starts (is posted) once its deps are done;
//   * a wait completes as soon as it is posted;
//   * a send and its recv complete together, when both are posted and the bytes have moved;
//   * a transfer of `chunks` > 1 moves its fragment as that many equal sub-pieces, one after the other
//     (chunk c is bytes [offset + bytes·c/chunks, offset + bytes·(c+1)/chunks)); a relay send with
//     `stream_from` forwards the chunks of that recv as they arrive: it is posted once the recv's first
//     chunk has arrived, and chunk c leaves once chunk c has arrived and chunk c−1 has left. An executor
//     that does not pipeline may instead wait for the whole recv (it is in `deps` too): that changes
//     time, never what completes, so rendezvous safety holds either way;
//   * a collective starts once every member has posted its instruction and completes for all at once;
//     all_to_all_v is its messages, each moving once its sender and its receiver have posted. The
//     messages of other collectives say which rows they carry (a K/V all-gather, its re-gather and its
//     reduce-scatter); their time is the collective's (a ring of `bytes` steps), not the messages';
//   * the backward pass starts once every forward instruction of every rank is done (a layer barrier:
//     the trace's time axis puts one representative layer of each pass one after the other);
//   * a received message's buffer may be freed once every instruction listing it in `reads` is done.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/lower/id_list.hpp"

namespace zb {

enum class Pass : std::uint8_t { fwd, bwd };
[[nodiscard]] const char* to_string(Pass p);

}  // namespace zb

namespace zb::lower {

// wait: no work, done once its deps are (an event join, as cudaStreamWaitEvent): it stands for a
// transfer cut into many pieces, or the end of a CP group's backward, so consumers wait on one id.
enum class InstrKind : std::uint8_t { attention, gemm, send, recv, collective, wait };
// compute: attention and GEMMs, strict list order. comm: this rank's own transfers. relay: legs a rank
// carries for others (routing proxies).
enum class Stream : std::uint8_t { compute, comm, relay };
// What rows a message carries. O is the attention output (the hidden rows the to_linear remap moves);
// dO its gradient; dQ/dK/dV the attention gradients; hidden and grad are GEMM-side rows.
enum class Tensor : std::uint8_t { Q, K, V, O, dQ, dK, dV, dO, hidden, grad };
// Why a message exists, for traces and executors that treat KV rings specially (e.g. reusable buffers).
// expert: an MoE dispatch or combine part, token rows counted in bytes (no slices: which tokens go where
// is the router's, not the plan's).
enum class Purpose : std::uint8_t { kv, dkv, remap, expert };
using layout::CollectiveKind;  // shared with the plan (core/common/token_layout.hpp)
// Which GEMM of a forward GEMM: the forward product, its data gradient (dX = dY·Wᵀ) or its weight
// gradient (dW = Xᵀ·dY).
enum class GemmPart : std::uint8_t { forward, data_grad, weight_grad };
// A transfer leg's role in the routing layer: the only leg of a direct message, or, for a routed one,
// the NVLink leg to the proxy, the leg that crosses nodes on the proxy's NIC, or the NVLink leg after it.
enum class LegRole : std::uint8_t { direct, dispatch, nic, combine };

// Rows [begin, end) of one sequence's `tensor`, for heads `heads` (query heads; K/V heads by GQA).
struct Slice {
  Tensor tensor = Tensor::K;
  int seq = 0;
  std::int64_t begin = 0, end = 0;
  layout::HeadRange heads;
  [[nodiscard]] std::int64_t rows() const { return end - begin; }
};

// A message's slices, shared and immutable: every hop of a ring carries the same owner's K/V, so those
// messages share one list instead of each holding a copy (a 128-GPU plan would otherwise hold millions).
class SliceList {
 public:
  SliceList() = default;
  explicit SliceList(std::vector<Slice> slices)
      : list_(std::make_shared<const std::vector<Slice>>(std::move(slices))) {}
  [[nodiscard]] const Slice* begin() const { return list_ ? list_->data() : nullptr; }
  [[nodiscard]] const Slice* end() const { return list_ ? list_->data() + list_->size() : nullptr; }
  [[nodiscard]] std::size_t size() const { return list_ ? list_->size() : 0; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] const Slice& operator[](std::size_t i) const { return (*list_)[i]; }
  [[nodiscard]] const Slice& front() const { return list_->front(); }
  [[nodiscard]] std::vector<Slice> copy() const { return list_ ? *list_ : std::vector<Slice>{}; }

 private:
  std::shared_ptr<const std::vector<Slice>> list_;
};

// One logical transfer from `src` to `dst` (its legs may pass through relays), or one member's part of a
// collective (its messages). `bytes` is what the cost model says it weighs on the wire (bf16 rows).
struct Message {
  Pass pass = Pass::fwd;
  Purpose purpose = Purpose::kv;
  int src = -1, dst = -1;
  int group = -1, step = -1, micro_batch = 0;
  int kv_owner = -1;  // kv / dkv: the rank whose K/V (or whose dK/dV accumulator) this is
  SliceList slices;
  std::int64_t bytes = 0;
  int collective = -1;    // the collective it travels inside (no legs); −1 = its own legs
  bool routed = false;    // its inter-node leg goes through proxies over several NICs
  int plan_op = -1;       // the plan send op on src it lowers (forward KV); −1 when derived
  int readers = 0;        // instructions on dst listing it in `reads`
  std::int64_t rows = 0;  // expert: the hidden rows it carries (bytes = rows × one hidden row)
};

struct Collective {
  CollectiveKind kind = CollectiveKind::all_to_all_v;
  Pass pass = Pass::fwd;
  int micro_batch = 0;
  std::vector<int> ranks;   // members, in order
  std::vector<int> instrs;  // the member's instruction id, parallel to ranks
  // Per member: all_gather and reduce_scatter, the shard it contributes or ends with (so an all-gather
  // and its adjoint weigh the same); all_reduce, the buffer; all_to_all, everything it sends.
  std::int64_t bytes = 0;
  // The rows it moves, one message per (sender, receiver) pair: all_to_all_v, the rows that change owner;
  // a K/V all-gather (`group` ≥ 0), each member's K|V rows of the group to every other member; its
  // reduce-scatter, each member's partial dK|dV of the receiver's rows. None: an opaque collective (tensor
  // parallelism's hidden states): nothing an executor moves on real rows.
  std::vector<int> messages;
  int group = -1;  // all_gather / reduce_scatter: the CP group whose K/V it gathers; −1 = opaque
  // all_to_all_v: an MoE dispatch or combine (its messages are Purpose::expert byte counts), not a remap.
  bool expert_exchange = false;
  layout::RemapDirection direction = layout::RemapDirection::to_linear;  // remaps: the plan's direction
};

struct Instr {
  // The fields every executor and the scheduler touch for every instruction come first, within one
  // cache line: a 1024-GPU program has a few hundred thousand instructions.
  InstrKind kind = InstrKind::attention;
  Stream stream = Stream::compute;
  Pass pass = Pass::fwd;
  bool last_leg = false;          // recv: this leg delivers to the message's final destination
  LegRole leg = LegRole::direct;  // send / recv: its role in the routing layer
  int peer = -1;                  // send: the leg's destination; recv: the leg's source
  int match = -1;                 // send / recv: the counterpart's instruction id on `peer`
  int message = -1;               // send / recv: index into Program::messages
  int collective = -1;            // collective: index into Program::collectives
  std::int64_t bytes = 0;         // send / recv: the fragment of the message this leg moves (with `offset`)
  int chunks = 1;        // send / recv: pipelined sub-pieces of the fragment (the routing layer's chunks)
  int stream_from = -1;  // relay send: the relay recv (in deps) whose chunks it forwards as they arrive
  double seconds = 0;  // compute: duration under the cost model (what the simulator and the estimate charge)
  IdList deps;

  int micro_batch = 0;
  int group = -1, step = -1;
  int plan_op = -1;  // the plan op of this rank it lowers (backward: derives from); −1 for relay legs
  std::string name;  // trace label: "attn", "attn bwd", "kv", "dkv", "qkv dgrad", ...

  // compute
  double flops = 0;
  double pairs = 0;   // attention: causal pairs (the plan op's)
  int kv_owner = -1;  // attention: whose K/V it reads (zigzag ring step), −1 = explicit blocks
  // attention: the heads of the zigzag form, and the explicit blocks (Program::blocks[first_block ...
  // first_block + block_count)); attention_blocks() expands either form.
  layout::HeadRange heads;
  int first_block = -1, block_count = 0;
  GemmPart gemm_part = GemmPart::forward;
  std::int64_t m = 0, n = 0, k = 0;

  // send / recv (also the legs of a routed message)
  std::int64_t offset = 0;  // where this leg's fragment starts in the message
  std::uint64_t key = 0;    // unique per ordered (src, dst) pair

  // Messages this instruction reads from buffers received earlier (attention: the K/V it computes with;
  // a send that forwards K/V around a ring: what it forwards).
  IdList reads;
};

struct RankProgram {
  int rank = 0;
  std::vector<Instr> instrs;
  int first_backward = 0;  // index of the first backward instruction (= size when forward only)
};

// A CP group as executors see it: its members (ring positions in order), its sequences, its class.
struct Group {
  std::vector<int> ranks;
  std::vector<int> sequences;
  layout::Level level = layout::Level::local;
};

// A Program stands on its own: besides the instructions it holds what executors need of the plan it
// lowers (copied once by the lowering), so that no executor reads a Plan.
struct Program {
  std::string system;    // the plan's system label
  std::string strategy;  // the plan's strategy name
  int world_size = 0;
  int gpus_per_node = 0;
  bool backward = false;
  // Every message lists its slices. false: lowered for timing (LowerOptions::rows off), every message's
  // slices empty; an executor that reads rows is given the plan lowered again (core/run/execute.hpp).
  bool rows = true;
  std::vector<RankProgram> ranks;
  std::vector<Message> messages;
  std::vector<Collective> collectives;

  std::vector<layout::Sequence> sequences;  // id = index
  std::vector<Group> groups;                // id = index (the plan's group ids)
  // Per rank: the token ranges it owns in the linear modules (the rows the layer's output ends on).
  std::vector<std::vector<layout::Shard>> linear_layout;
  // Tensor parallelism's groups of GPUs (empty without TP).
  std::vector<std::vector<int>> tensor_parallel_groups;
  std::vector<layout::AttentionBlock> blocks;  // the explicit blocks of attention instructions

  [[nodiscard]] const Instr& instr(int rank, int id) const {
    return ranks[static_cast<std::size_t>(rank)].instrs[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] std::size_t instruction_count() const;
};

[[nodiscard]] bool is_compute(const Instr& instr);
// The blocks attention instruction `instr` of `rank` computes (forward or backward): its explicit blocks,
// or for a zigzag ring step the pairs between the rank's zigzag chunks and its K/V owner's, for every
// sequence of its group (empty when either is not a member: lower::verify reports that).
[[nodiscard]] std::vector<layout::AttentionBlock> attention_blocks(const Program& program, int rank,
                                                                   const Instr& instr);
[[nodiscard]] const char* to_string(InstrKind k);
[[nodiscard]] const char* to_string(Stream s);
[[nodiscard]] const char* to_string(Tensor t);
[[nodiscard]] const char* to_string(Purpose p);
using layout::to_string;  // CollectiveKind
[[nodiscard]] const char* to_string(LegRole r);
// "rank 3 instr 17 (recv kv, group 2 step 1, fwd)": how every error names an instruction.
[[nodiscard]] std::string describe(const Program& program, int rank, int id);

}  // namespace zb::lower
