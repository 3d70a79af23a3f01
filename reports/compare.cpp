#include "reports/compare.hpp"

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "reports/json_report.hpp"

namespace zb::reports {
namespace {

struct ComparedMetric {
  const char* key;  // key under systems[].samples
  bool higher_is_better;
};
constexpr std::array<ComparedMetric, 3> compared_metrics{{
    {"iteration_seconds", false},
    {"tokens_per_second", true},
    {"mfu", true},
}};

[[noreturn]] void bad_report(const std::filesystem::path& path, const std::string& json_path, const std::string& what,
                             const std::string& hint = {}) {
  Location where;
  where.file = path.string();
  where.json_path = json_path;
  throw_input_error(where, what, hint);
}

// The shape `compare` relies on; anything else in the file is ignored (readers ignore unknown fields).
void check_report_shape(const nlohmann::json& report, const std::filesystem::path& path) {
  if (!report.is_object()) bad_report(path, "", "not a zeppelin-bench report (the top level is not an object)");
  const auto version = report.find("schema_version");
  if (version == report.end() || !version->is_number_integer()) {
    bad_report(path, "schema_version", "not a zeppelin-bench report (no integer schema_version)",
               "pass the report.json written by `zeppelin-bench run`");
  }
  if (version->get<int>() != report_schema_version) {
    bad_report(path, "schema_version",
               fmt::format("schema_version {} is not supported (this build reads {})", version->get<int>(),
                           report_schema_version),
               "compare reports written by the same major version of zeppelin-bench");
  }
  const auto systems = report.find("systems");
  if (systems == report.end() || !systems->is_array()) bad_report(path, "systems", "missing or not an array");
  for (std::size_t i = 0; i < systems->size(); ++i) {
    const nlohmann::json& system = (*systems)[i];
    const std::string where = fmt::format("systems[{}]", i);
    if (!system.is_object() || !system.contains("label") || !system["label"].is_string()) {
      bad_report(path, where + ".label", "missing or not a string");
    }
    if (!system.contains("samples") || !system["samples"].is_object()) {
      bad_report(path, where + ".samples", "missing or not an object");
    }
    for (const ComparedMetric& metric : compared_metrics) {
      const auto samples = system["samples"].find(metric.key);
      if (samples == system["samples"].end()) continue;  // an older or partial report: compared as absent
      if (!samples->is_array()) bad_report(path, where + ".samples." + metric.key, "not an array of numbers");
      for (const auto& value : *samples) {
        if (!value.is_number()) bad_report(path, where + ".samples." + metric.key, "not an array of numbers");
      }
    }
  }
}

std::vector<double> samples_of(const nlohmann::json& system, const char* key) {
  std::vector<double> out;
  const auto samples = system["samples"].find(key);
  if (samples == system["samples"].end()) return out;
  for (const auto& value : *samples) out.push_back(value.get<double>());
  return out;
}

const nlohmann::json* find_system(const nlohmann::json& report, const std::string& label) {
  for (const auto& system : report["systems"]) {
    if (system["label"].get<std::string>() == label) return &system;
  }
  return nullptr;
}

MetricComparison compare_metric(const std::string& label, const ComparedMetric& metric, const std::vector<double>& base,
                                const std::vector<double>& candidate, const CompareOptions& options) {
  MetricComparison out;
  out.system = label;
  out.metric = metric.key;
  out.higher_is_better = metric.higher_is_better;
  out.base = aggregate(base);
  out.candidate = aggregate(candidate);
  out.change = out.base.mean != 0 ? out.candidate.mean / out.base.mean - 1 : 0.0;
  out.test = mann_whitney_u(base, candidate);

  const int fewest = std::min(out.base.count, out.candidate.count);
  if (fewest < minimum_samples_for_verdict) {
    out.verdict = Verdict::inconclusive;
    out.warning = fmt::format("{} / {}: {} and {} samples; at least {} per side are needed for a verdict", label,
                              metric.key, out.base.count, out.candidate.count, minimum_samples_for_verdict);
    return out;
  }
  // Whatever method computed p, these sizes cannot support significance at alpha: even fully separated
  // samples give p ≥ 2 / C(n₁+n₂, n₁) (ties only raise it).
  if (smallest_exact_p_value(out.base.count, out.candidate.count) >= options.alpha) {
    out.verdict = Verdict::inconclusive;
    out.warning = fmt::format("{} / {}: with {} and {} samples the U test cannot reach p < {} (smallest p = {:.3g}); "
                              "run more iterations",
                              label, metric.key, out.base.count, out.candidate.count, options.alpha,
                              smallest_exact_p_value(out.base.count, out.candidate.count));
    return out;
  }
  const double worse_by = metric.higher_is_better ? -out.change : out.change;
  const bool significant = out.test.p_value < options.alpha;
  if (significant && worse_by > options.threshold) {
    out.verdict = Verdict::regression;
  } else if (significant && -worse_by > options.threshold) {
    out.verdict = Verdict::improvement;
  } else {
    out.verdict = Verdict::unchanged;
  }
  return out;
}

}  // namespace

int ComparisonReport::regressions() const {
  int count = 0;
  for (const MetricComparison& metric : metrics) count += metric.verdict == Verdict::regression ? 1 : 0;
  return count;
}

nlohmann::json load_report_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_report(path, "", "cannot open the report file", "check the path");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json report = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) bad_report(path, "", "not valid JSON", "pass the report.json written by `zeppelin-bench run`");
  check_report_shape(report, path);
  return report;
}

ComparisonReport compare_reports(const nlohmann::json& base, const nlohmann::json& candidate,
                                 const CompareOptions& options) {
  ComparisonReport out;
  out.options = options;
  for (const auto& base_system : base["systems"]) {
    const auto label = base_system["label"].get<std::string>();
    const nlohmann::json* candidate_system = find_system(candidate, label);
    if (candidate_system == nullptr) {
      out.warnings.push_back(fmt::format("system \"{}\" is only in the base report; not compared", label));
      continue;
    }
    for (const ComparedMetric& metric : compared_metrics) {
      MetricComparison compared = compare_metric(label, metric, samples_of(base_system, metric.key),
                                                 samples_of(*candidate_system, metric.key), options);
      if (!compared.warning.empty()) out.warnings.push_back(compared.warning);
      out.metrics.push_back(std::move(compared));
    }
  }
  for (const auto& candidate_system : candidate["systems"]) {
    const auto label = candidate_system["label"].get<std::string>();
    if (find_system(base, label) == nullptr) {
      out.warnings.push_back(fmt::format("system \"{}\" is only in the candidate report; not compared", label));
    }
  }
  return out;
}

ExitCode exit_code_of(const ComparisonReport& report) {
  return report.regressions() > 0 ? ExitCode::check_failed : ExitCode::ok;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression: return "REGRESSION";
    case Verdict::improvement: return "improvement";
    case Verdict::unchanged: return "no change";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "?";
}

}  // namespace zb::reports
