#pragma once
// The global order of a Program's communication, for NCCL. NCCL's point-to-point calls are rendezvous
// calls issued on a stream: a rank that issues send(A → 1) and then recv(B ← 1) on one comm stream
// blocks on A until rank 1 posts the recv of A, so two ranks that each send first deadlock although
// the Program (whose comm instructions have no stream order) is rendezvous-safe. The cuda backend
// therefore never issues a rank's comm instructions in list order. It derives, once per Program, ONE
// global sequence of communication steps that every rank follows:
//
//   * a node per compute or wait instruction, ONE node per transfer (a send and its matching recv,
//     the event that completes both) and ONE node per collective (every member's instruction);
//   * edges: every instruction's deps, and the compute stream's list order (strict, as a CUDA stream);
//   * a topological order of each pass (the backward pass after the forward: the layer barrier), taking
//     among the ready nodes the earliest by the shared schedule's start times (core/lower/schedule.hpp),
//     ties broken by (src, dst, key) so every rank derives the same order from the same Program;
//   * a transfer is fused with every other ready transfer of the same ring step (micro-batch, purpose,
//     CP group, step): one ncclGroupStart/End whose ops NCCL progresses together, so a ring step's sends
//     and recvs run concurrently instead of one after the other. A collective is a step of its own.
//
// Communicators. The inter-node hop of a routed message between the same local rank on two nodes goes
// on that local rank's rail communicator (ncclCommSplit(world, color = local rank, key = node)); every
// other transfer, and the all-to-alls, on the world communicator; the NCCL collectives on their members'.
// Fusion keys on the communicator too, so a step's calls are one communicator's: a group spanning two
// could launch one kernel per communicator, in an order that need not agree between two ranks. Since both
// ends of every transfer post it in the same step, the calls between two ranks on one communicator are
// posted in one order on both ends, as NCCL matches them.
//
// Each rank issues, in that order, its share of every step (its sends and recvs of a fused step, its
// call of a collective) on its one comm stream, and its compute instructions on its compute stream, in
// an interleaving (`issue`) where everything an item waits for was enqueued before it, so each
// cross-stream dependency is one cudaEvent recorded before the cudaStreamWaitEvent that waits on it.
// Why no rank can block forever (docs/CUDA_BACKEND.md has the proof): the first step not yet complete
// has every predecessor complete (by induction over the topological order), so each of its members
// has reached it on its comm stream with every dependency done, and NCCL completes a group whose
// matching calls are all posted. This file needs no CUDA: it builds and is tested everywhere.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/lower/program.hpp"
#include "core/lower/schedule.hpp"

namespace zb::cuda {

enum class CallKind : std::uint8_t { send, recv, collective };

// One NCCL call a rank makes: its instruction, and for a send or recv the peer.
struct NcclCall {
  CallKind kind = CallKind::send;
  int instr = -1;
  int peer = -1;        // send / recv
  int collective = -1;  // collective: index into Program::collectives
};

// The communicator a step's transfers are issued on (above): the world's, or the rail of their local rank.
enum class Communicator : std::uint8_t { world, rail };

// One step of the global order: fused transfers (identified by their send, sorted by (src, dst, key),
// the order both ends issue them in) or one collective.
struct CommStep {
  Pass pass = Pass::fwd;
  Communicator communicator = Communicator::world;  // transfers; a collective has its own
  int collective = -1;                              // ≥ 0: this step is that collective alone
  std::vector<std::pair<int, int>> sends;           // (src rank, send instr) of each transfer
  std::vector<int> ranks;                           // every rank with a call in it, ascending
};

// What a rank's host enqueues, in this order: a compute instruction on the compute stream, or its share
// of a comm step on the comm stream (its calls, in the step's order).
struct IssueItem {
  bool compute = false;
  int instr = -1;  // compute: the instruction
  int step = -1;   // comm: index into GlobalOrder::steps
  std::vector<NcclCall> calls;
  Communicator communicator = Communicator::world;  // comm: its step's
};

struct GlobalOrder {
  std::vector<CommStep> steps;                // forward steps first, then backward ones
  int first_backward_step = 0;                // = steps.size() when there is no backward pass
  std::vector<std::vector<IssueItem>> issue;  // [rank]: forward items first, then backward ones
  std::vector<int> first_backward_item;       // [rank]: index of the first backward item
};

// The order under `schedule`'s start times (any schedule of the Program: the estimate's nominal one in
// the executor, which makes the NCCL order follow the time the planner expects each transfer at).
// Throws zb::Error (runtime) naming an instruction when the Program's dependencies form a cycle
// (lower::verify refuses such a program first).
[[nodiscard]] GlobalOrder derive_order(const lower::Program& program, const lower::Schedule& schedule);
// The same with the compute-only schedule (lower::free_transfers).
[[nodiscard]] GlobalOrder derive_order(const lower::Program& program);

// Whether the transfer whose send is `send` on rank `src` goes on the rail communicator: the inter-node
// (NIC) leg of a routed message, between the same local rank on two nodes.
[[nodiscard]] bool on_rail(const lower::Program& program, int src, const lower::Instr& send);
// A rank's number in `communicator`: itself in the world, its node on its rail (the split's key).
[[nodiscard]] int rank_in(const lower::Program& program, Communicator communicator, int rank);

// The instructions `id` waits for once wait instructions (event joins that enqueue nothing) are
// replaced by what they wait for, transitively; ascending, no duplicates.
[[nodiscard]] std::vector<int> resolved_deps(const lower::Program& program, int rank, int id);

}  // namespace zb::cuda
