// The whole-iteration parts (docs/METRICS.md, "The whole iteration"). Literals here are exact counts
// (bytes of an fp32 value, passes over a tensor), each explained where it appears, or the two constants of
// the first block, whose reasons are given beside them.
#include "core/cost/iteration_cost.hpp"

#include <algorithm>

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
  const int dp_size = s.dp.size();
  const double shards = cost.profile().model_state_shards;
  s.sync = shards == 1.0 ? GradientSync::all_reduce : GradientSync::zero1;
  s.bucket_params = std::max(kMinBucketParams, kBucketParamsPerDpRank * dp_size);
  s.bytes_per_gradient = model.dtype_bytes;

  const double layer_params = cost.params_per_layer() / s.tensor;
  const double embedding_params = static_cast<double>(model.vocab) * model.hidden / s.tensor;
  s.params_per_gpu = cost.total_params() / s.tensor;
  // ZeRO-1 shards the optimizer as the memory model does (model_state_shards, 0 = the data-parallel world).
  const double optimizer_shards = s.sync == GradientSync::all_reduce ? 1.0 : (shards > 0 ? shards : dp_size);
  s.optimizer_shard = s.params_per_gpu / optimizer_shards;

  // Backward order of the parameters (Megatron fills buckets in reverse parameter order): the LM head,
  // the layers last to first, the input embedding. A bucket closes at bucket_params and can be reduced
  // once the item holding its last parameter has finished its backward.
  std::vector<double> item_params{embedding_params};
  item_params.insert(item_params.end(), static_cast<std::size_t>(model.layers), layer_params);
  item_params.push_back(embedding_params);
  double filled = 0;
  for (std::size_t item = 0; item < item_params.size(); ++item) {
    double left = item_params[item];
    while (left > 0) {
      const double take = std::min(left, s.bucket_params - filled);
      filled += take;
      left -= take;
      if (filled >= s.bucket_params || (item + 1 == item_params.size() && left <= 0)) {
        s.buckets.push_back({filled, static_cast<int>(item)});
        filled = 0;
      }
    }
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
  const int g = setup.dp.members_per_node;
  const int n = setup.dp.nodes;
  // Reduce-scatter: g−1 NVLink steps of bytes/g leave each GPU its node's reduced 1/g; n−1 NIC steps of
  // bytes/(g·n) reduce that across nodes. The all-gather runs the same steps in reverse.
  const double one_way = (g - 1) * intra_node_step_seconds(cost, bytes / g) +
                         (n - 1) * inter_node_step_seconds(cost, bytes / (static_cast<double>(g) * n));
  if (setup.sync == GradientSync::all_reduce) return {2.0 * one_way, 0.0};
  return {one_way, one_way};
}

WholeIterationParts whole_iteration_parts(const CostModel& cost, const WholeIterationSetup& setup,
                                          const std::vector<double>& tokens_per_rank, LayerWindow layer,
                                          const std::vector<BucketCollectiveSeconds>& seconds) {
  const bool backward = layer.backward > 0;
  WholeIterationParts out;
  RankParts critical;
  for (const double tokens : tokens_per_rank) {
    const RankParts p = rank_parts(cost, setup.tensor, tokens, backward);
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
  out.embedding_and_head_critical =
      critical.embedding_fwd + critical.head_fwd + critical.head_bwd + critical.embedding_bwd;
  if (!backward) return out;

  // Backward: the compute stream runs the items in order; one communication stream runs the buckets' first
  // collectives in order, each once its gradients are complete (overlap_grad_reduce).
  const int items = setup.layers + 2;
  std::vector<double> item_end(static_cast<std::size_t>(items));
  double now = 0;
  for (int i = 0; i < items; ++i) {
    now += i == 0 ? critical.head_bwd : (i == items - 1 ? critical.embedding_bwd : layer.backward);
    item_end[static_cast<std::size_t>(i)] = now;
  }
  const double backward_end = now;
  double comm = 0;
  for (std::size_t k = 0; k < setup.buckets.size() && k < seconds.size(); ++k) {
    comm = std::max(comm, item_end[static_cast<std::size_t>(setup.buckets[k].ready_after)]) +
           seconds[k].reduce_scatter;
    out.gradient_sync_total += seconds[k].reduce_scatter + seconds[k].all_gather;
  }
  out.gradient_sync_exposed = std::max(0.0, comm - backward_end);

  // The optimizer steps its shard once every gradient is reduced: Adam reads and writes the fp32 master
  // weight, m and v (the sharded optimizer bytes) and reads the gradient and writes the parameter.
  const double beta = cost.model().dtype_bytes;
  const double sharded_bytes = std::max(0.0, cost.profile().optimizer_bytes_per_param - 2.0 * beta);
  out.optimizer = memory_seconds(cost, setup.optimizer_shard * (2.0 * sharded_bytes + 2.0 * beta));

  if (setup.sync == GradientSync::zero1) {
    // Next forward (overlap_param_gather): the all-gathers run in the order the forward needs the buckets,
    // from the embedding on, and an item starts once every bucket holding its parameters has arrived.
    std::vector<double> needed(static_cast<std::size_t>(items), 0.0);
    double gathered = 0;
    for (std::size_t k = setup.buckets.size(); k-- > 0;) {
      if (k < seconds.size()) gathered += seconds[k].all_gather;
      double& at = needed[static_cast<std::size_t>(setup.buckets[k].ready_after)];
      at = std::max(at, gathered);
    }
    double compute = 0, busy = 0;
    for (int i = items - 1; i >= 0; --i) {
      const double d = i == items - 1 ? critical.embedding_fwd : (i == 0 ? critical.head_fwd : layer.forward);
      compute = std::max(compute, needed[static_cast<std::size_t>(i)]) + d;
      busy += d;
    }
    out.gradient_sync_exposed += compute - busy;
  }
  return out;
}

}  // namespace zb
