// The combined table as JSON (combined.json, docs/REPORT_FORMAT.md "The combined table").
#include "reports/combined_table.hpp"
#include "reports/long_documents_report.hpp"

namespace zb::reports {

namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json aggregate_json(const RatioAggregates& a) {
  nlohmann::ordered_json j;
  j["count"] = a.count;
  if (a.count == 0) return j;
  j["mean"] = a.mean;
  j["geometric_mean"] = a.geometric_mean;
  j["median"] = a.median;
  j["min"] = {{"value", a.min}, {"scenario", a.min_scenario}};
  j["max"] = {{"value", a.max}, {"scenario", a.max_scenario}};
  j["significant"] = {{"faster", a.significantly_faster},
                      {"slower", a.significantly_slower},
                      {"not_significant", a.not_significant},
                      {"untested", a.untested}};
  return j;
}

nlohmann::ordered_json interval_json(const std::optional<RatioInterval>& i) {
  if (!i) return nlohmann::ordered_json(nullptr);
  return {{"pairs", i->pairs},     {"geometric_mean", i->geometric_mean}, {"low", i->low}, {"high", i->high},
          {"p_value", i->p_value}, {"significant", i->significant}};
}

}  // namespace

nlohmann::ordered_json combined_json(const CombinedTable& t) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["title"] = t.title;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CombinedRow& row : t.rows) {
    nlohmann::ordered_json r;
    r["scenario"] = row.scenario;
    r["file"] = row.file;
    if (!row.error.empty()) {
      r["error"] = row.error;
      rows.push_back(r);
      continue;
    }
    r["report_dir"] = row.report_dir;
    r["backend"] = row.backend;
    r["simulated"] = row.simulated;
    r["cluster"] = row.cluster;
    r["model"] = row.model;
    r["hardware_profile"] = row.hardware_profile;
    r["long_documents"] =
        row.long_documents.recorded()
            ? nlohmann::ordered_json{{"capacity_tokens", capacity_tokens_json(row.long_documents)},
                                     {"above_capacity_mean", mean_long_documents_json(row.long_documents)}}
            : nlohmann::ordered_json(nullptr);
    r["subject"] =
        row.subject.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.subject);
    r["subject_mean_iteration_seconds"] = optional_number(row.subject_seconds);
    r["subject_layouts"] = layouts_json(row.subject_layouts);
    r["best_baseline"] =
        row.best_baseline ? nlohmann::ordered_json(*row.best_baseline) : nlohmann::ordered_json(nullptr);
    r["best_baseline_mean_iteration_seconds"] = optional_number(row.best_seconds);
    r["speedup_vs_best"] = optional_number(row.speedup_vs_best);
    r["speedup_vs_best_interval"] = interval_json(row.interval_vs_best);
    r["verdict"] = verdict_of(row);
    nlohmann::ordered_json speedups = nlohmann::ordered_json::object();
    for (const auto& [baseline, value] : row.speedups) speedups[baseline] = optional_number(value);
    r["speedups"] = speedups;
    nlohmann::ordered_json intervals = nlohmann::ordered_json::object();
    for (const auto& [baseline, interval] : row.intervals) intervals[baseline] = interval_json(interval);
    r["speedup_intervals"] = intervals;
    nlohmann::ordered_json systems = nlohmann::ordered_json::array();
    for (const CombinedSystem& s : row.systems) {
      systems.push_back({{"label", s.label},
                         {"baseline", s.is_baseline},
                         {"mean_iteration_seconds", optional_number(s.mean_seconds)},
                         {"feasible_iterations", s.feasible_iterations},
                         {"iterations", s.iterations},
                         {"layouts", layouts_json(s.layouts)}});
    }
    r["systems"] = systems;
    r["gates_passed"] = row.gates_passed;
    rows.push_back(r);
  }
  j["rows"] = rows;
  nlohmann::ordered_json agg;
  agg["versus_best"] = aggregate_json(t.versus_best);
  agg["versus_best"]["wins"] = t.wins;
  agg["versus_best"]["ties"] = t.ties;
  agg["versus_best"]["losses"] = t.losses;
  for (const auto& [baseline, a] : t.versus_baseline) agg["versus"][baseline] = aggregate_json(a);
  agg["subject_layouts"] = layouts_json(t.subject_layouts);
  j["aggregates"] = agg;
  return j;
}

}  // namespace zb::reports
