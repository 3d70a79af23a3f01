// The "parallelism" section: tensor parallelism (Megatron TP with sequence parallelism) under every
// strategy, and expert parallelism for mixture-of-experts models. Only what a TP group can really do is
// accepted: it lives inside one node (NVLink) and splits attention heads, K/V heads and the GEMMs' columns
// evenly, as Megatron-Core requires. Expert groups are carved out of the N/t ranks the strategies plan on
// (Megatron-Core's MoE parallel folding, the experts' TP equal to the attention's; docs/MOE.md).
#include <fmt/format.h>

#include "core/config/scenario_sections.hpp"

namespace zb::sections {
namespace {

// Returns whether `t` is a TP width this cluster and model can take; reports each reason it is not.
bool check_tensor(const ObjectReader& section, int t, const ClusterSpec* cluster, const ModelSpec* model) {
  const std::string path = section.path_of("tensor");
  LoadContext& context = section.context();
  bool ok = true;
  if (cluster != nullptr && cluster->gpus_per_node % t != 0) {
    context.add(path,
                fmt::format("tensor ({}) must divide the node's {} GPUs: a TP group stays on NVLink", t,
                            cluster->gpus_per_node),
                "use 1, 2, 4 or 8 on 8-GPU nodes");
    ok = false;
  }
  if (model != nullptr) {
    if (model->heads % t != 0) {
      context.add(path,
                  fmt::format("tensor ({}) must divide the model's {} attention heads", t, model->heads));
      ok = false;
    } else if (model->kv_heads % t != 0) {
      context.add(path,
                  fmt::format("tensor ({}) must divide the model's {} K/V heads (Megatron-Core requires "
                              "num_query_groups % tensor_model_parallel_size == 0)",
                              t, model->kv_heads));
      ok = false;
    } else if (model->ffn_hidden % t != 0 || model->vocab % t != 0) {
      context.add(path, fmt::format("tensor ({}) must divide ffn_hidden ({}) and vocab ({})", t,
                                    model->ffn_hidden, model->vocab));
      ok = false;
    } else if (model->has_experts() && model->moe.expert_ffn_hidden % t != 0) {
      context.add(path, fmt::format("tensor ({}) must divide expert_ffn_hidden ({}): each expert's GEMMs are "
                                    "split over the TP group as the dense FFN's are",
                                    t, model->moe.expert_ffn_hidden));
      ok = false;
    }
  }
  return ok;
}

// Returns whether `e` expert groups fit this model and the `ranks` (N/t) the strategies plan on.
bool check_expert(const ObjectReader& section, int e, std::optional<int> ranks, const ModelSpec* model) {
  const std::string path = section.path_of("expert");
  LoadContext& context = section.context();
  if (model == nullptr) return true;  // the model section's own problems are reported there
  if (!model->has_experts()) {
    if (e == 1) return true;
    context.add(path, fmt::format("expert ({}) needs a model with experts; this model is dense", e),
                "name an MoE preset (zeppelin-bench list models) or give the model a \"moe\" object");
    return false;
  }
  bool ok = true;
  if (model->moe.experts % e != 0) {
    context.add(
        path, fmt::format("expert ({}) must divide the model's {} experts: every expert-parallel rank holds "
                          "the same number of experts",
                          e, model->moe.experts));
    ok = false;
  }
  if (ranks && *ranks % e != 0) {
    context.add(
        path, fmt::format("expert ({}) must divide the {} data- and context-parallel ranks (GPUs / tensor): "
                          "expert groups are carved out of them",
                          e, *ranks));
    ok = false;
  }
  return ok;
}

}  // namespace

ParallelismSpec read_parallelism(const ObjectReader& root, const ClusterSpec* cluster,
                                 const ModelSpec* model) {
  ParallelismSpec spec;
  const auto section = root.object("parallelism", {"tensor", "expert"});
  if (!section) return spec;
  bool tensor_ok = true;
  if (section->has("tensor")) {
    const auto tensor = section->integer("tensor", 1, 64);
    tensor_ok = tensor && check_tensor(*section, static_cast<int>(*tensor), cluster, model);
    if (tensor_ok) spec.tensor = static_cast<int>(*tensor);
  }
  if (const auto expert = section->integer("expert", 1, 4096)) {
    // With a bad tensor width the ranks are unknown: its problem is reported, not a follow-on one.
    const std::optional<int> ranks = cluster != nullptr && tensor_ok
                                         ? std::optional<int>(cluster->world_size() / spec.tensor)
                                         : std::nullopt;
    if (check_expert(*section, static_cast<int>(*expert), ranks, model))
      spec.expert = static_cast<int>(*expert);
  }
  return spec;
}

}  // namespace zb::sections
