#pragma once
// The schedule of a Program: each instruction's start and end under the execution rules of program.hpp
// (compute in strict list order, comm when its deps are done, a send and its recv together once both are
// posted, chunked legs pipelined through their relays, collectives once their members have posted, a
// barrier between the passes), with transfers timed by a caller's model. Transfers are never slowed by
// one another unless the model names the shared links each leg occupies; then a leg waits for its links
// to be free (first come, first served, in time order), which is when bandwidth sharing would finish the
// last of several concurrent transfers. An all_to_all_v's messages, all moving at once, share their links
// instead: each takes as long as the busiest link it holds needs for all of the collective's messages on
// it (first come, first served would chain them through alternating send and receive sides, a convoy
// that grows with the cluster); later legs on those links wait for them.
//
// Two users: the planner's estimate (nominal link rates, queueing on NVLink ports and NICs) and the
// verifier's rendezvous check (any model: an instruction that never completes is a deadlock under zero
// send buffering). Instructions complete in time order, O((instructions + dependencies) log instructions).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/lower/program.hpp"

namespace zb::lower {

struct TransferModel {
  // Seconds one leg of `bytes` takes from src to dst (a leg of `message`).
  std::function<double(int src, int dst, std::int64_t bytes, const Message& message)> p2p;
  // Seconds a collective other than all_to_all_v takes once every member has posted.
  std::function<double(const Collective& collective)> collective;
  // Optional: appends the ids (< link_count) of the shared links a leg from src to dst (of `message`)
  // holds while it moves. Unset: contention-free.
  std::function<void(int src, int dst, const Message& message, std::vector<int>& links)> links;
  int link_count = 0;
};

struct Schedule {
  std::vector<std::vector<double>> start, end;  // [rank][instr]; −1 = never started / ended (empty: summary)
  std::vector<double> rank_forward_finish;      // [rank]: when its last forward instruction ended
  double barrier = 0;    // when the last forward instruction ended (the backward pass starts then)
  double finish = 0;     // when the last instruction ended
  bool complete = true;  // every instruction ended
  std::vector<std::pair<int, int>> stuck;         // (rank, instr) that never ended, rank order then id order
  std::vector<std::pair<int, int>> posted_stuck;  // of those, the ones posted (waiting for a peer)
};

// every_instruction fills start and end; summary leaves them empty (the planner's estimate reads only the
// per-rank and whole-program times, and a 1024-GPU program has a few hundred thousand instructions).
enum class ScheduleDetail : std::uint8_t { every_instruction, summary };
[[nodiscard]] Schedule schedule(const Program& program, const TransferModel& model,
                                ScheduleDetail detail = ScheduleDetail::every_instruction);

// Transfers and collectives take no time: what the compute streams alone allow.
[[nodiscard]] TransferModel free_transfers();

}  // namespace zb::lower
