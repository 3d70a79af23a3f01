#include "core/exec/sim/gradient_collective.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/simulate.hpp"
#include "core/exec/sim/task_graph.hpp"

namespace zb::sim {
namespace {

// One program: one all_to_all_v whose messages are the ring step's flows, every one posted at time 0, so
// each flow ends when max-min sharing on the cluster's links lets it. The two levels share no link (NVLink
// inside a node; PCIe and NICs across nodes), so simulating them together times each as if alone.
struct StepProgram {
  lower::Program program;
  std::vector<bool> inter_node;  // per message
};

StepProgram step_program(const ClusterSpec& cluster, const DataParallelShape& group, double intra_bytes,
                         double inter_bytes) {
  StepProgram s;
  lower::Program& p = s.program;
  p.world_size = cluster.world_size();
  p.gpus_per_node = cluster.gpus_per_node;
  lower::Collective step;
  step.kind = lower::CollectiveKind::all_to_all_v;
  const auto add_message = [&](int src, int dst, double bytes, bool inter) {
    if (bytes <= 0 || src == dst) return;
    lower::Message m;
    m.purpose = lower::Purpose::remap;
    m.src = src;
    m.dst = dst;
    m.bytes = static_cast<std::int64_t>(std::llround(bytes));
    step.messages.push_back(static_cast<int>(p.messages.size()));
    p.messages.push_back(std::move(m));
    s.inter_node.push_back(inter);
  };
  const int g = cluster.gpus_per_node;
  for (int rank = 0; rank < p.world_size; ++rank) {
    const int node = cluster.node_of(rank), local = cluster.local_of(rank);
    // The next member of the rank's group on its node (t GPUs on for the data-parallel world: the same
    // tensor index), and the same GPU of the group's next node.
    if (group.members_per_node > 1)
      add_message(rank, node * g + (local + group.local_stride) % g, intra_bytes, false);
    if (group.nodes > 1)
      add_message(rank, ((node + group.node_stride) % cluster.nodes) * g + local, inter_bytes, true);
  }
  for (int rank = 0; rank < p.world_size; ++rank) {
    lower::RankProgram r;
    r.rank = rank;
    lower::Instr in;
    in.kind = lower::InstrKind::collective;
    in.stream = lower::Stream::comm;
    in.collective = 0;
    in.name = "gradient ring step";
    r.instrs.push_back(std::move(in));
    r.first_backward = 1;
    p.ranks.push_back(std::move(r));
    step.ranks.push_back(rank);
    step.instrs.push_back(0);
  }
  p.collectives.push_back(std::move(step));
  return s;
}

}  // namespace

RingStepTimes simulate_ring_steps(const CostModel& cost, const WholeIterationSetup& setup, double intra_bytes,
                                  double inter_bytes) {
  return simulate_ring_steps(cost, setup.dp, intra_bytes, inter_bytes);
}

RingStepTimes simulate_ring_steps(const CostModel& cost, const DataParallelShape& group, double intra_bytes,
                                  double inter_bytes) {
  const ClusterSpec& cluster = cost.cluster();
  const StepProgram s = step_program(cluster, group, intra_bytes, inter_bytes);
  RingStepTimes out;
  if (s.program.messages.empty()) return out;
  const Platform platform(cluster, cost.profile());
  const TaskGraph graph(s.program);
  const TaskTimes times = simulate_isolated(platform, graph);
  for (const FlowInfo& f : graph.flows()) {
    // The step starts at 0 for every flow: its end is its time, the sender's per-message overhead
    // included (a flow's own start is when its first byte leaves, after that overhead).
    const double seconds = times.end[static_cast<std::size_t>(f.task)];
    double& level = s.inter_node[static_cast<std::size_t>(f.message)] ? out.inter_node : out.intra_node;
    level = std::max(level, seconds);  // a step is a barrier: it lasts as long as its slowest flow
  }
  return out;
}

std::vector<BucketCollectiveSeconds> simulate_bucket_seconds(const CostModel& cost,
                                                             const WholeIterationSetup& setup) {
  // Buckets share a handful of sizes (full, and the last) and at most two groups.
  std::map<std::pair<bool, double>, BucketCollectiveSeconds> by_bytes;
  std::vector<BucketCollectiveSeconds> out;
  for (const GradientBucket& bucket : setup.buckets) {
    const DataParallelShape& group = setup.group_of(bucket);
    const int g = group.members_per_node;
    const int n = group.nodes;
    const double bytes = bucket.params * setup.bytes_per_gradient;
    auto it = by_bytes.find({bucket.expert, bytes});
    if (it == by_bytes.end()) {
      // The same steps formula_bucket_seconds charges: g−1 of bytes/g inside the node, n−1 of bytes/(g·n)
      // across nodes; the all-gather runs them in reverse, an all-reduce is both.
      const RingStepTimes step =
          simulate_ring_steps(cost, group, bytes / g, bytes / (static_cast<double>(g) * n));
      const double one_way = (g - 1) * step.intra_node + (n - 1) * step.inter_node;
      // The NIC steps' share of it, for their sharing with the layers' traffic (iteration_cost).
      const BucketCollectiveSeconds seconds = bucket_seconds_of(setup, one_way, (n - 1) * step.inter_node,
                                                                nic_step_fixed_share(cost, step.inter_node));
      it = by_bytes.emplace(std::make_pair(bucket.expert, bytes), seconds).first;
    }
    out.push_back(it->second);
  }
  return out;
}

}  // namespace zb::sim
