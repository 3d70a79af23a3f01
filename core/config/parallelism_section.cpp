// The "parallelism" section: tensor parallelism (Megatron TP with sequence parallelism) under every
// strategy. Only what a TP group can really do is accepted: it lives inside one node (NVLink) and splits
// attention heads, K/V heads and the GEMMs' columns evenly, as Megatron-Core requires.
#include <fmt/format.h>

#include "core/config/scenario_sections.hpp"

namespace zb::sections {

ParallelismSpec read_parallelism(const ObjectReader& root, const ClusterSpec* cluster,
                                 const ModelSpec* model) {
  ParallelismSpec spec;
  const auto section = root.object("parallelism", {"tensor"});
  if (!section) return spec;
  const auto tensor = section->integer("tensor", 1, 64);
  if (!tensor) return spec;
  const int t = static_cast<int>(*tensor);
  const std::string path = section->path_of("tensor");
  LoadContext& context = root.context();
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
    }
  }
  if (ok) spec.tensor = t;
  return spec;
}

}  // namespace zb::sections
