// The three forms of a comparison: text for a terminal, Markdown for a pull-request comment, JSON for
// scripts. All three carry the same rows, warnings and verdict.
#include <cmath>

#include <fmt/format.h>

#include "reports/compare.hpp"
#include "reports/number_format.hpp"
#include "reports/text_table.hpp"

namespace zb::reports {
namespace {

std::string value_text(Shown shown, const SampleAggregates& samples) {
  if (samples.count == 0) return "n/a";
  return shown_text(shown, samples.mean);
}

std::string spread_text(Shown shown, const SampleAggregates& samples) {
  if (samples.count < 2) return "";
  return " \u00b1 " + shown_text(shown, samples.sd);
}

TextTable comparison_table(const ComparisonReport& report) {
  TextTable table;
  table.header = {"system", "metric", "base (mean \u00b1 sd)", "candidate", "n", "change", "p", "verdict"};
  table.align = {Align::left,  Align::left,  Align::right, Align::right,
                 Align::right, Align::right, Align::right, Align::left};
  for (const MetricComparison& m : report.metrics) {
    const bool counted = m.base.count > 0 && m.candidate.count > 0;
    table.rows.push_back({m.system, m.metric, value_text(m.shown, m.base) + spread_text(m.shown, m.base),
                          value_text(m.shown, m.candidate) + spread_text(m.shown, m.candidate),
                          fmt::format("{}/{}", m.base.count, m.candidate.count),
                          counted ? format_change(m.change) : "n/a",
                          counted ? format_p_value(m.p_value) : "n/a", to_string(m.verdict)});
  }
  return table;
}

std::string oom_text(int oom_iterations, int iterations) {
  return fmt::format("{} of {}", oom_iterations, iterations);
}

TextTable memory_table(const ComparisonReport& report) {
  TextTable table;
  table.header = {"system", "OOM iterations (base)", "(candidate)", "verdict"};
  table.align = {Align::left, Align::right, Align::right, Align::left};
  for (const FeasibilityComparison& f : report.feasibility) {
    table.rows.push_back({f.system, oom_text(f.base_oom_iterations, f.base_iterations),
                          oom_text(f.candidate_oom_iterations, f.candidate_iterations),
                          to_string(f.verdict)});
  }
  return table;
}

std::string settings_line(const ComparisonReport& report) {
  return fmt::format("threshold {}, alpha {}; {}", format_percent(report.options.threshold),
                     report.options.alpha, report.pairing_reason);
}

std::string result_line(const ComparisonReport& report) {
  const int regressions = report.regressions();
  if (regressions == 0) return "result: no regression (exit 0)";
  return fmt::format("result: {} regression{} (exit 1)", regressions, regressions == 1 ? "" : "s");
}

}  // namespace

std::string format_comparison_text(const ComparisonReport& report) {
  std::string out = fmt::format("compare: base {}\n         candidate {}\n         {}\n\n", report.base_file,
                                report.candidate_file, settings_line(report));
  out += render_text(comparison_table(report));
  out += "\n" + render_text(memory_table(report));
  if (!report.warnings.empty()) out += "\n";
  for (const std::string& warning : report.warnings) out += "WARNING: " + warning + "\n";
  out += "\n" + result_line(report) + "\n";
  return out;
}

std::string format_comparison_markdown(const ComparisonReport& report) {
  std::string out = fmt::format("### zeppelin-bench compare\n\nBase `{}`, candidate `{}`; {}.\n\n",
                                report.base_file, report.candidate_file, settings_line(report));
  out += render_markdown(comparison_table(report));
  out += "\n" + render_markdown(memory_table(report));
  if (!report.warnings.empty()) out += "\n";
  for (const std::string& warning : report.warnings) out += "> **Warning:** " + warning + "\n";
  out += "\n**" + result_line(report) + "**\n";
  return out;
}

nlohmann::ordered_json comparison_to_json(const ComparisonReport& report) {
  // No sample, no figure (as in report.json): null, never 0.
  auto aggregates_json = [](const SampleAggregates& a) {
    auto figure = [&](double value) {
      return a.count > 0 ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
    };
    return nlohmann::ordered_json{
        {"count", a.count}, {"mean", figure(a.mean)}, {"sd", figure(a.sd)}, {"median", figure(a.median)}};
  };
  nlohmann::ordered_json out;
  out["base"] = report.base_file;
  out["candidate"] = report.candidate_file;
  out["threshold"] = report.options.threshold;
  out["alpha"] = report.options.alpha;
  out["paired"] = report.paired;
  out["pairing"] = report.pairing_reason;
  out["memory"] = nlohmann::ordered_json::array();
  for (const FeasibilityComparison& f : report.feasibility) {
    out["memory"].push_back(nlohmann::ordered_json{{"system", f.system},
                                                   {"base_iterations", f.base_iterations},
                                                   {"base_oom_iterations", f.base_oom_iterations},
                                                   {"candidate_iterations", f.candidate_iterations},
                                                   {"candidate_oom_iterations", f.candidate_oom_iterations},
                                                   {"verdict", to_string(f.verdict)}});
  }
  out["results"] = nlohmann::ordered_json::array();
  for (const MetricComparison& m : report.metrics) {
    nlohmann::ordered_json row;
    row["system"] = m.system;
    row["metric"] = m.metric;
    row["higher_is_better"] = m.higher_is_better;
    row["base"] = aggregates_json(m.base);
    row["candidate"] = aggregates_json(m.candidate);
    row["change"] = m.base.count > 0 && m.candidate.count > 0 ? nlohmann::ordered_json(m.change)
                                                              : nlohmann::ordered_json();
    row["test"] = to_string(m.test_used);
    row["p_value"] = m.p_value;
    if (m.test_used == ComparisonTest::paired_t) {
      row["pairs"] = m.paired.pairs;
      row["mean_log_ratio"] = m.paired.mean_log_ratio;
      row["t"] = std::isfinite(m.paired.t) ? nlohmann::ordered_json(m.paired.t) : nlohmann::ordered_json();
    } else {
      row["u"] = m.u_test.u;
      row["test_method"] = to_string(m.u_test.method);
    }
    row["verdict"] = to_string(m.verdict);
    if (!m.warning.empty()) row["warning"] = m.warning;
    out["results"].push_back(std::move(row));
  }
  out["warnings"] = report.warnings;
  out["regressions"] = report.regressions();
  out["exit_code"] = static_cast<int>(exit_code_of(report));
  return out;
}

}  // namespace zb::reports
