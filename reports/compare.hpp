#pragma once
// `zeppelin-bench compare BASE.json CAND.json`: CI performance gating between two JSON reports
// (docs/REPORT_FORMAT.md). Per system (matched by label) and metric it reports the change of the mean and
// a two-sided Mann–Whitney U p-value over the per-iteration samples. A regression needs BOTH an effect
// beyond the threshold and significance (p < alpha): a single-point ratio is too noisy to gate on, and a
// significant but tiny change is not worth failing a build for.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "reports/sample_statistics.hpp"

namespace zb::reports {

struct CompareOptions {
  double threshold = 0.05;  // relative change, 0.05 = 5 %
  double alpha = 0.05;      // significance level of the U test
};

// Fewer samples than this on either side: the test cannot mean anything, so no verdict is given.
inline constexpr int minimum_samples_for_verdict = 3;

enum class Verdict { regression, improvement, unchanged, inconclusive };

struct MetricComparison {
  std::string system;
  std::string metric;  // iteration_seconds | tokens_per_second | mfu
  bool higher_is_better = false;
  SampleAggregates base;
  SampleAggregates candidate;
  double change = 0;  // candidate mean / base mean − 1 (+0.2 = 20 % larger)
  MannWhitneyResult test;
  Verdict verdict = Verdict::unchanged;
  std::string warning;  // why the verdict is inconclusive (empty otherwise)
};

struct ComparisonReport {
  std::string base_file;
  std::string candidate_file;
  CompareOptions options;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> warnings;  // systems present on one side only, too few samples, ...

  [[nodiscard]] int regressions() const;
};

// Reads and checks a report written by `run` (schema_version 1). Throws zb::Error with exit code 2 naming
// the file when it cannot be read, is not JSON, or has another schema version or shape.
[[nodiscard]] nlohmann::json load_report_file(const std::filesystem::path& path);

[[nodiscard]] ComparisonReport compare_reports(const nlohmann::json& base, const nlohmann::json& candidate,
                                               const CompareOptions& options);

// 1 (check_failed) when any metric regressed, 0 otherwise; warnings never fail.
[[nodiscard]] ExitCode exit_code_of(const ComparisonReport& report);

[[nodiscard]] std::string format_comparison_text(const ComparisonReport& report);
[[nodiscard]] std::string format_comparison_markdown(const ComparisonReport& report);
[[nodiscard]] nlohmann::ordered_json comparison_to_json(const ComparisonReport& report);

[[nodiscard]] const char* to_string(Verdict verdict);

}  // namespace zb::reports
