// The cost model's formulas. Every rate or efficiency comes from HardwareProfile (its defaults are
// justified in hardware_profile.cpp); the only literals here are exact counting factors (2 FLOPs per
// multiply-accumulate, 2 tensors K and V, ...), each explained where it appears. docs/METRICS.md has the
// same formulas in mathematical form.
#include "core/cost/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "core/common/error.hpp"
#include "core/cost/iteration_cost.hpp"
#include "core/cost/model_params.hpp"
#include "core/cost/pointwise_cost.hpp"

namespace zb {
namespace {

// 2 FLOPs (one multiply, one add) per multiply-accumulate of a matrix product.
constexpr double kFlopsPerMac = 2.0;

// The model must be well-formed before any formula divides by heads or multiplies by widths. The scenario
// parser already checks this; the constructor checks again because tests and tools build specs by hand.
void check_model(const ModelSpec& model, int expert_degree) {
  ProblemList problems;
  const auto require = [&](bool ok, const char* path, const std::string& what) {
    if (ok) return;
    Location where;
    where.json_path = path;
    problems.add(where, what);
  };
  require(model.layers >= 1, "model.layers", "layers must be >= 1");
  require(model.hidden >= 1, "model.hidden", "hidden must be >= 1");
  require(model.heads >= 1 && model.hidden % std::max(model.heads, 1) == 0, "model.heads",
          "heads must be >= 1 and divide hidden");
  require(model.kv_heads >= 1 && model.heads % std::max(model.kv_heads, 1) == 0, "model.kv_heads",
          "kv_heads must be >= 1 and divide heads");
  require(model.ffn_hidden >= 0, "model.ffn_hidden", "ffn_hidden must be >= 0");
  require(model.vocab >= 0, "model.vocab", "vocab must be >= 0");
  require(model.dtype_bytes >= 1, "model.dtype", "dtype_bytes must be >= 1");
  if (model.has_experts()) {
    const MoeSpec& moe = model.moe;
    require(moe.top_k >= 1 && moe.top_k <= moe.experts, "model.moe.top_k", "top_k must be in [1, experts]");
    require(moe.shared_experts >= 0, "model.moe.shared_experts", "shared_experts must be >= 0");
    require(moe.expert_ffn_hidden >= 1, "model.moe.expert_ffn_hidden", "expert_ffn_hidden must be >= 1");
  }
  require(expert_degree >= 1 &&
              (model.has_experts() ? model.moe.experts % expert_degree == 0 : expert_degree == 1),
          "parallelism.expert",
          "the expert degree must be 1 for a dense model and divide the experts otherwise");
  problems.throw_if_any();
}

// Sum of the integers first, first+1, ..., first+count-1: of count and (2·first + count − 1) one is even,
// so halve that one before multiplying. Exact while the sum fits std::int64_t, as it does for every range
// inside a document (at most kMaxDocumentLength = 2^30 tokens, core/config/document_limit.hpp: below 2^60).
std::int64_t arithmetic_series(std::int64_t first, std::int64_t count) {
  const std::int64_t first_plus_last = 2 * first + count - 1;
  return count % 2 == 0 ? (count / 2) * first_plus_last : count * (first_plus_last / 2);
}

}  // namespace

CostModel::CostModel(const ClusterSpec& cluster, const ModelSpec& model, HardwareProfile profile,
                     int expert_degree)
    : cluster_(cluster), model_(model), profile_(profile), expert_degree_(expert_degree) {
  check_model(model_, expert_degree_);
  params_ = count_params(model_, expert_degree_);
  pointwise_ = {.fwd_bytes_per_token = pointwise_fwd_bytes_per_token(*this),
                .bwd_bytes_per_token = pointwise_bwd_bytes_per_token(*this),
                .bandwidth = streaming_memory_bandwidth(*this)};
}

CostModel::CostModel(const Scenario& scenario)
    : CostModel(scenario.cluster, scenario.model, scenario.hardware_profile.profile,
                scenario.parallelism.expert) {}

CostModel CostModel::with_cluster(const ClusterSpec& cluster) const {
  return CostModel(cluster, model_, profile_, expert_degree_);
}

// --- counting ---------------------------------------------------------------------------------------------

std::int64_t CostModel::attention_pairs(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                                        bool causal) {
  if (q1 <= q0 || k1 <= k0) return 0;
  if (!causal) return (q1 - q0) * (k1 - k0);
  // Query q sees the keys [k0, min(k1, q + 1)). Queries below k0 see nothing; queries in [k0, k1) see a
  // growing triangle (q + 1 − k0 keys); queries at or above k1 see the whole key range.
  std::int64_t pairs = 0;
  const std::int64_t triangle_begin = std::max(q0, k0);
  const std::int64_t triangle_end = std::min(q1, k1);
  if (triangle_end > triangle_begin) {
    pairs += arithmetic_series(triangle_begin + 1 - k0, triangle_end - triangle_begin);
  }
  const std::int64_t full_begin = std::max(q0, k1);
  if (q1 > full_begin) pairs += (q1 - full_begin) * (k1 - k0);
  return pairs;
}

// --- FLOPs ------------------------------------------------------------------------------------------------

double CostModel::attention_fwd_flops(double pairs) const {
  // Per (q, k) pair and per head: one head_dim-long dot product for QKᵀ and one for PV; over all heads
  // that is 2·hidden multiply-accumulates, i.e. 4·hidden FLOPs. Softmax FLOPs are negligible next to it.
  return 2.0 * kFlopsPerMac * model_.hidden * pairs;
}

double CostModel::attention_bwd_flops(double pairs) const {
  return profile_.backward_attention_factor * attention_fwd_flops(pairs);
}

double CostModel::linear_fwd_flops(double tokens) const {
  return kFlopsPerMac * tokens * gemm_params_per_layer();
}

double CostModel::linear_bwd_flops(double tokens) const {
  return profile_.backward_linear_factor * linear_fwd_flops(tokens);
}

// --- bytes ------------------------------------------------------------------------------------------------

double CostModel::kv_bytes(double tokens) const {
  return 2.0 * tokens * model_.kv_hidden() * model_.dtype_bytes;  // 2 tensors: K and V
}

double CostModel::hidden_bytes(double tokens) const {
  return tokens * model_.hidden * model_.dtype_bytes;
}

double CostModel::qkv_bytes(double tokens) const {
  return tokens * (model_.hidden + 2.0 * model_.kv_hidden()) * model_.dtype_bytes;
}

// --- times ------------------------------------------------------------------------------------------------

double CostModel::attention_time(double flops, double q_tokens) const {
  // The fit's error follows the call's FLOPs per query row (its key span), the kernel's shape.
  return with_error(0, flops / std::max(q_tokens, 1.0), exact_attention_time(flops, q_tokens));
}

double CostModel::exact_attention_time(double flops, double q_tokens) const {
  if (flops <= 0) return 0.0;
  // Shape term q/(q + half): a call with few query rows launches few tiles per head and leaves SMs idle,
  // so its efficiency falls smoothly to zero; at q = attention_half_tokens it is half of the large-call
  // efficiency. A call that does FLOPs has at least one query row.
  const double q = std::max(q_tokens, 1.0);
  const double shape = q / (q + profile_.attention_half_tokens);
  return flops / (cluster_.gpu.peak_flops * profile_.attention_efficiency *
                  profile_.sustained_compute_fraction * shape) +
         profile_.attention_call_overhead;
}

double CostModel::gemm_rate(double m) const {
  // Same saturating shape as attention, on the row (token) dimension, which is the one that shrinks.
  const double shape = m / (m + profile_.gemm_half_rows);
  return cluster_.gpu.peak_flops * profile_.gemm_efficiency * profile_.sustained_compute_fraction * shape;
}

double CostModel::gemm_time(double m, double n, double k) const {
  return with_error(1, m * n * k, exact_gemm_time(m, n, k));
}

double CostModel::exact_gemm_time(double m, double n, double k) const {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  return kFlopsPerMac * m * n * k / gemm_rate(m) + profile_.gemm_call_overhead;
}

std::array<CostModel::GemmShape, 4> CostModel::layer_gemms() const {
  const double h = model_.hidden;
  const auto f = static_cast<double>(model_.token_ffn_width());
  return {{
      {"qkv", h + 2.0 * model_.kv_hidden(), h},  // fused QKV projection
      {"o_proj", h, h},                          // attention output projection
      {"mlp_up", 2.0 * f, h},                    // fused gate + up projection
      {"mlp_down", h, f},                        // down projection
  }};
}

double CostModel::linear_fwd_time(double tokens) const {
  return with_error(2, tokens, exact_linear_fwd_time(tokens));
}

double CostModel::linear_bwd_time(double tokens) const {
  return with_error(3, tokens, exact_linear_bwd_time(tokens));
}

double CostModel::exact_linear_fwd_time(double tokens) const {
  double seconds = pointwise_fwd_time(*this, tokens);
  for (const GemmShape& g : layer_gemms()) seconds += exact_gemm_time(tokens, g.n, g.k);
  return seconds;
}

double CostModel::exact_linear_bwd_time(double tokens) const {
  if (tokens <= 0) return 0.0;
  // The data-gradient and weight-gradient GEMMs together do backward_linear_factor × the forward FLOPs at
  // the forward GEMM's efficiency; they are two calls, hence two overheads per forward GEMM.
  double seconds = pointwise_bwd_time(*this, tokens);
  for (const GemmShape& g : layer_gemms()) {
    if (g.n <= 0 || g.k <= 0) continue;
    seconds += profile_.backward_linear_factor * kFlopsPerMac * tokens * g.n * g.k / gemm_rate(tokens) +
               2.0 * profile_.gemm_call_overhead;
  }
  return seconds;
}

double CostModel::transfer_time(double bytes, const LinkSpec& link, LinkClass cls) const {
  if (bytes <= 0) return 0.0;
  const bool nvlink = cls == LinkClass::nvlink;
  const double overhead = nvlink ? profile_.nvlink_transfer_overhead : profile_.nic_transfer_overhead;
  const double efficiency = nvlink ? profile_.nvlink_efficiency() : profile_.nic_efficiency();
  return with_error(nvlink ? 4 : 5, bytes, link.latency + overhead + bytes / (link.bandwidth * efficiency));
}

CostModel CostModel::with_planner_error(PlannerError error) const {
  CostModel noisy = *this;
  noisy.error_ = error;
  return noisy;
}

double CostModel::with_error(int term, double size, double seconds) const {
  if (error_.relative <= 0 || seconds <= 0 || size <= 0) return seconds;
  // z at octave o: a uniform in [−1, 1] from a hash of (seed, term, o), so the same fit error recurs for
  // every size in the same range, and every run of the scenario sees the same errors.
  const auto knot = [&](std::int64_t octave) {
    std::uint64_t x = error_.seed ^ (0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(term + 1)) ^
                      (0xC2B2AE3D27D4EB4FULL * static_cast<std::uint64_t>(octave + 4096));
    x ^= x >> 33;  // splitmix64's finaliser
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return 2.0 * (static_cast<double>(x >> 11) / 9007199254740992.0) - 1.0;
  };
  const double at = std::log2(size);
  const double below = std::floor(at);
  const auto o = static_cast<std::int64_t>(below);
  const double z = knot(o) + (knot(o + 1) - knot(o)) * (at - below);
  return seconds * (1.0 + error_.relative * z);
}

// --- links ------------------------------------------------------------------------------------------------

int CostModel::max_gpus_per_nic() const {
  if (cluster_.gpu_to_nic.empty()) {
    // No explicit mapping: GPUs spread evenly over the NICs.
    const int nics = std::max(cluster_.nics_per_node, 1);
    return std::max(1, (cluster_.gpus_per_node + nics - 1) / nics);
  }
  int most = 1;
  for (const int nic : cluster_.gpu_to_nic) {
    most = std::max(
        most, static_cast<int>(std::count(cluster_.gpu_to_nic.begin(), cluster_.gpu_to_nic.end(), nic)));
  }
  return most;
}

LinkSpec CostModel::nic_per_gpu() const {
  // One flow per GPU, all GPUs busy at once (a ring step): the GPUs mapped to one NIC split it, and an
  // oversubscribed network core divides what every NIC can push across it. The most-shared NIC is the
  // one the ring waits for, so its share is the planner's figure.
  const double share = cluster_.nic.bandwidth / max_gpus_per_nic() / cluster_.oversubscription;
  return LinkSpec{.bandwidth = share, .latency = cluster_.nic.latency};
}

LinkSpec CostModel::routed_internode() const {
  // A routed flow is split over every NIC of the node through NVLink proxies (dispatch), crosses the
  // network, and is gathered on the destination node (combine). It can use the node's NIC aggregate,
  // but no faster than its source GPU can push over NVLink nor than the PCIe links to the NICs carry.
  double bandwidth = cluster_.nics_per_node * cluster_.nic.bandwidth / cluster_.oversubscription;
  bandwidth = std::min(bandwidth, cluster_.nvlink.bandwidth);
  if (cluster_.pcie_bandwidth)
    bandwidth = std::min(bandwidth, cluster_.nics_per_node * *cluster_.pcie_bandwidth);
  return LinkSpec{.bandwidth = bandwidth, .latency = cluster_.nic.latency + 2.0 * cluster_.nvlink.latency};
}

// --- memory -----------------------------------------------------------------------------------------------

double CostModel::model_state_bytes_per_gpu() const {
  // Weights and gradients in the model dtype are held whole by every GPU that holds the parameter; the
  // rest of the per-parameter optimizer bytes (fp32 master, Adam m and v: 12 of the 16 in bf16) are sharded
  // ZeRO-1 style over the GPUs that hold it: every GPU for the dense parameters, the expert-data-parallel
  // group (shards / expert_degree) for a routed expert's, as Megatron-Core's distributed optimizer does.
  const double replicated_per_param = 2.0 * model_.dtype_bytes;  // weights + grads
  const double sharded_per_param = std::max(0.0, profile_.optimizer_bytes_per_param - replicated_per_param);
  const double shards =
      profile_.model_state_shards > 0 ? profile_.model_state_shards : std::max(cluster_.world_size(), 1);
  const double held = params_.per_gpu;
  if (!model_.has_experts()) return held * (replicated_per_param + sharded_per_param / shards);
  const double routed = params_.routed_per_gpu;
  const double expert_shards = std::max(1.0, shards / expert_degree_);
  return held * replicated_per_param +
         sharded_per_param * ((held - routed) / shards + routed / expert_shards);
}

double CostModel::activation_bytes_per_token() const {
  // activation_bytes_factor·hidden bytes per token per layer holds for 16-bit activations; scale by dtype.
  if (!model_.has_experts())
    return model_.layers * profile_.activation_bytes_factor * model_.hidden * model_.dtype_bytes / 2.0;
  // An MoE layer keeps more than the one MLP Korthikanti et al. count: the layer's α·h with their MLP
  // share (19·h: the first linear's input 2h, the 4h-wide GeLU's input and output 8h each, the dropout
  // mask h) replaced by the MoE FFN's, in 16-bit bytes per token (docs/METRICS.md, "Memory and token
  // capacity"): the normalised input 2h and the mask h once; per routed expert the token's dispatched copy
  // 2h, its SwiGLU intermediates (gate and up 4·f_e, their product 2·f_e) and its output 2h, kept for the
  // gate weight's gradient; per shared expert the intermediates 6·f_e; the router's fp32 probabilities 4·E.
  constexpr double kDenseMlpShare = 19.0;
  const double h = model_.hidden, f = model_.moe.expert_ffn_hidden;
  const MoeSpec& moe = model_.moe;
  const double moe_ffn =
      3.0 * h + moe.top_k * (4.0 * h + 6.0 * f) + moe.shared_experts * 6.0 * f + 4.0 * moe.experts;
  const double per_layer = profile_.activation_bytes_factor * h + std::max(0.0, moe_ffn - kDenseMlpShare * h);
  return model_.layers * per_layer * model_.dtype_bytes / 2.0;
}

std::int64_t CostModel::token_capacity_per_gpu() const {
  const double usable = cluster_.gpu.memory_bytes * (1.0 - profile_.memory_reserve_fraction);
  const double free_for_activations = usable - model_state_bytes_per_gpu();
  if (free_for_activations <= 0) return 0;
  // Saturated rather than cast: a double beyond int64's range converts to -2^63 on x86 (issue 38: a
  // 1e290 TB GPU once gave a capacity of -9223 P tokens). 2^48 tokens is more than any batch, and leaves
  // the planners' capacity × ranks sums far from overflow.
  constexpr double kMostTokens = 0x1p48;
  return static_cast<std::int64_t>(
      std::min(kMostTokens, std::floor(free_for_activations / activation_bytes_per_token())));
}

}  // namespace zb
