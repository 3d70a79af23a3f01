// The "workload" section: exactly one source of document lengths, and the per-iteration budget.
#include <fmt/format.h>

#include "core/config/did_you_mean.hpp"
#include "core/config/document_limit.hpp"
#include "core/config/known_names.hpp"
#include "core/config/scenario_sections.hpp"

namespace zb::sections {
namespace {

constexpr std::int64_t max_tokens = std::int64_t{1} << 40;  // ~1.1e12: far above any real budget
constexpr std::int64_t max_iterations = 1'000'000;

// The hint of every document length above kMaxDocumentLength.
std::string longest_document_hint(std::string_view key) {
  return fmt::format(
      "set {} to at most {} tokens; longer documents would overflow the causal pair counts "
      "(docs/SCENARIOS.md, \"Document lengths\")",
      key, kMaxDocumentLength);
}

// A length of one document at `key` (max_seq_len, a distribution's max or value): an integer in
// [1, kMaxDocumentLength], a longer one reported with the supported maximum.
std::optional<std::int64_t> document_length(const ObjectReader& section, std::string_view key) {
  const auto value = section.integer(key, 1, max_tokens);
  if (!value || *value <= kMaxDocumentLength) return value;
  section.context().add(section.path_of(key),
                        fmt::format("{} tokens is longer than the longest document this build plans, {} "
                                    "(2^30) tokens",
                                    *value, kMaxDocumentLength),
                        longest_document_hint(key));
  return std::nullopt;
}

// The keys a distribution object may have depend on its kind; a key of another kind is a mistake worth
// reporting (a "sigma" on a uniform distribution would otherwise be silently ignored).
std::vector<std::string_view> distribution_keys(std::string_view kind) {
  if (kind == "uniform") return {"kind", "min", "max"};
  if (kind == "fixed") return {"kind", "value"};
  if (kind == "lognormal") return {"kind", "median", "sigma", "tail_alpha", "tail_from"};
  return {"kind", "median", "sigma", "tail_alpha", "tail_from", "min", "max", "value"};  // kind is wrong
}

DistributionSpec read_distribution(const ObjectReader& workload) {
  DistributionSpec spec;
  const nlohmann::json* raw = workload.get("distribution");
  if (raw == nullptr) return spec;
  std::string kind = spec.kind;
  if (raw->is_object() && raw->contains("kind") && (*raw)["kind"].is_string())
    kind = (*raw)["kind"].get<std::string>();
  const auto section = workload.object("distribution", distribution_keys(kind));
  if (!section) return spec;
  if (auto checked = section->choice("kind", known_distribution_kinds)) spec.kind = *checked;

  if (spec.kind == "lognormal") {
    if (auto median = section->number("median", 0, 1e12, true)) {
      if (*median > static_cast<double>(kMaxDocumentLength)) {
        section->context().add(section->path_of("median"),
                               fmt::format("a median of {} tokens is longer than the longest document this "
                                           "build plans, {} (2^30) tokens",
                                           *median, kMaxDocumentLength),
                               longest_document_hint("median"));
      } else {
        spec.median = *median;
      }
    }
    if (auto sigma = section->number("sigma", 0, 100, true)) spec.sigma = *sigma;
    if (auto alpha = section->number("tail_alpha", 0, 100, true)) spec.tail_alpha = *alpha;
    if (auto from = section->number("tail_from", 0, 1, true)) {
      if (*from >= 1)
        section->context().add(section->path_of("tail_from"), "must be below 1 (a quantile)");
      else
        spec.tail_from = *from;
    }
  } else if (spec.kind == "uniform") {
    section->require("max", "the largest document length");
    const auto min = document_length(*section, "min");
    const auto max = document_length(*section, "max");
    if (min) spec.min = *min;
    if (max) spec.max = *max;
    if (min && max && *min > *max) {
      section->context().add(section->path_of("min"),
                             fmt::format("min ({}) is greater than max ({})", *min, *max));
    }
  } else if (spec.kind == "fixed") {
    section->require("value", "the length of every document");
    if (auto value = document_length(*section, "value")) spec.value = *value;
  }
  return spec;
}

}  // namespace

WorkloadSpec read_workload(const ObjectReader& root, const std::filesystem::path& scenario_folder) {
  LoadContext& context = root.context();
  WorkloadSpec spec;
  if (!root.require("workload", "for example {\"dataset\": \"wikipedia\"}")) return spec;
  const auto workload = root.object("workload", {"dataset", "distribution", "lengths_file", "max_seq_len",
                                                 "long_documents", "tokens_per_iteration", "iterations"});
  if (!workload) return spec;

  std::vector<std::string> sources;
  for (const char* source : {"dataset", "distribution", "lengths_file"}) {
    if (workload->has(source)) sources.emplace_back(source);
  }
  if (sources.empty()) {
    context.add(workload->path(), "no source of document lengths",
                "set exactly one of \"dataset\", \"distribution\" or \"lengths_file\"");
  } else if (sources.size() > 1) {
    std::string named;
    for (const std::string& s : sources) named += (named.empty() ? "\"" : ", \"") + s + "\"";
    context.add(workload->path(), fmt::format("more than one source of document lengths: {}", named),
                "keep exactly one of \"dataset\", \"distribution\" or \"lengths_file\"");
  }

  if (workload->has("dataset")) {
    spec.source = WorkloadSource::dataset;
    if (auto dataset = workload->choice("dataset", known_datasets)) spec.dataset = *dataset;
  } else if (workload->has("distribution")) {
    spec.source = WorkloadSource::distribution;
  } else if (workload->has("lengths_file")) {
    spec.source = WorkloadSource::lengths_file;
  }
  // Every present source is read, so that problems in each are reported even when there are two.
  if (workload->has("distribution")) spec.distribution = read_distribution(*workload);
  if (auto file = workload->non_empty_string("lengths_file")) {
    // Relative to the scenario file, so a scenario and its lengths travel together.
    const std::filesystem::path path(*file);
    spec.lengths_file = (path.is_absolute() ? path : scenario_folder / path).lexically_normal();
  }

  if (auto value = document_length(*workload, "max_seq_len")) spec.max_seq_len = *value;
  if (auto value = workload->choice("long_documents", known_long_document_policies)) {
    spec.long_documents = *value == "split"  ? LongDocuments::split
                          : *value == "keep" ? LongDocuments::keep
                                             : LongDocuments::truncate;
  }
  if (auto value = workload->integer("tokens_per_iteration", 1, max_tokens))
    spec.tokens_per_iteration = *value;
  if (auto value = workload->integer("iterations", 1, max_iterations))
    spec.iterations = static_cast<int>(*value);
  return spec;
}

}  // namespace zb::sections
