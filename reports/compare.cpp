#include "reports/compare.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/config/jsonc.hpp"
#include "reports/compare_input.hpp"

namespace zb::reports {
namespace {

struct SideSamples {
  std::vector<double> base;
  std::vector<double> candidate;
};

// The values of the iterations that fitted on both sides, in iteration order, pair by pair.
SideSamples paired_samples(const nlohmann::json& base_system, const nlohmann::json& candidate_system,
                           const std::string& key) {
  std::map<std::int64_t, double> base_by_iteration;
  for (const auto& [iteration, value] : compare_input::per_iteration_values(base_system, key)) {
    base_by_iteration[iteration] = value;
  }
  SideSamples out;
  for (const auto& [iteration, value] : compare_input::per_iteration_values(candidate_system, key)) {
    const auto base = base_by_iteration.find(iteration);
    if (base == base_by_iteration.end() || !(base->second > 0) || !(value > 0)) continue;
    out.base.push_back(base->second);
    out.candidate.push_back(value);
  }
  return out;
}

// Inconclusive, with the reason, when the sizes cannot support a verdict whatever the data.
bool too_few_for_a_verdict(MetricComparison& out, const CompareOptions& options) {
  const std::string row = out.system + " / " + out.metric;
  if (out.test_used == ComparisonTest::paired_t) {
    if (out.paired.pairs >= minimum_pairs_for_verdict) return false;
    out.warning =
        fmt::format("{}: {} iteration{} fitted on both sides; at least {} pairs are needed for a verdict",
                    row, out.paired.pairs, out.paired.pairs == 1 ? "" : "s", minimum_pairs_for_verdict);
    return true;
  }
  const int fewest = std::min(out.base.count, out.candidate.count);
  if (fewest < minimum_samples_for_verdict) {
    out.warning = fmt::format("{}: {} and {} samples; at least {} per side are needed for a verdict", row,
                              out.base.count, out.candidate.count, minimum_samples_for_verdict);
    return true;
  }
  // Whatever method computed p, these sizes cannot support significance at alpha: even fully separated
  // samples give p ≥ 2 / C(n₁+n₂, n₁) (ties only raise it).
  const double smallest_p = smallest_exact_p_value(out.base.count, out.candidate.count);
  if (smallest_p >= options.alpha) {
    out.warning = fmt::format(
        "{}: with {} and {} samples the U test cannot reach p < {} (smallest p = {:.3g}); "
        "run more iterations",
        row, out.base.count, out.candidate.count, options.alpha, smallest_p);
    return true;
  }
  return false;
}

MetricComparison compare_metric(const std::string& label, const MetricInfo& metric,
                                const SideSamples& samples, ComparisonTest test,
                                const CompareOptions& options) {
  MetricComparison out;
  out.system = label;
  out.metric = std::string(metric.name);
  out.higher_is_better = metric.better == Better::higher;
  out.shown = metric.shown;
  out.test_used = test;
  out.base = aggregate(samples.base);
  out.candidate = aggregate(samples.candidate);
  out.change = out.base.mean != 0 ? out.candidate.mean / out.base.mean - 1 : 0.0;
  if (test == ComparisonTest::paired_t) {
    out.paired = paired_log_ratio_t_test(samples.base, samples.candidate);
    out.p_value = out.paired.p_value;
  } else {
    out.u_test = mann_whitney_u(samples.base, samples.candidate);
    out.p_value = out.u_test.p_value;
  }
  if (too_few_for_a_verdict(out, options)) {
    out.verdict = Verdict::inconclusive;
    return out;
  }
  const double worse_by = out.higher_is_better ? -out.change : out.change;
  const bool significant = out.p_value < options.alpha;
  if (significant && worse_by > options.threshold) {
    out.verdict = Verdict::regression;
  } else if (significant && -worse_by > options.threshold) {
    out.verdict = Verdict::improvement;
  } else {
    out.verdict = Verdict::unchanged;
  }
  return out;
}

// OOM shares compared as fractions of the iterations each side ran (cross-multiplied: exact in integers).
FeasibilityComparison compare_feasibility(const std::string& label, const nlohmann::json& base_system,
                                          const nlohmann::json& candidate_system) {
  FeasibilityComparison out;
  out.system = label;
  out.base_iterations = compare_input::iterations_of(base_system);
  out.base_oom_iterations = compare_input::oom_iterations_of(base_system);
  out.candidate_iterations = compare_input::iterations_of(candidate_system);
  out.candidate_oom_iterations = compare_input::oom_iterations_of(candidate_system);
  const long long base_share = static_cast<long long>(out.base_oom_iterations) * out.candidate_iterations;
  const long long candidate_share =
      static_cast<long long>(out.candidate_oom_iterations) * out.base_iterations;
  out.verdict = candidate_share > base_share   ? Verdict::regression
                : candidate_share < base_share ? Verdict::improvement
                                               : Verdict::unchanged;
  return out;
}

}  // namespace

int ComparisonReport::regressions() const {
  const auto metric_regressions =
      std::count_if(metrics.begin(), metrics.end(),
                    [](const MetricComparison& m) { return m.verdict == Verdict::regression; });
  const auto memory_regressions =
      std::count_if(feasibility.begin(), feasibility.end(),
                    [](const FeasibilityComparison& f) { return f.verdict == Verdict::regression; });
  return static_cast<int>(metric_regressions + memory_regressions);
}

nlohmann::json load_report_file(const std::filesystem::path& path) {
  Location where;
  where.file = path.string();
  // Read up to the limit only: /dev/zero or a pipe once grew to 3 GB in 6 s.
  const std::string text = read_text_file(path, max_compared_report_bytes);
  nlohmann::json report = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) {
    throw_input_error(where, "not valid JSON", "pass the report.json written by `zeppelin-bench run`");
  }
  compare_input::check_report_shape(report, path.string());
  return report;
}

