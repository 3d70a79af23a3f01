#pragma once
// What `compare` reads from a report.json, for both schema versions it accepts (1: before the `run`
// section; 2: with it). Internal to reports/compare*.cpp. Every accessor tolerates missing keys (readers
// ignore what they do not know, and an older report lacks some): the shape `compare` cannot do without is
// checked once, by load_report_file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/metric_table.hpp"

namespace zb::reports::compare_input {

// The figures `compare` tests (MetricInfo::compared), in table order; each one's name is its key under
// systems[].samples and systems[].per_iteration[].metrics.
[[nodiscard]] std::vector<const MetricInfo*> compared_metrics(MetricTable metrics);

// Throws zb::Error (exit 2) naming `file` when `report` lacks what compare needs (of the figures
// `metrics` compares).
void check_report_shape(const nlohmann::json& report, const std::string& file,
                        MetricTable metrics = metric_table());

[[nodiscard]] std::string backend_of(const nlohmann::json& report);  // "" when not recorded
[[nodiscard]] bool simulated(const nlohmann::json& report);
[[nodiscard]] std::string scenario_name(const nlohmann::json& report);
[[nodiscard]] std::optional<std::uint64_t> effective_seed(const nlohmann::json& report);  // schema 2 only
[[nodiscard]] const nlohmann::json* effective_scenario(const nlohmann::json& report);     // schema 2 only
// One fingerprint per iteration's batch (workload.batches[].lengths_fnv1a), empty when not recorded.
[[nodiscard]] std::vector<std::string> batch_fingerprints(const nlohmann::json& report);

[[nodiscard]] const nlohmann::json* find_system(const nlohmann::json& report, const std::string& label);
// The systems' labels, quoted and joined by ", " ("none" without systems), for messages.
[[nodiscard]] std::string labels_of(const nlohmann::json& report);
[[nodiscard]] std::vector<double> samples_of(const nlohmann::json& system, const std::string& key);
[[nodiscard]] int iterations_of(const nlohmann::json& system);
[[nodiscard]] int oom_iterations_of(const nlohmann::json& system);

// The metric per iteration index, for the iterations that fitted (others are left out).
struct IterationValue {
  std::int64_t iteration = 0;
  double value = 0;
};
[[nodiscard]] std::vector<IterationValue> per_iteration_values(const nlohmann::json& system,
                                                               const std::string& key);

// Whether the two reports simulate the same batches, so iteration i of one pairs with iteration i of the
// other (compare_pairing.cpp). The reason is one sentence for the output either way.
struct PairingDecision {
  bool paired = false;
  std::string reason;
};
[[nodiscard]] PairingDecision decide_pairing(const nlohmann::json& base, const nlohmann::json& candidate);

// Warnings when the reports did not run the same thing: other scenarios, other backends, or the same
// scenario with other settings after overrides (compare_pairing.cpp).
[[nodiscard]] std::vector<std::string> mismatch_warnings(const nlohmann::json& base,
                                                         const nlohmann::json& candidate);

}  // namespace zb::reports::compare_input
