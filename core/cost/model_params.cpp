#include "core/cost/model_params.hpp"

namespace zb {
namespace {

double attention_params(const ModelSpec& m) {
  const double h = m.hidden;
  return h * (h + 2.0 * m.kv_hidden())  // fused QKV: Q is h wide, K and V kv_hidden each (GQA)
         + h * h;                       // output projection
}

// A SwiGLU FFN of `width`: gate, up and down projections.
double ffn_params(const ModelSpec& m, double width) {
  return 3.0 * m.hidden * width;
}

}  // namespace

ModelParams count_params(const ModelSpec& m, int expert_degree) {
  ModelParams p;
  p.gemm_per_layer = attention_params(m) + ffn_params(m, static_cast<double>(m.token_ffn_width()));
  p.stored_per_layer = p.active_per_layer = p.per_gpu_per_layer = p.gemm_per_layer;
  if (m.has_experts()) {
    const MoeSpec& moe = m.moe;
    // The router: one hidden × experts projection (Mixtral's gate, Qwen-MoE's and Megatron-Core's router).
    const double router = static_cast<double>(m.hidden) * moe.experts;
    const double expert = ffn_params(m, moe.expert_ffn_hidden);
    const double replicated = attention_params(m) + router + moe.shared_experts * expert;
    p.stored_per_layer = replicated + moe.experts * expert;
    p.active_per_layer = p.gemm_per_layer + router;
    // The attention, router and shared experts are replicated over an expert group (Megatron-Core); the
    // routed experts are split over it.
    p.routed_per_gpu_per_layer = static_cast<double>(moe.experts) / expert_degree * expert;
    p.per_gpu_per_layer = replicated + p.routed_per_gpu_per_layer;
  }
  const double embeddings = 2.0 * m.vocab * m.hidden;
  p.total = m.layers * p.stored_per_layer + embeddings;
  p.active = m.layers * p.active_per_layer + embeddings;
  p.per_gpu = m.layers * p.per_gpu_per_layer + embeddings;
  p.routed_per_gpu = m.layers * p.routed_per_gpu_per_layer;
  return p;
}

}  // namespace zb