ComparisonReport compare_reports(const nlohmann::json& base, const nlohmann::json& candidate,
                                 const CompareOptions& options, MetricTable metrics) {
  ComparisonReport out;
  out.options = options;
  out.warnings = compare_input::mismatch_warnings(base, candidate);
  const compare_input::PairingDecision pairing = compare_input::decide_pairing(base, candidate);
  out.paired = pairing.paired;
  out.pairing_reason = pairing.reason;
  const ComparisonTest test = out.paired ? ComparisonTest::paired_t : ComparisonTest::mann_whitney_u;
  for (const auto& base_system : base["systems"]) {
    const auto label = base_system["label"].get<std::string>();
    const nlohmann::json* candidate_system = compare_input::find_system(candidate, label);
    if (candidate_system == nullptr) {
      out.warnings.push_back(fmt::format("system \"{}\" is only in the base report; not compared", label));
      continue;
    }
    out.feasibility.push_back(compare_feasibility(label, base_system, *candidate_system));
    for (const MetricInfo* metric : compare_input::compared_metrics(metrics)) {
      const std::string key(metric->name);
      const SideSamples samples = out.paired ? paired_samples(base_system, *candidate_system, key)
                                             : SideSamples{compare_input::samples_of(base_system, key),
                                                           compare_input::samples_of(*candidate_system, key)};
      MetricComparison compared = compare_metric(label, *metric, samples, test, options);
      if (!compared.warning.empty()) out.warnings.push_back(compared.warning);
      out.metrics.push_back(std::move(compared));
    }
  }
  for (const auto& candidate_system : candidate["systems"]) {
    const auto label = candidate_system["label"].get<std::string>();
    if (compare_input::find_system(base, label) == nullptr) {
      out.warnings.push_back(
          fmt::format("system \"{}\" is only in the candidate report; not compared", label));
    }
  }
  // "No regression" over nothing would pass a CI gate that checked nothing (renamed labels, no systems).
  if (out.feasibility.empty()) {
    Location where;
    where.json_path = "systems";
    throw_input_error(
        where,
        fmt::format("nothing to compare: no system label is in both reports (base: {}; "
                    "candidate: {})",
                    compare_input::labels_of(base), compare_input::labels_of(candidate)),
        "compare reports of the same systems; a renamed system is compared under one label only");
  }
  return out;
}

ExitCode exit_code_of(const ComparisonReport& report) {
  return report.regressions() > 0 ? ExitCode::check_failed : ExitCode::ok;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression:
      return "REGRESSION";
    case Verdict::improvement:
      return "improvement";
    case Verdict::unchanged:
      return "no change";
    case Verdict::inconclusive:
      return "inconclusive";
  }
  return "?";
}

const char* to_string(ComparisonTest test) {
  return test == ComparisonTest::paired_t ? "paired t" : "Mann-Whitney U";
}

}  // namespace zb::reports
