#pragma once
// One row per scenario when `run` is given several scenario files or a folder (the paper library, a
// grid): the subject system (the first system that is no baseline, normally zeppelin), the best baseline
// and the speed-up against it, the speed-up against every baseline, and the aggregates over the rows
// (mean, geometric mean, median, extremes, wins / ties / losses). It is built from each run's RunSummary,
// so it repeats the reports' figures and cannot disagree with them. Definitions: docs/METRICS.md
// ("Combined table"); files: docs/REPORT_FORMAT.md ("The combined table").
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/layouts.hpp"
#include "reports/paired_test.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

struct CombinedSystem {
  std::string label;
  bool is_baseline = false;
  std::optional<double> mean_seconds;  // none when it ran out of memory in some iteration
  int feasible_iterations = 0;
  int iterations = 0;
  std::vector<LayoutCount> layouts;  // the layouts its plans ran (reports/layouts.hpp); empty when unrecorded
};

struct CombinedRow {
  std::string scenario;
  std::string file;        // the scenario file as given
  std::string report_dir;  // where its reports were written
  std::string backend;
  bool simulated = false;
  std::string cluster;
  std::string model;
  std::string hardware_profile;
  // The scenario's batches (the same for every system): the shares in documents longer than one GPU's and
  // one node's token capacity (core/metrics/long_documents.hpp); not recorded for a hand-built result.
  LongDocumentRecord long_documents;
  std::string subject;           // its label; empty when every system is a baseline
  std::string subject_strategy;  // "zeppelin": names the subject in the aggregates when labels differ
  std::optional<double> subject_seconds;
  std::vector<LayoutCount> subject_layouts;  // the layouts the subject's plans ran; empty when unrecorded
  std::optional<std::string> best_baseline;
  std::optional<double> best_seconds;
  std::optional<double> speedup_vs_best;
  std::vector<std::pair<std::string, std::optional<double>>> speedups;  // subject vs each baseline, ranked
  // The 95 % interval of each speed-up from the paired t test over the iterations (iteration i of both
  // systems ran the same batch; reports/paired_test.hpp): against the best baseline, and against each
  // baseline in `speedups` order. None where the speed-up is none or fewer than 2 iterations were paired.
  std::optional<RatioInterval> interval_vs_best;
  std::vector<std::pair<std::string, std::optional<RatioInterval>>> intervals;
  std::vector<CombinedSystem> systems;  // scenario order
  bool gates_passed = true;
  std::string error;  // a runtime failure of this scenario; the row then has no figures
};

// "wins" / "ties" / "loses" against the best baseline (ties: within ±0.5 %), or "n/a".
[[nodiscard]] std::string verdict_of(const CombinedRow& row);

struct RatioAggregates {
  int count = 0;
  double mean = 0;
  double geometric_mean = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  std::string min_scenario;
  std::string max_scenario;
  // Over the same rows, by the paired t test of each row's speed-up (p < 0.05, i.e. its 95 % interval
  // excludes 1): significantly faster, significantly slower, neither, and rows without an interval.
  int significantly_faster = 0;
  int significantly_slower = 0;
  int not_significant = 0;
  int untested = 0;
};

struct CombinedTable {
  std::string title;  // "scenarios/paper" or "3 scenarios"
  std::vector<CombinedRow> rows;
  std::vector<std::string> baseline_columns;  // every baseline label of any row, first appearance first
  RatioAggregates versus_best;
  std::vector<std::pair<std::string, RatioAggregates>> versus_baseline;  // per baseline column
  int wins = 0, ties = 0, losses = 0;
  std::vector<LayoutCount> subject_layouts;  // summed over the rows
};

[[nodiscard]] CombinedRow combined_row(const RunSummary& summary, const std::string& file,
                                       const std::string& report_dir);
[[nodiscard]] CombinedRow failed_row(const std::string& scenario, const std::string& file,
                                     const std::string& error);
// The rows in the order given, with the columns and aggregates filled in.
[[nodiscard]] CombinedTable combine(std::string title, std::vector<CombinedRow> rows);

[[nodiscard]] std::string combined_text(const CombinedTable& table);      // console
[[nodiscard]] std::string combined_markdown(const CombinedTable& table);  // combined.md
[[nodiscard]] nlohmann::ordered_json combined_json(const CombinedTable& table);
[[nodiscard]] std::string combined_html(const CombinedTable& table);

// Writes combined.json, combined.md and combined.html into `directory` (each atomically); returns them.
std::vector<std::filesystem::path> write_combined_table(const CombinedTable& table,
                                                        const std::filesystem::path& directory);

}  // namespace zb::reports
