#pragma once
// The contention-free schedule of a Program: each instruction's start and end under the execution rules
// of program.hpp (compute in strict list order, comm when its deps are done, a send and its recv together
// once both are posted, chunked legs pipelined through their relays, collectives once their members have
// posted, a barrier between the passes), with transfers timed by a caller's model and never slowed by
// one another.
//
// Two users: the planner's estimate (nominal link rates) and the verifier's rendezvous check (any
// model: an instruction that never completes is a deadlock under zero send buffering). One pass over the
// instructions, O(instructions + dependencies).
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
};

struct Schedule {
  std::vector<std::vector<double>> start, end;  // [rank][instr]; −1 = never started / ended
  double barrier = 0;    // when the last forward instruction ended (the backward pass starts then)
  double finish = 0;     // when the last instruction ended
  bool complete = true;  // every instruction ended
  std::vector<std::pair<int, int>> stuck;  // (rank, instr) that never ended, rank order then id order
  std::vector<std::pair<int, int>> posted_stuck;  // of those, the ones posted (waiting for a peer)
};

[[nodiscard]] Schedule schedule(const Program& program, const TransferModel& model);

// Transfers and collectives take no time: what the compute streams alone allow.
[[nodiscard]] TransferModel free_transfers();

}  // namespace zb::lower
