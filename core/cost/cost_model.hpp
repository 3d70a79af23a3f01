#pragma once
// The cost model: FLOPs, bytes, times and memory for one transformer layer of the scenario's model on the
// scenario's cluster. Every constant lives in HardwareProfile (core/config/hardware_profile.hpp: one
// annotated table, overridable by the scenario's hardware profile); no other module hard-codes a rate.
// Formulas are in docs/METRICS.md.
#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/hardware_profile.hpp"
#include "core/config/scenario.hpp"
#include "core/cost/model_params.hpp"

namespace zb {

// The query length at which one varlen attention call costs what its query tiles cost separately. A
// varlen kernel tiles each sequence's query rows on its own, so a call with tiles of r_i rows doing p_i
// pairs takes Σ p_i / (peak · eff · shape(r_i)); with shape(r) = r / (r + h) that equals the whole call
// at shape(q) for q = Σ p_i / Σ (p_i / r_i), the pair-weighted harmonic mean of the tile lengths
// (docs/METRICS.md). A long document keeps its own efficiency whatever short ones share its call.
class EquivalentQTokens {
 public:
  void add(double pairs, double rows) {
    if (pairs <= 0 || rows <= 0) return;
    pairs_ += pairs;
    inverse_ += pairs / rows;
  }
  [[nodiscard]] double value() const { return inverse_ > 0 ? pairs_ / inverse_ : 0.0; }

 private:
  double pairs_ = 0, inverse_ = 0;
};

// What a planner's profiled fits get wrong (docs/METRICS.md, "Planner error"). Real planners estimate
// with fits of profiled kernels and links, off by several per cent, and a fit's error is systematic: the
// same over a range of sizes, drifting from one range to the next. With `relative` = e > 0, each time
// term of a planner's cost model (attention call, GEMM, linear pass, transfer) is multiplied by 1 + e·z,
// z in [−1, 1] drawn from `seed`, the term and the octave of its size, interpolated linearly in log2 of
// the size between octaves (so times stay continuous and grow with their size). The executors charge
// the exact terms (relative = 0).
struct PlannerError {
  double relative = 0;
  std::uint64_t seed = 0;
};

// Which class of link a transfer crosses: its efficiency and per-transfer overhead come from the
// profile's figures for that class (HardwareProfile::nvlink_efficiency, nic_efficiency).
enum class LinkClass { nvlink, nic };

class CostModel {
 public:
  // expert_degree: the scenario's parallelism.expert, the GPUs (of the TP grid) one MoE layer's routed
  // experts are spread over; it sets what one GPU holds (docs/MOE.md). 1 for a dense model.
  CostModel(const ClusterSpec& cluster, const ModelSpec& model, HardwareProfile profile = {},
            int expert_degree = 1);
  // The scenario's cluster, model, hardware profile and expert degree.
  explicit CostModel(const Scenario& scenario);
  // The same model, profile and expert degree on another cluster (a tensor-parallel grid), exact (no
  // planner error: callers that want one add it with with_planner_error).
  [[nodiscard]] CostModel with_cluster(const ClusterSpec& cluster) const;
  // The same model as a planner with profiled fits sees it (PlannerError above).
  [[nodiscard]] CostModel with_planner_error(PlannerError error) const;
  [[nodiscard]] const PlannerError& planner_error() const { return error_; }

  // --- counting --------------------------------------------------------------------------------------
  // Number of (q, k) pairs with q in [q0, q1), k in [k0, k1) and, when causal, k ≤ q.
  [[nodiscard]] static std::int64_t attention_pairs(std::int64_t q0, std::int64_t q1, std::int64_t k0,
                                                    std::int64_t k1, bool causal);

  // --- FLOPs per layer --------------------------------------------------------------------------------
  [[nodiscard]] double attention_fwd_flops(double pairs) const;  // 4·hidden per pair (QKᵀ and PV)
  [[nodiscard]] double attention_bwd_flops(double pairs) const;
  [[nodiscard]] double linear_fwd_flops(double tokens) const;  // 2 · tokens · gemm_params_per_layer
  [[nodiscard]] double linear_bwd_flops(double tokens) const;

  // --- parameters (docs/METRICS.md, "Parameters") ---------------------------------------------------
  // Every count of the model's parameters under this expert degree (core/cost/model_params.hpp: stored,
  // active, held per GPU).
  [[nodiscard]] const ModelParams& params() const { return params_; }
  // Multiply-accumulates one token does in the layer's GEMMs (layer_gemms): QKV (GQA-aware), O, and the
  // gated FFN it passes through (dense: the MLP; MoE: its top-k routed and its shared experts).
  [[nodiscard]] double gemm_params_per_layer() const { return params_.gemm_per_layer; }
  // Parameters one layer stores: its attention projections and FFN, or, for MoE, its router and every
  // expert. Dense: gemm_params_per_layer.
  [[nodiscard]] double params_per_layer() const { return params_.stored_per_layer; }
  [[nodiscard]] int expert_degree() const { return expert_degree_; }

