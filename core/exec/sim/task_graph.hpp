#pragma once
// The plan's op DAG, both passes, lowered to simulation tasks: what the SimGrid driver runs and what the
// trace builder reads back. Built in the parent before the simulation child is forked, so both sides
// share it without serialising it.
//
// Tasks:
//   compute  one attention or GEMM op; its duration (seconds) comes from op_seconds (the planner's cost
//            model); it waits in its rank's ready queue until the compute stream is free;
//   flow     one network transfer src → dst of `amount` bytes (a SimGrid Comm);
//   join     no work: completes as soon as its predecessors have (rendezvous of a send with its recv,
//            the end of a transfer, the posting and end of a remap, the barrier between passes).
// A send and its matching recv share one transfer: it starts when both ops are ready (NCCL P2P is a
// rendezvous) and both ops end when its last byte has arrived.
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/exec/trace.hpp"
#include "core/plan/plan.hpp"

namespace zb::sim {

enum class TaskKind : std::uint8_t { join, compute, flow };

struct Task {
  TaskKind kind = TaskKind::join;
  Pass pass = Pass::fwd;
  int rank = -1;      // compute: the GPU; flow: the source GPU
  int dst = -1;       // flow: the destination GPU
  int order = 0;      // compute: op index; the stream runs the lowest ready one first
  double amount = 0;  // compute: seconds; flow: bytes
  int predecessors = 0;
};

// A flow's role, for trace events (relay legs) and link loads.
struct FlowInfo {
  int task = -1;
  EventCategory category = EventCategory::send;
  int owner_rank = -1;  // the rank whose op this flow serves (sender of the send, rank of the remap)
  int op = -1;
};

// One send/recv pair of one pass.
struct Transfer {
  Pass pass = Pass::fwd;
  int src = -1, dst = -1;
  int send_op = -1, recv_op = -1;  // op indices on src and dst
  int group = -1, step = -1, micro_batch = 0;
  double bytes = 0;
  int rendezvous = -1, done = -1;  // join tasks
  std::vector<int> flows;          // flow task ids, legs in chunk order
};

// One plan op in one pass and the tasks standing for it.
struct OpTasks {
  Pass pass = Pass::fwd;
  int rank = 0;
  int op = 0;
  int gate = -1;      // ready when the op's deps are done (compute: the compute task itself)
  int done = -1;      // complete when the op is
  int transfer = -1;  // send / recv: index into transfers
  std::vector<int> flows;  // remap: the flows in and out of this rank
  double flops = 0;        // compute: FLOPs of this pass
};

class TaskGraph {
 public:
  TaskGraph(const plan::Plan& plan, const CostModel& cost, bool backward);

  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] const std::vector<std::vector<int>>& successors() const { return successors_; }
  [[nodiscard]] const std::vector<OpTasks>& ops() const { return ops_; }
  [[nodiscard]] const std::vector<Transfer>& transfers() const { return transfers_; }
  [[nodiscard]] const std::vector<FlowInfo>& flows() const { return flows_; }
  [[nodiscard]] int pass_barrier() const { return barrier_; }  // −1 when forward only
  [[nodiscard]] int world_size() const { return world_size_; }

 private:
  void build_pass(Pass pass, int after);
  void lower_transfer(Transfer& t, const plan::Op& send);
  void lower_remaps(std::size_t first_op);
  int add_task(const Task& task);
  int add_flow(Pass pass, int src, int dst, double bytes, EventCategory category, int owner, int op);
  void add_edge(int from, int to);

  const plan::Plan& plan_;
  const CostModel& cost_;
  int world_size_ = 0;
  std::vector<Task> tasks_;
  std::vector<std::vector<int>> successors_;
  std::vector<OpTasks> ops_;
  std::vector<Transfer> transfers_;
  std::vector<FlowInfo> flows_;
  int barrier_ = -1;
};

}  // namespace zb::sim
