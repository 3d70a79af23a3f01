#pragma once
// The Lowerer: internal state of one lower() call, split over three files by job:
//   lower_messages.cpp  what each transfer carries and how its bytes travel (pieces, hops, legs, matching);
//   lower_forward.cpp   the plan's forward ops, one by one, in each rank's list order;
//   lower_backward.cpp  the backward pass derived from the forward ops (rings, remaps, GEMMs, collectives);
//   lower_kv_gather.cpp what a K/V all-gather (Llama-3 CP) moves, its backward re-gather and reduce-scatter;
//   lower_head_all_to_all.cpp what a head all-to-all (Ulysses, USP) moves.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/lower/lower.hpp"

namespace zb::lower::detail {

// One hop of one piece: the send instruction on hops[i] and the recv on hops[i + 1].
struct Leg {
  int src = -1, dst = -1;
  int send = -1, recv = -1;
};

// One piece of a message: a byte range that travels along `hops` (src, optional proxy, optional peer
// proxy, dst) in `chunks` pipelined sub-pieces, and the leg of each hop. A direct message is one piece
// with two hops.
struct Piece {
  int part = 0;
  std::int64_t offset = 0, bytes = 0;
  int chunks = 1;
  std::array<int, 4> hops{};
  int hop_count = 0;
  std::array<Leg, 3> legs{};  // [hop], hop_count − 1 of them
};

// A message's pieces: [first, first + count) of Lowerer::pieces_ (one flat list: a 1024-GPU program has
// tens of thousands of messages, and a vector each was most of the lowering's allocations).
struct MessageRoute {
  int first = 0, count = 0;
};

class Lowerer {
 public:
  Lowerer(const plan::Plan& plan, const CostModel& cost, const LowerOptions& options);
  Program run();

 private:
  // --- messages (lower_messages.cpp) ---------------------------------------------------------------
  void pair_transfers();
  int add_message(Message m, const plan::Route& route);
  // The K|V (or dK|dV) rows `owner` holds of `group`, cached: each ring hop shares its owner's list.
  SliceList owner_slices(int group, int owner, Tensor first, Tensor second, const plan::HeadRange& heads);
  // The sends of the message's first legs on its source; each lists `reads` (a forwarded buffer).
  IdList emit_first_legs(int message, const IdList& deps, const std::string& name, int plan_op,
                         const IdList& reads = {});
  IdList emit_last_legs(int message, const IdList& deps, const std::string& name, int plan_op);
  // joined() for the legs of message `m` on `rank`: the wait, when there is one, is named as the transfer.
  IdList joined_legs(int rank, IdList&& ids, const Message& m, const std::string& name, int plan_op);
  void emit_relays(Pass pass);
  // A send (on hops[leg]) or recv (on hops[leg + 1]) of leg `leg` of a message's piece: peer, fragment, role.
  void fill_leg(Instr& in, int message, const Piece& piece, int leg, InstrKind kind, Stream stream,
                const std::string& name, int plan_op) const;
  [[nodiscard]] Piece* pieces_of(int message) {
    return pieces_.data() + routes_[static_cast<std::size_t>(message)].first;
  }
  [[nodiscard]] int piece_count(int message) const {
    return routes_[static_cast<std::size_t>(message)].count;
  }
  void assign_matches();
  [[noreturn]] void fail(int rank, int op, const std::string& what) const;

  // --- forward (lower_forward.cpp) -----------------------------------------------------------------
  void lower_forward(int rank);
  int kv_message_into(int rank, int group, int owner) const;  // forward KV message arriving at rank; −1
  void build_collectives();
  // An MoE dispatch or combine's messages, from each member's op (`member_ops`, in the collective's order).
  void build_expert_exchange(int collective, const std::vector<int>& member_ops);
  IdList done_of(int rank, const std::vector<int>& plan_deps) const;

