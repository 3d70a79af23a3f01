#include "cli/sweep_rows.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zb::cli {
namespace {

using json = nlohmann::json;  // ordered pairs travel as arrays, so the key order of objects never matters

json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

double number_of(const json& j) {
  if (!j.is_string()) return j.get<double>();
  const std::string text = j.get<std::string>();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw json::other_error::create(501, "\"" + text + "\" is not a number", &j);
}

json optional_number(const std::optional<double>& v) {
  return v ? number(*v) : json(nullptr);
}

std::optional<double> optional_number_of(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(number_of(j));
}

json optional_text(const std::optional<std::string>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<std::string> optional_text_of(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<std::string>(j.get<std::string>());
}

json layouts(const std::vector<reports::LayoutCount>& counts) {
  json out = json::array();
  for (const reports::LayoutCount& c : counts) out.push_back({c.layout, c.iterations});
  return out;
}

std::vector<reports::LayoutCount> layouts_of(const json& j) {
  std::vector<reports::LayoutCount> out;
  for (const json& c : j) out.push_back({c.at(0).get<std::string>(), c.at(1).get<int>()});
  return out;
}

json interval(const std::optional<reports::RatioInterval>& i) {
  if (!i) return nullptr;
  return {{"pairs", i->pairs},
          {"geometric_mean", number(i->geometric_mean)},
          {"low", number(i->low)},
          {"high", number(i->high)},
          {"p_value", number(i->p_value)},
          {"significant", i->significant}};
}

std::optional<reports::RatioInterval> interval_of(const json& j) {
  if (j.is_null()) return std::nullopt;
  return reports::RatioInterval{j.at("pairs").get<int>(),   number_of(j.at("geometric_mean")),
                                number_of(j.at("low")),     number_of(j.at("high")),
                                number_of(j.at("p_value")), j.at("significant").get<bool>()};
}

json shares(const LongDocumentShares& s) {
  return json::array({number(s.documents), number(s.tokens), number(s.attention_work)});
}

LongDocumentShares shares_of(const json& j) {
  return {number_of(j.at(0)), number_of(j.at(1)), number_of(j.at(2))};
}

json long_documents(const LongDocumentRecord& r) {
  json batches = json::array();
  for (const BatchLongDocuments& b : r.iterations)
    batches.push_back({b.iteration, shares(b.above_gpu), shares(b.above_node)});
  return {{"gpu_capacity_tokens", r.gpu_capacity_tokens},
          {"node_capacity_tokens", r.node_capacity_tokens},
          {"tensor_parallel", r.tensor_parallel},
          {"iterations", batches}};
}

LongDocumentRecord long_documents_of(const json& j) {
  LongDocumentRecord r;
  r.gpu_capacity_tokens = j.at("gpu_capacity_tokens").get<std::int64_t>();
  r.node_capacity_tokens = j.at("node_capacity_tokens").get<std::int64_t>();
  r.tensor_parallel = j.at("tensor_parallel").get<int>();
  for (const json& b : j.at("iterations"))
    r.iterations.push_back({b.at(0).get<int>(), shares_of(b.at(1)), shares_of(b.at(2))});
  return r;
}

}  // namespace

json row_to_json(const reports::CombinedRow& row) {
  json speedups = json::array();
  for (const auto& [baseline, value] : row.speedups) speedups.push_back({baseline, optional_number(value)});
  json intervals = json::array();
  for (const auto& [baseline, i] : row.intervals) intervals.push_back({baseline, interval(i)});
  json systems = json::array();
  for (const reports::CombinedSystem& s : row.systems) {
    systems.push_back({{"label", s.label},
                       {"is_baseline", s.is_baseline},
                       {"mean_seconds", optional_number(s.mean_seconds)},
                       {"feasible_iterations", s.feasible_iterations},
                       {"iterations", s.iterations},
                       {"layouts", layouts(s.layouts)}});
  }
  return {{"scenario", row.scenario},
          {"file", row.file},
          {"report_dir", row.report_dir},
          {"backend", row.backend},
          {"simulated", row.simulated},
          {"cluster", row.cluster},
          {"model", row.model},
          {"hardware_profile", row.hardware_profile},
          {"long_documents", long_documents(row.long_documents)},
          {"subject", row.subject},
          {"subject_strategy", row.subject_strategy},
          {"subject_seconds", optional_number(row.subject_seconds)},
          {"subject_layouts", layouts(row.subject_layouts)},
          {"best_baseline", optional_text(row.best_baseline)},
          {"best_seconds", optional_number(row.best_seconds)},
          {"speedup_vs_best", optional_number(row.speedup_vs_best)},
          {"speedups", speedups},
          {"interval_vs_best", interval(row.interval_vs_best)},
          {"intervals", intervals},
          {"systems", systems},
          {"gates_passed", row.gates_passed},
          {"error", row.error}};
}

reports::CombinedRow row_from_json(const json& j) {
  reports::CombinedRow row;
  row.scenario = j.at("scenario").get<std::string>();
  row.file = j.at("file").get<std::string>();
  row.report_dir = j.at("report_dir").get<std::string>();
  row.backend = j.at("backend").get<std::string>();
  row.simulated = j.at("simulated").get<bool>();
  row.cluster = j.at("cluster").get<std::string>();
  row.model = j.at("model").get<std::string>();
  row.hardware_profile = j.at("hardware_profile").get<std::string>();
  row.long_documents = long_documents_of(j.at("long_documents"));
  row.subject = j.at("subject").get<std::string>();
  row.subject_strategy = j.at("subject_strategy").get<std::string>();
  row.subject_seconds = optional_number_of(j.at("subject_seconds"));
  row.subject_layouts = layouts_of(j.at("subject_layouts"));
  row.best_baseline = optional_text_of(j.at("best_baseline"));
  row.best_seconds = optional_number_of(j.at("best_seconds"));
  row.speedup_vs_best = optional_number_of(j.at("speedup_vs_best"));
  for (const json& s : j.at("speedups"))
    row.speedups.emplace_back(s.at(0).get<std::string>(), optional_number_of(s.at(1)));
  row.interval_vs_best = interval_of(j.at("interval_vs_best"));
  for (const json& i : j.at("intervals"))
    row.intervals.emplace_back(i.at(0).get<std::string>(), interval_of(i.at(1)));
  for (const json& s : j.at("systems")) {
    row.systems.push_back({s.at("label").get<std::string>(), s.at("is_baseline").get<bool>(),
                           optional_number_of(s.at("mean_seconds")), s.at("feasible_iterations").get<int>(),
                           s.at("iterations").get<int>(), layouts_of(s.at("layouts"))});
  }
  row.gates_passed = j.at("gates_passed").get<bool>();
  row.error = j.at("error").get<std::string>();
  return row;
}

}  // namespace zb::cli
