#pragma once
// Dataset presets: documented fits of real corpora's document-length distributions. The table itself is
// in datasets.cpp, with the source and the reasoning behind every number; docs/WORKLOADS.md summarises it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/workload/workload.hpp"

namespace zb {

// What the component shares of a preset are shares of. Corpora are described by where their tokens come
// from ("60% of tokens from long sources"); the sampler needs shares of documents, and converts.
enum class ShareOf { documents, tokens };

struct DatasetComponent {
  std::string label;              // e.g. "books (PG-19-like)"
  DistributionSpec distribution;  // kind "lognormal", optionally with a Pareto tail
  double share = 1.0;             // of documents or of tokens, as the preset's shares_of says
};

// The quantiles of document length (tokens) that a preset is meant to reproduce; tests sample the preset
// and compare against them within `tolerance` (relative).
struct QuantileTargets {
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

struct DatasetPreset {
  std::string name;
  std::string source;       // where the figures come from
  std::string assumptions;  // what was assumed beyond the source, and why
  ShareOf shares_of = ShareOf::documents;
  std::vector<DatasetComponent> components;  // one for a plain fit, several for a mixture
  QuantileTargets targets;
  double tolerance = 0.05;
  std::optional<double> source_mean;  // mean tokens per document reported by the source, when it has one
};

// The table, in a fixed order (the order `list datasets` prints).
[[nodiscard]] const std::vector<DatasetPreset>& dataset_presets();

// nullptr when there is no preset of that name.
[[nodiscard]] const DatasetPreset* find_dataset(std::string_view name);

// The preset's names, comma-separated: for error hints and help texts.
[[nodiscard]] std::string dataset_names();

// Normalised shares of documents of the components (token shares divided by each component's mean).
[[nodiscard]] std::vector<double> document_weights(const DatasetPreset& preset);

// Analytic mean document length of the preset (before max_seq_len).
[[nodiscard]] double analytic_mean(const DatasetPreset& preset);

[[nodiscard]] std::shared_ptr<const LengthSampler> make_dataset_sampler(const DatasetPreset& preset);

// A multi-line, human-readable account: fit, source, assumptions, targets.
[[nodiscard]] std::string describe(const DatasetPreset& preset);

}  // namespace zb
