#pragma once
// Parameter counts of a model, dense or mixture-of-experts (docs/METRICS.md, "Parameters"): what a layer
// stores, what one token uses, what one GPU holds when the routed experts are split over the expert
// degree. They depend on the model alone (and the expert degree), not on a cluster, so `list models` and
// the cost model read the same counts. Projections and experts only: the RMSNorm weights (2·hidden per
// layer) are under 0.01 % of every preset and hold no GEMM, so they are left out here as in the FLOPs.
#include "core/config/scenario.hpp"

namespace zb {

struct ModelParams {
  // Per layer.
  double gemm_per_layer = 0;            // one token's multiply-accumulates in the layer's GEMMs (its FFN at
                                        // ModelSpec::token_ffn_width)
  double stored_per_layer = 0;          // attention, router and every expert (dense: gemm_per_layer)
  double active_per_layer = 0;          // one token's: gemm_per_layer and the router
  double per_gpu_per_layer = 0;         // one GPU's: the routed experts split over the expert degree
  double routed_per_gpu_per_layer = 0;  // of which routed experts (0 for a dense model)
  // The model: every layer and both embeddings (input embedding and output projection, untied as in Llama).
  double total = 0;
  double active = 0;
  double per_gpu = 0;
  double routed_per_gpu = 0;
};

// expert_degree: the GPUs one layer's routed experts are spread over (1 for a dense model); it must divide
// the experts (the scenario's loader checks, and so does CostModel).
[[nodiscard]] ModelParams count_params(const ModelSpec& model, int expert_degree = 1);

}  // namespace zb
