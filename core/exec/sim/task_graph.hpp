#pragma once
// A Program (core/lower) as simulation tasks: what the SimGrid driver runs and what the trace builder
// reads back. It only translates instructions; what they mean (relays, pairing, payloads, the backward
// pass) was decided by the lowering. Built in the parent before the simulation child is forked, so both
// sides share it without serialising it.
//
// Tasks:
//   compute  one compute instruction, `amount` seconds; a compute instruction also waits for the
//            previous compute instruction of its rank (the stream runs in strict list order);
//   flow     one leg src → dst of `amount` bytes (a SimGrid Comm);
//   join     no work: completes as soon as its predecessors have (a send meeting its recv, the posting
//            and end of a collective, the barrier between passes).
// A send leg and its recv share one rendezvous join (both posted) followed by one flow, so both end when
// the last byte has arrived (NCCL P2P is a rendezvous).
#include <cstdint>
#include <vector>

#include "core/config/hardware_profile.hpp"
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"

namespace zb::sim {

enum class TaskKind : std::uint8_t { join, compute, flow };

struct Task {
  TaskKind kind = TaskKind::join;
  int rank = -1;      // compute: the GPU; flow: the source GPU
  int dst = -1;       // flow: the destination GPU
  double amount = 0;  // compute: seconds; flow: bytes
  int predecessors = 0;
};

// A flow's role, for trace events and link loads.
struct FlowInfo {
  int task = -1;
  int message = -1;                     // the Program message it moves part of
  int send_rank = -1, send_instr = -1;  // the send leg (−1 for collective ring steps)
};

// The tasks standing for one instruction: ready when `gate` has run, complete when `done` has.
struct InstrTasks {
  int gate = -1;
  int done = -1;
  std::vector<int> flows;  // send/recv: its leg's flow; collective: the flows in and out of this rank
};

struct TaskGraphOptions {
  bool free_transfers = false;  // every flow becomes a join: infinite bandwidth, zero latency
  // Per rank, the factor every compute task's seconds are multiplied by (seeded jitter and stragglers,
  // compute_multipliers); empty: every rank computes at the cost model's times.
  std::vector<double> compute_scale;
};

// m(r, i) of docs/SIMULATOR.md, "Jitter and stragglers": rank r's compute-time multiplier in iteration
// `iteration`, lognormal of mean 1 and coefficient of variation `compute_jitter`, times
// `straggler_slowdown` when a Bernoulli(`straggler_probability`) draw makes the rank a straggler. Drawn
// from an Rng stream of (seed, iteration, rank) alone, so every system of a scenario sees the same
// multipliers (paired comparisons). Empty when the profile has neither jitter nor stragglers.
[[nodiscard]] std::vector<double> compute_multipliers(const HardwareProfile& profile, std::uint64_t seed,
                                                      int iteration, int world_size);

class TaskGraph {
 public:
  explicit TaskGraph(const lower::Program& program, const TaskGraphOptions& options = {});

  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] const std::vector<std::vector<int>>& successors() const { return successors_; }
  [[nodiscard]] const std::vector<FlowInfo>& flows() const { return flows_; }  // in task order
  [[nodiscard]] const InstrTasks& of(int rank, int instr) const {
    return instrs_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(instr)];
  }
  [[nodiscard]] int pass_barrier() const { return barrier_; }  // −1 when forward only
  [[nodiscard]] int world_size() const { return program_.world_size; }
  [[nodiscard]] const lower::Program& program() const { return program_; }

 private:
  void add_instr_tasks(int rank, int id);
  void add_collective(int c);
  int add_task(const Task& task);
  int add_flow(int src, int dst, double bytes, int message, int send_rank, int send_instr);
  void add_edge(int from, int to);

  const lower::Program& program_;
  TaskGraphOptions options_;
  std::vector<Task> tasks_;
  std::vector<std::vector<int>> successors_;
  std::vector<FlowInfo> flows_;
  std::vector<std::vector<InstrTasks>> instrs_;
  int barrier_ = -1;
};

}  // namespace zb::sim
