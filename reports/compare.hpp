#pragma once
// `zeppelin-bench compare BASE.json CAND.json`: CI performance gating between two JSON reports
// (docs/REPORT_FORMAT.md). Per system (matched by label):
// - whether it fitted in memory: going from fitting to out of memory is a regression outright (an OOM is
//   the plan's memory model speaking, not noise, so no test is needed);
// - per metric, the change of the mean and a two-sided p-value. Simulations of the same batches (same
//   scenario, seed and workload) are compared pairwise per iteration (a t test on the log ratios); other
//   runs with the Mann–Whitney U test over the samples.
// A regression needs BOTH an effect beyond the threshold and significance (p < alpha): a single-point ratio
// is too noisy to gate on, and a significant but tiny change is not worth failing a build for.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "reports/metric_table.hpp"
#include "reports/paired_test.hpp"
#include "reports/sample_statistics.hpp"

namespace zb::reports {

struct CompareOptions {
  double threshold = 0.05;  // relative change, 0.05 = 5 %
  double alpha = 0.05;      // significance level of either test
};

// Fewer unpaired samples than this on either side: the U test cannot mean anything, so no verdict.
inline constexpr int minimum_samples_for_verdict = 3;
// Fewer pairs than this: the paired t test has no degree of freedom.
inline constexpr int minimum_pairs_for_verdict = 2;

enum class Verdict { regression, improvement, unchanged, inconclusive };
enum class ComparisonTest { mann_whitney_u, paired_t };

struct MetricComparison {
  std::string system;
  std::string metric;  // a figure of the metric table that `compare`s (MetricInfo::compared)
  bool higher_is_better = false;
  Shown shown = Shown::si;  // how the text and Markdown forms show its values
  SampleAggregates base;
  SampleAggregates candidate;
  double change = 0;  // candidate mean / base mean − 1 (+0.2 = 20 % larger)
  ComparisonTest test_used = ComparisonTest::mann_whitney_u;
  MannWhitneyResult u_test;  // when test_used is mann_whitney_u
  PairedTestResult paired;   // when test_used is paired_t
  double p_value = 1;        // of the test used
  Verdict verdict = Verdict::unchanged;
  std::string warning;  // why the verdict is inconclusive (empty otherwise)
};

// How often a system ran out of memory on each side. More OOM iterations (as a share of the iterations
// run) is a regression, fewer an improvement.
struct FeasibilityComparison {
  std::string system;
  int base_iterations = 0;
  int base_oom_iterations = 0;
  int candidate_iterations = 0;
  int candidate_oom_iterations = 0;
  Verdict verdict = Verdict::unchanged;
};

struct ComparisonReport {
  std::string base_file;
  std::string candidate_file;
  CompareOptions options;
  bool paired = false;         // both reports simulate the same batches: per-iteration pairs
  std::string pairing_reason;  // why they are (or are not) paired, one sentence
  std::vector<FeasibilityComparison> feasibility;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> warnings;  // other scenario or backend, systems on one side only, too few samples

  [[nodiscard]] int regressions() const;
};

// The largest report file compare reads: the limit `report` reads report.json under
// (cli/report_replay.hpp), so that /dev/zero or an endless pipe is refused instead of filling memory.
inline constexpr std::size_t max_compared_report_bytes = 256u * 1024u * 1024u;

// Reads and checks a report written by `run` (schema_version 1 or 2). Throws zb::Error with exit code 2
// naming the file when it cannot be read, is larger than max_compared_report_bytes, is not JSON, or has
// another schema version or shape (counts included: at most an int's worth of iterations, no more fitted
// than ran).
[[nodiscard]] nlohmann::json load_report_file(const std::filesystem::path& path);

// Throws zb::Error (exit 2) when no system label is in both reports: nothing would be compared.
// `metrics`: whose compared figures are tested (metric_table() unless a test adds its own).
[[nodiscard]] ComparisonReport compare_reports(const nlohmann::json& base, const nlohmann::json& candidate,
                                               const CompareOptions& options,
                                               MetricTable metrics = metric_table());

// 1 (check_failed) when any metric or feasibility row regressed, 0 otherwise; warnings never fail.
[[nodiscard]] ExitCode exit_code_of(const ComparisonReport& report);

[[nodiscard]] std::string format_comparison_text(const ComparisonReport& report);
[[nodiscard]] std::string format_comparison_markdown(const ComparisonReport& report);
[[nodiscard]] nlohmann::ordered_json comparison_to_json(const ComparisonReport& report);

[[nodiscard]] const char* to_string(Verdict verdict);
[[nodiscard]] const char* to_string(ComparisonTest test);

}  // namespace zb::reports
