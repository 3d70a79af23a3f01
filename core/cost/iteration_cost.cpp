// The whole-iteration parts (docs/METRICS.md, "The whole iteration"). Literals here are exact counts
// (bytes of an fp32 value, passes over a tensor), each explained where it appears, or the two constants of
// the first block, whose reasons are given beside them.
#include "core/cost/iteration_cost.hpp"

#include <algorithm>
#include <iterator>

namespace zb {
namespace {

// Megatron-Core's default gradient bucket: max(40M, 1M · data-parallel size) parameters
// (megatron/core/distributed/distributed_data_parallel_config.py, DistributedDataParallelConfig.bucket_size:
// "larger DP sizes need larger buckets to ensure collectives do not become latency-bound").
constexpr double kMinBucketParams = 40e6;
constexpr double kBucketParamsPerDpRank = 1e6;

constexpr double kFp32Bytes = 4.0;

// The streaming HBM rate the cost model worked out once (streaming_memory_bandwidth looks the GPU up by
// name, and this runs for every rank of every plan).
double memory_seconds(const CostModel& cost, double bytes) {
  return bytes > 0 ? bytes / cost.pointwise_rates().bandwidth : 0.0;
}

// The backward of a GEMM timed like the layers' (CostModel::linear_bwd_time): backward_linear_factor × the
// forward FLOPs at the forward GEMM's rate, as two calls (data and weight gradient).
double gemm_backward_seconds(const CostModel& cost, double m, double n, double k) {
  const double forward = cost.gemm_time(m, n, k);
  if (forward <= 0) return 0.0;
  const double overhead = cost.profile().gemm_call_overhead;
  return cost.profile().backward_linear_factor * (forward - overhead) + 2.0 * overhead;
}

// Buckets of `bucket_params` filled in backward order over items holding `item_params` each; the last
// bucket closes with the last item that holds any.
std::vector<GradientBucket> fill_buckets(const std::vector<double>& item_params, double bucket_params,
                                         bool expert) {
  std::size_t last = 0;
  for (std::size_t item = 0; item < item_params.size(); ++item)
    if (item_params[item] > 0) last = item;
  std::vector<GradientBucket> buckets;
  double filled = 0;
  for (std::size_t item = 0; item < item_params.size(); ++item) {
    double left = item_params[item];
    while (left > 0) {
      const double take = std::min(left, bucket_params - filled);
      filled += take;
      left -= take;
      if (filled >= bucket_params || (item == last && left <= 0)) {
        buckets.push_back({filled, static_cast<int>(item), expert});
        filled = 0;
      }
    }
  }
  return buckets;
}

// The expert-data-parallel group of expert degree `e` on the data-parallel world `dp` (docs/MOE.md):
// expert groups are e consecutive ranks of the N/t grid, so the GPUs at one place of every group are every
// (t·e)-th GPU of a node while an expert group fits in a node, and the same local GPU every e/(g/t)-th
// node when groups fill whole nodes. Groups that straddle nodes unevenly (g/t and e dividing neither
// the other) are charged as one member per node on N/(t·e) nodes.
DataParallelShape expert_data_parallel_shape(const DataParallelShape& dp, int tensor, int e) {
  DataParallelShape g = dp;
  if (e <= 1) return g;
  const int per_node = dp.members_per_node;
  if (per_node % e == 0) {
    g.members_per_node = per_node / e;
    g.local_stride = tensor * e;
    return g;
  }
  g.members_per_node = 1;
  g.nodes = std::max(1, dp.size() / e);
  g.node_stride = e % per_node == 0 ? e / per_node : 1;
  return g;
}

struct RankParts {
  double embedding_fwd = 0, head_fwd = 0, head_bwd = 0, embedding_bwd = 0;
};

// One rank's embedding and head with loss for `tokens` tokens (vocab-parallel: V/t columns per GPU).
RankParts rank_parts(const CostModel& cost, int tensor, double tokens, bool backward) {
  const ModelSpec& model = cost.model();
  const double beta = model.dtype_bytes;
  const double h = model.hidden;
  const double vocab_columns = static_cast<double>(model.vocab) / tensor;
  const double logits = tokens * vocab_columns;
  RankParts p;
  // Lookup: read each token's embedding row, write it as the layer input.
  p.embedding_fwd = memory_seconds(cost, 2.0 * tokens * h * beta);
  // The final RMSNorm (read the last layer's output, write the normalised row; sequence-parallel, so 1/t
  // of the rows per GPU), the logits GEMM, then the loss forward: read the bf16 logits, write the fp32
  // softmax and read it back for the log-sum (Megatron's vocab-parallel cross-entropy works in fp32).
  p.head_fwd = memory_seconds(cost, 2.0 * tokens / tensor * h * beta) +
               cost.gemm_time(tokens, vocab_columns, h) +
               memory_seconds(cost, logits * (beta + 2.0 * kFp32Bytes));
  if (!backward) return p;
  // Loss backward: read the fp32 softmax, write the bf16 logit gradient; then the GEMM's backward.
  // The final RMSNorm's backward reads x and dy and writes dx.
  p.head_bwd = memory_seconds(cost, logits * (kFp32Bytes + beta)) +
               gemm_backward_seconds(cost, tokens, vocab_columns, h) +
               memory_seconds(cost, 3.0 * tokens / tensor * h * beta);
  // Scatter-add of the rows' gradients (read dX, read and write the gradient rows), and one write of the
  // dense V/t × h embedding gradient.
  p.embedding_bwd = memory_seconds(cost, 3.0 * tokens * h * beta + vocab_columns * h * beta);
  return p;
}

}  // namespace

int tensor_parallel_degree(const Scenario& scenario) {
  return std::max(1, scenario.parallelism.tensor);
}

WholeIterationSetup whole_iteration_setup(const CostModel& cost, int tensor) {
  const ModelSpec& model = cost.model();
  const ClusterSpec& cluster = cost.cluster();
  WholeIterationSetup s;
  s.tensor = std::max(1, tensor);
  s.layers = model.layers;
  // Megatron's tensor-parallel groups are t consecutive GPUs of a node, so the GPUs of one tensor index
  // (one data-parallel group) are every t-th GPU: g/t per node, on every node.
  s.dp.members_per_node = std::max(1, cluster.gpus_per_node / s.tensor);
  s.dp.nodes = std::max(1, cluster.nodes);
  s.dp.local_stride = s.tensor;
  const int dp_size = s.dp.size();
  s.expert_dp = expert_data_parallel_shape(s.dp, s.tensor, cost.expert_degree());
  const double shards = cost.profile().model_state_shards;
  s.sync = shards == 1.0 ? GradientSync::all_reduce : GradientSync::zero1;
  s.bucket_params = std::max(kMinBucketParams, kBucketParamsPerDpRank * dp_size);
  s.bytes_per_gradient = model.dtype_bytes;

  // What one GPU holds: a layer's dense parameters, and an MoE layer's routed experts split over the
  // expert degree, whose gradients go to buckets of their own over the expert-data-parallel group
  // (Megatron-Core keeps expert parameters in their own buffers).
  const ModelParams& params = cost.params();
  const double routed_layer_params = params.routed_per_gpu_per_layer / s.tensor;
  const double layer_params = (params.per_gpu_per_layer - params.routed_per_gpu_per_layer) / s.tensor;
  const double embedding_params = static_cast<double>(model.vocab) * model.hidden / s.tensor;
  s.params_per_gpu = params.per_gpu / s.tensor;
  // ZeRO-1 shards the optimizer as the memory model does (model_state_shards, 0 = the data-parallel world;
  // a routed expert's over its expert-data-parallel group, e times smaller).
  const double optimizer_shards = s.sync == GradientSync::all_reduce ? 1.0 : (shards > 0 ? shards : dp_size);
  const double routed = params.routed_per_gpu / s.tensor;  // 0 for a dense model
  const double expert_shards =
      s.sync == GradientSync::all_reduce ? 1.0 : std::max(1.0, optimizer_shards / cost.expert_degree());
  s.optimizer_shard = (s.params_per_gpu - routed) / optimizer_shards + routed / expert_shards;

  // Backward order of the parameters (Megatron fills buckets in reverse parameter order): the LM head,
  // the layers last to first, the input embedding. A bucket closes at bucket_params and can be reduced
  // once the item holding its last parameter has finished its backward.
  std::vector<double> item_params{embedding_params};
  item_params.insert(item_params.end(), static_cast<std::size_t>(model.layers), layer_params);
  item_params.push_back(embedding_params);
  s.buckets = fill_buckets(item_params, s.bucket_params, false);
  if (routed_layer_params > 0) {
    // The experts' buckets, at Megatron's default size for their group, merged in backward order: a
    // bucket is launched when the item holding its last parameter is done, the dense ones first.
    std::vector<double> expert_items(item_params.size(), 0.0);
    for (int layer = 1; layer <= model.layers; ++layer)
      expert_items[static_cast<std::size_t>(layer)] = routed_layer_params;
    const double expert_bucket = std::max(kMinBucketParams, kBucketParamsPerDpRank * s.expert_dp.size());
    const std::vector<GradientBucket> experts = fill_buckets(expert_items, expert_bucket, true);
    std::vector<GradientBucket> merged;
    std::merge(
        s.buckets.begin(), s.buckets.end(), experts.begin(), experts.end(), std::back_inserter(merged),
        [](const GradientBucket& a, const GradientBucket& b) { return a.ready_after < b.ready_after; });
    s.buckets = std::move(merged);
  }
  return s;
}

double intra_node_step_seconds(const CostModel& cost, double bytes) {
  return cost.transfer_time(bytes, cost.nvlink(), LinkClass::nvlink);
}

double inter_node_step_seconds(const CostModel& cost, double bytes) {
  return cost.transfer_time(bytes, cost.nic_per_gpu(), LinkClass::nic);
}

BucketCollectiveSeconds formula_bucket_seconds(const CostModel& cost, const WholeIterationSetup& setup,
                                               double bytes) {
  return formula_bucket_seconds(cost, setup, setup.dp, bytes);
}

BucketCollectiveSeconds formula_bucket_seconds(const CostModel& cost, const WholeIterationSetup& setup,
                                               const DataParallelShape& group, double bytes) {
  const int g = group.members_per_node;
  const int n = group.nodes;
  // Reduce-scatter: g−1 NVLink steps of bytes/g leave each GPU its node's reduced 1/g; n−1 NIC steps of
  // bytes/(g·n) reduce that across nodes. The all-gather runs the same steps in reverse.
  const double nic_step = inter_node_step_seconds(cost, bytes / (static_cast<double>(g) * n));
  const double one_way = (g - 1) * intra_node_step_seconds(cost, bytes / g) + (n - 1) * nic_step;
  return bucket_seconds_of(setup, one_way, (n - 1) * nic_step, nic_step_fixed_share(cost, nic_step));
}

std::vector<BucketCollectiveSeconds> formula_buckets_seconds(const CostModel& cost,
                                                             const WholeIterationSetup& setup) {
  std::vector<BucketCollectiveSeconds> out;
  for (const GradientBucket& b : setup.buckets)
    out.push_back(
        formula_bucket_seconds(cost, setup, setup.group_of(b), b.params * setup.bytes_per_gradient));
  return out;
}

double nic_step_fixed_share(const CostModel& cost, double step_seconds) {
  if (!(step_seconds > 0)) return 0.0;
  const double fixed = cost.cluster().nic.latency + cost.profile().nic_transfer_overhead;
  return std::clamp(fixed / step_seconds, 0.0, 1.0);
}

BucketCollectiveSeconds bucket_seconds_of(const WholeIterationSetup& setup, double one_way,
                                          double one_way_nic, double nic_fixed_share) {
  BucketCollectiveSeconds b;
  b.nic_fixed_share = one_way_nic > 0 ? nic_fixed_share : 0.0;
  if (setup.sync == GradientSync::all_reduce) {
    b.reduce_scatter = 2.0 * one_way;
    b.reduce_scatter_nic = 2.0 * one_way_nic;
    return b;
  }
  b.reduce_scatter = b.all_gather = one_way;
  b.reduce_scatter_nic = b.all_gather_nic = one_way_nic;
  return b;
}

NicSharing nic_sharing(double nic_busy) {
  const double u = std::clamp(nic_busy, 0.0, 1.0);
  NicSharing s;
  // Max-min on the busiest NIC: the bucket takes what the layers leave, but at least half (when both
  // could fill it, each gets half); the layers lose what the bucket takes beyond their idle capacity.
  s.bucket_share = std::max(1.0 - u, 0.5);
  s.layer_rate = 1.0 - std::max(0.0, u + s.bucket_share - 1.0);
  return s;
}

double nic_busy_fraction(const std::vector<double>& link_bytes, double capacity, double window_seconds) {
  if (!(capacity > 0) || !(window_seconds > 0)) return 0.0;
  double most = 0;
  for (const double b : link_bytes) most = std::max(most, b);
  return std::clamp(most / (capacity * window_seconds), 0.0, 1.0);
}

namespace {

// One stream item: `seconds` of work at full pace; `gate`: the index of an item of the other stream that
// must have ended before it starts (−1: none). A compute item `on_nic` is a layer whose NIC traffic the
// buckets share; a bucket's `plain` seconds (NVLink steps) come before its `nic` seconds (NIC steps).
struct ComputeItem {
  double seconds = 0;
  bool on_nic = false;
  int gate = -1;
};
struct CommItem {
  double plain = 0;
  double nic = 0;
  double nic_rate = 1;  // the NIC steps' pace while they overlap a layer: 1 / (φ + (1 − φ)/bucket_share)
  int gate = -1;
};
struct TwoStreams {
  double compute_end = 0;
  double comm_end = 0;
  double compute_lost = 0;  // wall time the compute stream ran below full pace less the work it did
};

// The compute stream and the one communication stream run side by side; while a bucket's NIC steps run
// during a layer, the bucket progresses at its nic_rate and the layer at `layer_rate`, otherwise both at
// full pace. Piecewise constant rates: each step advances to the next end of either stream's segment.
TwoStreams run_two_streams(const std::vector<ComputeItem>& compute, const std::vector<CommItem>& comm,
                           double layer_rate) {
  TwoStreams out;
  std::size_t ci = 0, bi = 0;
  int phase = 0;  // of the current bucket: 0 its NVLink steps, 1 its NIC steps
  double c_left = compute.empty() ? 0.0 : compute.front().seconds;
  double m_left = comm.empty() ? 0.0 : comm.front().plain;
  double t = 0;
  for (;;) {
    const bool c_run =
        ci < compute.size() && (compute[ci].gate < 0 || static_cast<int>(bi) > compute[ci].gate);
    const bool m_run = bi < comm.size() && (comm[bi].gate < 0 || static_cast<int>(ci) > comm[bi].gate);
    if (!c_run && !m_run) break;  // both done (the gates follow each stream's order, so never stuck)
    const bool overlap = c_run && m_run && phase == 1 && compute[ci].on_nic;
    const double rc = overlap ? layer_rate : 1.0;
    const double rm = overlap ? comm[bi].nic_rate : 1.0;
    const double dc = c_run ? c_left / rc : 0.0;
    const double dm = m_run ? m_left / rm : 0.0;
    const bool c_ends = c_run && (!m_run || dc <= dm);
    const bool m_ends = m_run && (!c_run || dm <= dc);
    const double dt = c_ends ? dc : dm;
    t += dt;
    if (c_run) c_left = c_ends ? 0.0 : c_left - rc * dt;
    if (c_run && rc < 1.0) out.compute_lost += (1.0 - rc) * dt;
    if (m_run) m_left = m_ends ? 0.0 : m_left - rm * dt;
    if (c_ends) {
      out.compute_end = t;
      if (++ci < compute.size()) c_left = compute[ci].seconds;
    }
    if (m_ends) {
      if (phase == 0) {
        phase = 1;
        m_left = comm[bi].nic;
      } else {
        out.comm_end = t;
        phase = 0;
        if (++bi < comm.size()) m_left = comm[bi].plain;
      }
    }
  }
  return out;
}

double nic_rate_of(const BucketCollectiveSeconds& b, const NicSharing& sharing) {
  const double phi = std::clamp(b.nic_fixed_share, 0.0, 1.0);
  return 1.0 / (phi + (1.0 - phi) / sharing.bucket_share);
}

}  // namespace

WholeIterationParts whole_iteration_parts(const CostModel& cost, const WholeIterationSetup& setup,
                                          const std::vector<double>& tokens_per_rank, LayerWindow layer,
                                          const std::vector<BucketCollectiveSeconds>& seconds,
                                          const std::vector<double>& compute_scale) {
  const bool backward = layer.backward > 0;
  WholeIterationParts out;
  RankParts critical;
  double slowest = compute_scale.empty() ? 1.0 : 0.0;  // the largest compute multiplier
  for (std::size_t r = 0; r < tokens_per_rank.size(); ++r) {
    const double tokens = tokens_per_rank[r];
    RankParts p = rank_parts(cost, setup.tensor, tokens, backward);
    if (r < compute_scale.size()) {
      const double m = compute_scale[r];
      p = {p.embedding_fwd * m, p.head_fwd * m, p.head_bwd * m, p.embedding_bwd * m};
      slowest = std::max(slowest, m);
    }
    out.embedding_and_head.push_back(p.embedding_fwd + p.head_fwd + p.head_bwd + p.embedding_bwd);
    // Each part sits between two points every rank passes together (the first layer's ring, the last
    // forward layer's, the backward's first and last), so the iteration waits for the slowest rank in each.
    critical.embedding_fwd = std::max(critical.embedding_fwd, p.embedding_fwd);
    critical.head_fwd = std::max(critical.head_fwd, p.head_fwd);
    critical.head_bwd = std::max(critical.head_bwd, p.head_bwd);
    critical.embedding_bwd = std::max(critical.embedding_bwd, p.embedding_bwd);
    // Each GPU of a tensor-parallel group holds the group's tokens and does V/t of the vocabulary's GEMM.
    out.head_flops += 2.0 * tokens * cost.model().hidden * cost.model().vocab / setup.tensor *
                      (backward ? 1.0 + cost.profile().backward_linear_factor : 1.0);
  }
  if (compute_scale.size() < tokens_per_rank.size()) slowest = std::max(slowest, 1.0);
  out.embedding_and_head_critical =
      critical.embedding_fwd + critical.head_fwd + critical.head_bwd + critical.embedding_bwd;
  if (!backward) return out;

  // The NIC sharing of each pass (docs/METRICS.md, "The whole iteration"): only where the layers use the
  // NICs, some bucket does too, and the profile's interference is on (off: the independent model).
  bool buckets_use_nic = false;
  for (std::size_t k = 0; k < setup.buckets.size() && k < seconds.size(); ++k)
    buckets_use_nic = buckets_use_nic || seconds[k].reduce_scatter_nic > 0 || seconds[k].all_gather_nic > 0;
  const bool sharing_on = cost.profile().interference_on() && buckets_use_nic;
  const double u_bwd = sharing_on ? std::clamp(layer.backward_nic_busy, 0.0, 1.0) : 0.0;
  const double u_fwd = sharing_on ? std::clamp(layer.forward_nic_busy, 0.0, 1.0) : 0.0;

  // Backward: the compute stream runs the items in order; one communication stream runs the buckets' first
  // collectives in order, each once its gradients are complete (overlap_grad_reduce).
  const int items = setup.layers + 2;
  const auto item_seconds = [&](int i) {
    return i == 0 ? critical.head_bwd : (i == items - 1 ? critical.embedding_bwd : layer.backward);
  };
  std::vector<double> item_end(static_cast<std::size_t>(items));
  double now = 0;
  for (int i = 0; i < items; ++i) {
    now += item_seconds(i);
    item_end[static_cast<std::size_t>(i)] = now;
  }
  const double backward_end = now;
  for (std::size_t k = 0; k < setup.buckets.size() && k < seconds.size(); ++k)
    out.gradient_sync_total += seconds[k].reduce_scatter + seconds[k].all_gather;
  if (u_bwd > 0) {
    // Shared NICs: the two streams advance together, the buckets' NIC steps and the layers each slowed
    // while they overlap.
    const NicSharing sharing = nic_sharing(u_bwd);
    std::vector<ComputeItem> compute;
    for (int i = 0; i < items; ++i) compute.push_back({item_seconds(i), i > 0 && i < items - 1, -1});
    std::vector<CommItem> comm;
    for (std::size_t k = 0; k < setup.buckets.size() && k < seconds.size(); ++k) {
      const BucketCollectiveSeconds& b = seconds[k];
      comm.push_back({std::max(0.0, b.reduce_scatter - b.reduce_scatter_nic), b.reduce_scatter_nic,
                      nic_rate_of(b, sharing), setup.buckets[k].ready_after});
    }
    const TwoStreams run = run_two_streams(compute, comm, sharing.layer_rate);
    out.gradient_sync_contention += run.compute_lost;
    out.gradient_sync_exposed = std::max(run.compute_end, run.comm_end) - backward_end;
  } else {
    double comm = 0;
    for (std::size_t k = 0; k < setup.buckets.size() && k < seconds.size(); ++k) {
      comm = std::max(comm, item_end[static_cast<std::size_t>(setup.buckets[k].ready_after)]) +
             seconds[k].reduce_scatter;
    }
    out.gradient_sync_exposed = std::max(0.0, comm - backward_end);
  }

  // The optimizer steps its shard once every gradient is reduced: Adam reads and writes the fp32 master
  // weight, m and v (the sharded optimizer bytes) and reads the gradient and writes the parameter. Every
  // rank steps its own shard; the iteration waits for the slowest (the largest compute multiplier).
  const double beta = cost.model().dtype_bytes;
  const double sharded_bytes = std::max(0.0, cost.profile().optimizer_bytes_per_param - 2.0 * beta);
  out.optimizer = memory_seconds(cost, setup.optimizer_shard * (2.0 * sharded_bytes + 2.0 * beta));
  if (!compute_scale.empty()) out.optimizer *= slowest;

  if (setup.sync == GradientSync::zero1) {
    // Next forward (overlap_param_gather): the all-gathers run in the order the forward needs the buckets,
    // from the embedding on, and an item starts once every bucket holding its parameters has arrived.
    const auto forward_seconds = [&](int i) {
      return i == items - 1 ? critical.embedding_fwd : (i == 0 ? critical.head_fwd : layer.forward);
    };
    if (u_fwd > 0) {
      const NicSharing sharing = nic_sharing(u_fwd);
      // Both streams in forward order: items L+1 (embedding) .. 0 (head), buckets K−1 .. 0; an item waits
      // for the last bucket (in gathering order) whose last parameter it holds.
      std::vector<ComputeItem> compute;
      for (int i = items - 1; i >= 0; --i)
        compute.push_back({forward_seconds(i), i > 0 && i < items - 1, -1});
      std::vector<CommItem> comm;
      const std::size_t buckets = std::min(setup.buckets.size(), seconds.size());
      for (std::size_t k = buckets; k-- > 0;) {
        const BucketCollectiveSeconds& b = seconds[k];
        comm.push_back(
            {std::max(0.0, b.all_gather - b.all_gather_nic), b.all_gather_nic, nic_rate_of(b, sharing), -1});
        ComputeItem& needs = compute[static_cast<std::size_t>(items - 1 - setup.buckets[k].ready_after)];
        needs.gate = static_cast<int>(comm.size()) - 1;
      }
      const TwoStreams run = run_two_streams(compute, comm, sharing.layer_rate);
      double busy = 0;
      for (int i = items - 1; i >= 0; --i) busy += forward_seconds(i);
      // The compute stream's waits for the gathers and the pace its layers lost to them.
      out.gradient_sync_contention += run.compute_lost;
      out.gradient_sync_exposed += run.compute_end - busy;
    } else {
      std::vector<double> needed(static_cast<std::size_t>(items), 0.0);
      double gathered = 0;
      for (std::size_t k = setup.buckets.size(); k-- > 0;) {
        if (k < seconds.size()) gathered += seconds[k].all_gather;
        double& at = needed[static_cast<std::size_t>(setup.buckets[k].ready_after)];
        at = std::max(at, gathered);
      }
      double compute = 0, busy = 0;
      for (int i = items - 1; i >= 0; --i) {
        const double d = forward_seconds(i);
        compute = std::max(compute, needed[static_cast<std::size_t>(i)]) + d;
        busy += d;
      }
      out.gradient_sync_exposed += compute - busy;
    }
  }
  return out;
}

}  // namespace zb
