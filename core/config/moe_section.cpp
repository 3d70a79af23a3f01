// "model.moe": the mixture-of-experts FFN of a model (docs/SCENARIOS.md, "model.moe"; docs/MOE.md). Read
// over the preset's values, as the other model keys are; a model without "moe" (and not an MoE preset) is
// dense and nothing here changes it.
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "core/config/moe_section.hpp"

namespace zb::sections {
namespace {

// Far above any real model (DeepSeek-V3 routes over 256 experts), low enough that counts per expert and
// rank stay small arrays.
constexpr int max_experts = 4096;
// A factor of experts / top_k already lets one expert take every token of a rank; beyond 1000 nothing more
// can be meant.
constexpr double max_capacity_factor = 1000;
constexpr std::string_view dropless = "dropless";

// "capacity_factor": a number > 0, or "dropless" (the default): no token is ever dropped.
void read_capacity_factor(const ObjectReader& moe, MoeSpec& spec) {
  const nlohmann::json* value = moe.get("capacity_factor");
  if (value == nullptr) return;
  const std::string hint =
      "a number > 0 (Megatron-Core's moe_expert_capacity_factor, e.g. 1.25), or \"dropless\"";
  if (value->is_string()) {
    if (value->get_ref<const std::string&>() == dropless) {
      spec.capacity_factor.reset();
    } else {
      moe.context().add(moe.path_of("capacity_factor"),
                        fmt::format("unknown capacity factor \"{}\"", printable(value->get<std::string>())),
                        hint);
    }
    return;
  }
  if (!value->is_number()) {
    moe.context().add(moe.path_of("capacity_factor"),
                      "expected a number or \"dropless\", got " + describe_json(*value), hint);
    return;
  }
  if (auto factor = moe.number("capacity_factor", 0, max_capacity_factor, /*min_exclusive=*/true))
    spec.capacity_factor = *factor;
}

// "routing": the knobs of the router's load model (core/workload/moe_router.hpp says what each means).
void read_routing(const ObjectReader& moe, RouterLoadSpec& spec) {
  const auto routing = moe.object("routing", {"skew", "document_correlation", "layer_drift"});
  if (!routing) return;
  // A Zipf exponent of 10 already sends all but a thousandth of the choices to the first expert.
  if (auto skew = routing->number("skew", 0, 10)) spec.skew = *skew;
  if (auto correlation = routing->number("document_correlation", 0, 1))
    spec.document_correlation = *correlation;
  if (auto drift = routing->number("layer_drift", 0, 1)) spec.layer_drift = *drift;
}

}  // namespace

void read_moe(const ObjectReader& model, MoeSpec& spec) {
  const auto moe = model.object(
      "moe", {"experts", "top_k", "shared_experts", "expert_ffn_hidden", "capacity_factor", "routing"});
  if (!moe) return;
  const bool had_experts = spec.experts > 0;  // from the preset
  if (auto experts = moe->integer("experts", 1, max_experts)) spec.experts = static_cast<int>(*experts);
  if (auto top_k = moe->integer("top_k", 1, max_experts)) spec.top_k = static_cast<int>(*top_k);
  if (auto shared = moe->integer("shared_experts", 0, max_experts))
    spec.shared_experts = static_cast<int>(*shared);
  if (auto width = moe->integer("expert_ffn_hidden", 1, 1 << 22))
    spec.expert_ffn_hidden = static_cast<int>(*width);
  read_capacity_factor(*moe, spec);
  read_routing(*moe, spec.routing);

  if (!had_experts) {
    const char* hint =
        "a dense model becomes a mixture of experts with \"experts\", \"top_k\" and \"expert_ffn_hidden\"";
    for (const char* key : {"experts", "top_k", "expert_ffn_hidden"}) {
      if (!moe->has(key)) moe->context().add(moe->path_of(key), "missing required key", hint);
    }
  }
  if (spec.experts > 0 && spec.top_k > spec.experts) {
    moe->context().add(
        moe->path_of("top_k"),
        fmt::format("top_k ({}) is above the expert count ({}): a token's experts are distinct", spec.top_k,
                    spec.experts),
        moe->has("top_k") ? "" : "the preset's top_k is kept; set top_k too");
  }
}

}  // namespace zb::sections
