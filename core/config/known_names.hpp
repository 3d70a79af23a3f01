#pragma once
// The closed vocabularies of the scenario file: every string value that must be one of a fixed set.
// The loader validates against these lists and `zeppelin-bench list` prints them, so they live in one
// place. The dataset presets themselves (their fits and sources) belong to core/workload; this list only
// names them, so that a misspelt dataset is reported together with every other problem of the file.
#include <array>
#include <string_view>

namespace zb {

inline constexpr std::array<std::string_view, 6> known_datasets{"wikipedia", "commoncrawl", "github",
                                                                "arxiv",     "prolong64k",  "bimodal-long"};

inline constexpr std::array<std::string_view, 3> known_distribution_kinds{"lognormal", "uniform", "fixed"};

inline constexpr std::array<std::string_view, 3> known_long_document_policies{"truncate", "split", "keep"};

inline constexpr std::array<std::string_view, 2> known_passes{"fwd", "fwd+bwd"};

inline constexpr std::array<std::string_view, 4> known_output_formats{"json", "html", "trace", "gbench"};

inline constexpr std::array<std::string_view, 3> known_dtypes{"bf16", "fp16", "fp32"};

// Gate metrics. `speedup` is relative (system time / baseline time inverted) and needs a baseline; the
// others are absolute values of one system.
inline constexpr std::array<std::string_view, 7> known_gate_metrics{
    "speedup",         "iteration_seconds", "tokens_per_second", "mfu", "attention_imbalance",
    "nic_utilization", "planner_share"};

[[nodiscard]] constexpr bool gate_metric_needs_baseline(std::string_view metric) {
  return metric == "speedup";
}

// A speedup gate's "baseline" may name this instead of a label: the best baseline of the run (the fastest
// baseline that fitted in memory in every iteration, docs/METRICS.md), known only once the run is over.
inline constexpr std::string_view best_baseline_keyword = "best";

[[nodiscard]] constexpr int dtype_bytes(std::string_view dtype) {
  return dtype == "fp32" ? 4 : 2;
}

}  // namespace zb
