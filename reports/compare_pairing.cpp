// When two reports may be compared pairwise, and what to warn about when they did not run the same thing.
// A simulation is deterministic: the same scenario and seed give the same batches (docs/ARCHITECTURE.md,
// "Determinism"), so a per-iteration difference is the code's, not the workload's. The batch fingerprints
// prove it rather than assume it: a change to the workload generator gives other batches for the same seed.
#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "reports/compare_input.hpp"

namespace zb::reports::compare_input {
namespace {

// Where two effective scenarios differ (JSON pointers), output settings left out: where the reports were
// written says nothing about what ran.
std::vector<std::string> differing_paths(const nlohmann::json& base, const nlohmann::json& candidate) {
  std::vector<std::string> out;
  for (const auto& operation : nlohmann::json::diff(base, candidate)) {
    const auto path = operation["path"].get<std::string>();
    if (path == "/output" || path.rfind("/output/", 0) == 0) continue;
    out.push_back(path);
  }
  return out;
}

std::string joined(const std::vector<std::string>& items, std::size_t at_most) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < at_most; ++i) out += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > at_most) out += fmt::format(" and {} more", items.size() - at_most);
  return out;
}

}  // namespace

PairingDecision decide_pairing(const nlohmann::json& base, const nlohmann::json& candidate) {
  constexpr const char* unpaired = "samples compared unpaired (Mann\u2013Whitney U)";
  if (!simulated(base) || !simulated(candidate)) {
    return {false, fmt::format("{}: measured runs (backend {} vs {}) vary from run to run", unpaired,
                               backend_of(base).empty() ? "?" : backend_of(base),
                               backend_of(candidate).empty() ? "?" : backend_of(candidate))};
  }
  const std::string name = scenario_name(base);
  if (name != scenario_name(candidate)) return {false, fmt::format("{}: the scenarios differ", unpaired)};
  const auto base_seed = effective_seed(base);
  const auto candidate_seed = effective_seed(candidate);
  if (!base_seed || !candidate_seed) {
    return {false, fmt::format("{}: a report does not record its effective seed (schema 1)", unpaired)};
  }
  if (*base_seed != *candidate_seed) {
    return {false, fmt::format("{}: the seeds differ ({} vs {}), so the batches do", unpaired, *base_seed,
                               *candidate_seed)};
  }
  // Iteration i's batch depends on the seed and i only, so runs of other lengths share their first batches:
  // those pair up (paired_samples matches iterations by index), the rest have no partner.
  const std::vector<std::string> base_batches = batch_fingerprints(base);
  const std::vector<std::string> candidate_batches = batch_fingerprints(candidate);
  const std::size_t shared = std::min(base_batches.size(), candidate_batches.size());
  if (shared == 0 ||
      !std::equal(base_batches.begin(), base_batches.begin() + static_cast<std::ptrdiff_t>(shared),
                  candidate_batches.begin())) {
    return {false, fmt::format("{}: seed {} gave different batches (the workload generator changed?)",
                               unpaired, *base_seed)};
  }
  return {true, fmt::format(
                    "paired per iteration (t test on log ratios): both simulate scenario \"{}\" with seed {} "
                    "on the same {} batch{}",
                    name, *base_seed, shared, shared == 1 ? "" : "es")};
}

std::vector<std::string> mismatch_warnings(const nlohmann::json& base, const nlohmann::json& candidate) {
  std::vector<std::string> out;
  const std::string base_name = scenario_name(base);
  const std::string candidate_name = scenario_name(candidate);
  if (base_name != candidate_name) {
    out.push_back(
        fmt::format("the reports come from different scenarios (\"{}\" vs \"{}\"): systems with the same "
                    "label ran other workloads",
                    base_name, candidate_name));
  }
  const std::string base_backend = backend_of(base);
  const std::string candidate_backend = backend_of(candidate);
  if (base_backend != candidate_backend) {
    out.push_back(
        fmt::format("the reports come from different backends ({} vs {}): simulated, modelled and measured "
                    "times are not comparable",
                    base_backend.empty() ? "unknown" : base_backend,
                    candidate_backend.empty() ? "unknown" : candidate_backend));
  }
  const nlohmann::json* base_scenario = effective_scenario(base);
  const nlohmann::json* candidate_scenario = effective_scenario(candidate);
  if (base_name == candidate_name && base_scenario != nullptr && candidate_scenario != nullptr) {
    const std::vector<std::string> paths = differing_paths(*base_scenario, *candidate_scenario);
    if (!paths.empty()) {
      out.push_back(fmt::format("scenario \"{}\" ran with other settings (after overrides) at {}", base_name,
                                joined(paths, 6)));
    }
  }
  return out;
}

}  // namespace zb::reports::compare_input