  // --- K/V all-gathers (lower_kv_gather.cpp) -------------------------------------------------------
  void build_kv_gathers();
  // The backward collectives of forward K/V all-gather `c`: its reduce-scatter (`adjoint`, already pushed
  // without messages) gets the dK|dV messages; returns the re-gather collective it adds.
  int build_kv_gather_backward(int c, int adjoint);
  // The messages of `collective` whose destination is `rank` (empty for one without messages).
  [[nodiscard]] const std::vector<int>& messages_into(int collective, int rank) const;
  // Whether forward collective `collective` is a K/V all-gather (an all_gather that names a CP group).
  [[nodiscard]] bool is_kv_gather(int collective) const;
  // The forward collective of plan op `op` of `rank` when that op is a K/V all-gather; −1 otherwise.
  [[nodiscard]] int kv_gather_of(int rank, int op) const;
  // This rank's instruction of the backward re-gather of forward K/V all-gather `c`, emitted (after
  // `entry`) the first time it is asked for.
  int regather_instr(int rank, int c, const IdList& entry);

  // --- head all-to-alls (lower_head_all_to_all.cpp) ------------------------------------------------
  void build_head_all_to_alls();
  [[nodiscard]] plan::HeadRange member_heads(int rank, const Collective& col, int collective) const;
  [[nodiscard]] std::vector<plan::Shard> member_tokens(int rank, const Collective& col) const;

  // --- backward (lower_backward.cpp) ---------------------------------------------------------------
  void build_backward_messages();
  void lower_backward(int rank);
  // `before(op)`, when given, is called before the backward of each of the ring's forward attention ops
  // (and once with INT_MAX after the last): the caller emits there what the forward ran before that op.
  void lower_ring_backward(int rank, const IdList& ops, const IdList& entry, IdList& done,
                           const std::function<void(int forward_op)>& before = {});
  // The backward instruction of a forward attention op, all but its deps and reads.
  // `rank`'s forward instruction of `plan_op` gives its heads and blocks.
  [[nodiscard]] Instr backward_attention(int rank, const plan::Op& op, int plan_op);
  // A call of a local group over what the rank holds (no recv or K/V all-gather feeds it).
  [[nodiscard]] bool is_local_call(int rank, int op) const;

  int emit(int rank, Instr&& in);
  // In place: append() adds a default instruction to `rank`'s list for the caller to fill (the reference
  // holds until the next append on that rank); appended() then counts its reads and returns its id.
  Instr& append(int rank);
  int appended(int rank);
  // One id for `ids`: itself when there is one, otherwise a wait on all of them.
  IdList joined(int rank, IdList ids, Instr&& like);
  IdList& ids_of(int rank, int op) {
    return fwd_ids_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(op)];
  }

  const plan::Plan& plan_;
  const CostModel& cost_;
  LowerOptions options_;
  Program prog_;
  std::vector<MessageRoute> routes_;                // per message
  std::vector<Piece> pieces_;                       // every message's pieces, message by message
  std::vector<std::vector<int>> transfer_message_;  // [rank][op] → forward message of a plan send/recv, −1
  std::vector<std::vector<IdList>> fwd_ids_;        // [rank][op] → forward instruction ids
  std::map<std::tuple<int, int, int>, int> kv_in_;  // (dst, group, owner) → forward KV message
  std::vector<std::vector<int>> op_collective_;  // [rank][op] → forward collective of a remap/collective op
  // backward tables, by forward message id
  std::vector<int> bwd_kv_, dkv_;
  std::map<std::tuple<int, int, int>, int> dkv_return_;  // (chain end, group, owner) → final dK/dV message
  std::map<std::tuple<int, int, int>, int> dkv_home_;    // (owner, group, chain end) → the same message
  std::vector<int> bwd_collective_;                      // by forward collective id
  std::vector<int> regather_;  // by forward collective id: its backward re-gather, −1
  std::map<std::pair<int, int>, std::vector<int>> messages_into_;  // (collective, dst) → its messages to dst
  std::map<std::pair<int, int>, int> regather_instr_;  // (rank, forward collective) → re-gather instruction
  std::map<std::tuple<int, int, int, int, int>, SliceList> owner_slices_;  // (group, owner, tensor, heads)
  // lower_ring_backward's tables, kept between calls and left empty by each: by forward op of the rank,
  // and by owner rank (sized to the world in the constructor); `owners` lists the entries a call set.
  struct RingScratch {
    std::vector<IdList> bwd_ids;
    std::vector<int> attention_of_owner, dkv_message_in;
    std::vector<IdList> dkv_in;
    std::vector<int> owners;
  } ring_;
};

}  // namespace zb::lower::detail
