#pragma once
// A replay of how a rank sequence of NCCL calls runs on GPUs, to prove an order deadlock-free without
// a GPU: each rank has a compute stream (its compute instructions in list order, each once its deps are
// done) and ONE comm stream that takes its posts one after the other. A post is a set of calls issued
// together (an ncclGroupStart/End, or one call); it is launched once every dependency of every call in
// it is done, and it completes once each of its calls has met its counterpart posted on the peer (the
// matching recv or send, or every member's call of a collective). Zero buffering, as NCCL: a send
// waits for its recv. The backward pass starts once every forward instruction of every rank is done.
//
// The cuda backend issues GlobalOrder's steps (posts_of); the tests also replay the naive order (each
// rank's comm instructions one by one in list order) to show what the global order avoids.
#include <string>
#include <utility>
#include <vector>

#include "core/exec/cuda/nccl_order.hpp"
#include "core/lower/program.hpp"

namespace zb::cuda {

using RankPosts = std::vector<std::vector<std::vector<int>>>;  // [rank][post] → comm instruction ids

struct ReplayResult {
  bool complete = true;
  std::vector<std::pair<int, int>> stuck;  // (rank, instr) of the first post each stuck rank is blocked at
  std::string explanation;                 // the first stuck post, described, empty when complete
};

[[nodiscard]] ReplayResult rendezvous_replay(const lower::Program& program, const RankPosts& posts);

// The global order's posts: each rank's share of every step, in step order.
[[nodiscard]] RankPosts posts_of(const GlobalOrder& order);
// Each rank's comm instructions (send, recv, collective) one per post, in list order.
[[nodiscard]] RankPosts naive_list_posts(const lower::Program& program);

}  // namespace zb::cuda
