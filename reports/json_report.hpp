#pragma once
// The JSON report (docs/REPORT_FORMAT.md): everything a run measured, in a stable, versioned form that
// `compare`, CI scripts and later tools read. Keys come out in a fixed order (nlohmann::ordered_json) so two
// runs of the same scenario differ only in their volatile fields, listed below.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/run/run_result.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

// 2: `run` (what ran, after overrides) and `provenance` (who, where, when) replace `context`.
inline constexpr int report_schema_version = 2;

[[nodiscard]] nlohmann::ordered_json report_json(const RunResult& run, const RunSummary& summary,
                                                 const RunContext& context);

void write_json_report(const RunResult& run, const RunSummary& summary, const RunContext& context,
                       const std::filesystem::path& path);

// The fields that change from one run to the next on the same inputs: the whole `provenance` section
// (build, git revision, command line, host, date, NCCL environment) and the measured (wall-clock) planner
// times. JSON pointers, with "*" standing for every element of an array.
[[nodiscard]] const std::vector<std::string>& volatile_report_fields();

// A copy of `report` with every volatile field set to null, for golden-file tests and for diffing two
// reports by eye.
[[nodiscard]] nlohmann::ordered_json without_volatile_fields(nlohmann::ordered_json report);

// The fingerprint of one batch as the report writes it (workload.batches[].lengths_fnv1a, zb::lengths_fnv1a
// in 16 hex digits): equal fingerprints, equal batches, so `compare` can prove two simulations saw the same
// documents before pairing their iterations.
[[nodiscard]] std::string lengths_fingerprint(std::uint64_t lengths_fnv1a);

// Serialises as the report file does: 2-space indent, a final newline, invalid UTF-8 replaced.
[[nodiscard]] std::string dump_report(const nlohmann::ordered_json& report);

}  // namespace zb::reports
