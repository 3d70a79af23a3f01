// The "model" section: a preset (optional) whose values explicit keys override, then shape checks.
#include <fmt/format.h>

#include "core/config/did_you_mean.hpp"
#include "core/config/known_names.hpp"
#include "core/config/moe_section.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario_sections.hpp"

namespace zb::sections {
namespace {

std::string preset_list() {
  std::string out;
  for (const std::string& name : model_preset_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Reads one dimension into `field` when present and valid; returns whether the key was present.
bool read_dimension(const ObjectReader& model, std::string_view key, int max, int& field) {
  if (auto value = model.integer(key, 1, max)) field = static_cast<int>(*value);
  return model.has(key);
}

}  // namespace

ModelSpec read_model(const ObjectReader& root, bool& ok) {
  LoadContext& context = root.context();
  const std::size_t problems_before = context.problems.size();
  ok = false;
  ModelSpec spec;
  if (!root.require("model", "for example {\"preset\": \"llama-7b\"}")) return spec;
  const auto model = root.object(
      "model", {"preset", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "dtype", "moe"});
  if (!model) return spec;

  bool from_preset = false;
  bool unknown_preset = false;
  if (auto preset = model->string("preset")) {
    if (const ModelPreset* found = find_model_preset(*preset)) {
      spec = found->spec;
      from_preset = true;
    } else {
      unknown_preset = true;
      context.add(
          model->path_of("preset"),
          fmt::format("unknown model preset \"{}\"; the presets are {}", printable(*preset), preset_list()),
          did_you_mean(*preset, model_preset_names()));
    }
  }

  // Upper bounds only keep later arithmetic (FLOPs, bytes) far from overflow; real models are far below.
  const bool has_layers = read_dimension(*model, "layers", 10'000, spec.layers);
  const bool has_hidden = read_dimension(*model, "hidden", 1 << 20, spec.hidden);
  const bool has_heads = read_dimension(*model, "heads", 1 << 16, spec.heads);
  const bool has_kv_heads = read_dimension(*model, "kv_heads", 1 << 16, spec.kv_heads);
  const bool has_ffn = read_dimension(*model, "ffn_hidden", 1 << 22, spec.ffn_hidden);
  const bool has_vocab = read_dimension(*model, "vocab", 1 << 24, spec.vocab);
  if (auto dtype = model->choice("dtype", known_dtypes)) {
    spec.dtype = *dtype;
    spec.dtype_bytes = dtype_bytes(*dtype);
  }
  read_moe(*model, spec.moe);

  if (!from_preset && !unknown_preset) {
    const std::string hint = "required when the model names no preset (presets: " + preset_list() + ")";
    if (!has_layers) context.add(model->path_of("layers"), "missing required key", hint);
    if (!has_hidden) context.add(model->path_of("hidden"), "missing required key", hint);
    if (!has_heads) context.add(model->path_of("heads"), "missing required key", hint);
    if (!has_ffn) context.add(model->path_of("ffn_hidden"), "missing required key", hint);
    if (!has_vocab) context.add(model->path_of("vocab"), "missing required key", hint);
    if (!has_kv_heads) spec.kv_heads = spec.heads;  // multi-head attention unless told otherwise
  }

  // Shape checks only when both sides are known, so a missing key is not reported twice.
  if (spec.heads > 0 && spec.hidden > 0 && spec.hidden % spec.heads != 0) {
    context.add(model->path_of("heads"),
                fmt::format("heads ({}) must divide hidden ({}) into equal head dimensions", spec.heads,
                            spec.hidden));
  }
  if (spec.kv_heads > 0 && spec.heads > 0 && spec.heads % spec.kv_heads != 0) {
    context.add(
        model->path_of("kv_heads"),
        fmt::format("kv_heads ({}) must divide heads ({}) for grouped-query attention", spec.kv_heads,
                    spec.heads),
        from_preset && has_heads && !has_kv_heads ? "the preset's kv_heads is kept; set kv_heads too" : "");
  }
  ok = context.problems.size() == problems_before;
  return spec;
}

}  // namespace zb::sections