  // --- bytes -----------------------------------------------------------------------------------------
  [[nodiscard]] double kv_bytes(double tokens) const;      // K and V of `tokens` tokens
  [[nodiscard]] double hidden_bytes(double tokens) const;  // one hidden-state row per token
  [[nodiscard]] double qkv_bytes(double tokens) const;     // Q, K and V rows (what the remap moves in)

  // --- times (seconds) --------------------------------------------------------------------------------
  // One attention kernel call over `q_tokens` query rows doing `flops` FLOPs. For a varlen call over
  // several sequences (or query chunks), `q_tokens` is EquivalentQTokens below, never the mean length.
  [[nodiscard]] double attention_time(double flops, double q_tokens) const;
  // One GEMM of m×k by k×n.
  [[nodiscard]] double gemm_time(double m, double n, double k) const;
  [[nodiscard]] double linear_fwd_time(
      double tokens) const;  // its GEMMs + memory-bound kernels (pointwise_cost.hpp)
  [[nodiscard]] double linear_bwd_time(double tokens) const;
  // latency + overhead + bytes / (bandwidth · efficiency), with the class's overhead and efficiency
  [[nodiscard]] double transfer_time(double bytes, const LinkSpec& link, LinkClass cls) const;

  // --- links seen by the planner ---------------------------------------------------------------------
  [[nodiscard]] LinkSpec nvlink() const { return cluster_.nvlink; }
  [[nodiscard]] LinkSpec nic_per_gpu() const;       // one NIC, shared by the GPUs mapped to it
  [[nodiscard]] LinkSpec routed_internode() const;  // the node's NIC aggregate seen by one routed flow
  // Local GPUs mapped to the most-shared NIC (2 on a800-4nic, 1 on dgx-h200).
  [[nodiscard]] int max_gpus_per_nic() const;

  // --- memory ----------------------------------------------------------------------------------------
  // All layers plus input and output embeddings (params() has what one token uses, what one GPU holds).
  [[nodiscard]] double total_params() const { return params_.total; }
  [[nodiscard]] double model_state_bytes_per_gpu() const;
  [[nodiscard]] double activation_bytes_per_token() const;  // all layers
  // Tokens one GPU can hold in a micro-batch: (HBM·(1−reserve) − model states) / activation bytes per token,
  // at most 2^48.
  [[nodiscard]] std::int64_t token_capacity_per_gpu() const;

  [[nodiscard]] const ClusterSpec& cluster() const { return cluster_; }
  [[nodiscard]] const ModelSpec& model() const { return model_; }
  [[nodiscard]] const HardwareProfile& profile() const { return profile_; }

  struct GemmShape {
    const char* name;  // the plan's op name
    double n;          // output columns
    double k;          // reduction depth
  };
  // The layer's forward GEMMs (m = tokens for each): QKV, O, gate+up, down (what calibrate times, and
  // PlanBuilder writes). An MoE layer's FFN is its experts at the width token_ffn_width (balanced routing,
  // what a planner sees before the router runs); its router is not among them (docs/MOE.md).
  [[nodiscard]] std::array<GemmShape, 4> layer_gemms() const;

  // The memory-bound kernels' constants (pointwise_cost.hpp), worked out once: the planner charges them
  // for every GEMM it prices, and the HBM rate is a lookup by GPU name.
  struct PointwiseRates {
    double fwd_bytes_per_token = 0, bwd_bytes_per_token = 0;
    double bandwidth = 0;  // streaming HBM bytes/s
  };
  [[nodiscard]] const PointwiseRates& pointwise_rates() const { return pointwise_; }

 private:
  [[nodiscard]] double gemm_rate(double m) const;  // FLOP/s of a GEMM with m rows
  // The exact terms, what the executors charge.
  [[nodiscard]] double exact_attention_time(double flops, double q_tokens) const;
  [[nodiscard]] double exact_gemm_time(double m, double n, double k) const;
  [[nodiscard]] double exact_linear_fwd_time(double tokens) const;
  [[nodiscard]] double exact_linear_bwd_time(double tokens) const;
  // `seconds` of term `term` at `size` as the planner's fit sees it (seconds itself when exact).
  [[nodiscard]] double with_error(int term, double size, double seconds) const;

  ClusterSpec cluster_;
  ModelSpec model_;
  HardwareProfile profile_;
  PointwiseRates pointwise_;
  PlannerError error_;
  int expert_degree_ = 1;
  ModelParams params_;
};

}  // namespace zb
