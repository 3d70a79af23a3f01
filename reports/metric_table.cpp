#include "reports/metric_table.hpp"

#include <array>

#include <fmt/format.h>

#include "reports/number_format.hpp"
#include "reports/summary.hpp"

namespace zb::reports {
namespace {

// Accessors: a RunMetrics field in every iteration that fitted; NVLink figures only where the trace
// recorded NVLink loads; the simulation's figures only on measured runs that have them.
template <double RunMetrics::*field>
std::optional<double> fitted(const IterationFigures& i) {
  if (i.metrics == nullptr) return std::nullopt;
  return i.metrics->*field;
}

template <double RunMetrics::*field>
std::optional<double> nvlink_recorded(const IterationFigures& i) {
  if (i.metrics == nullptr || !i.metrics->nvlink_recorded()) return std::nullopt;
  return i.metrics->*field;
}

template <double RunMetrics::*field>
std::optional<double> simulated_too(const IterationFigures& i) {
  if (i.metrics == nullptr || !(i.metrics->simulation_ratio > 0)) return std::nullopt;
  return i.metrics->*field;
}

template <double RunMetrics::*field>
std::optional<double> moe_recorded(const IterationFigures& i) {
  if (i.metrics == nullptr || !i.metrics->moe_recorded()) return std::nullopt;
  return i.metrics->*field;
}

std::optional<double> planner_seconds(const IterationFigures& i) {
  return i.planner_seconds;
}

// The planner's wall clock over the iteration it planned, as the plan predicts it: what of the iteration
// planning would have to hide behind (none when the plan did not fit, so has no prediction).
std::optional<double> planner_share(const IterationFigures& i) {
  if (i.metrics == nullptr || !(i.predicted_seconds > 0)) return std::nullopt;
  return i.planner_seconds / i.predicted_seconds;
}

std::optional<double> predicted_seconds(const IterationFigures& i) {
  if (i.metrics == nullptr) return std::nullopt;
  return i.predicted_seconds;
}

// Console cells that are more than the mean of one figure.
std::string iteration_time_cell(const SystemSummary& s, bool) {
  if (!s.feasible())
    return fmt::format("OOM ({} of {} iterations)", s.iterations - s.feasible_iterations, s.iterations);
  const SampleAggregates& a = s.aggregates(metric::iteration_seconds);
  if (a.count < 2) return format_seconds(a.mean);
  return format_seconds(a.mean) + " \u00b1 " + format_seconds(a.sd);
}

// "mean / max" (wide) or "max", of the per-NIC or per-GPU utilization; "n/a" when none was recorded.
std::string utilization_cell(const SampleAggregates& mean, const SampleAggregates& max, bool wide) {
  if (mean.count == 0 && max.count == 0) return "n/a";
  return wide ? format_percent(mean.mean) + " / " + format_percent(max.mean) : format_percent(max.mean);
}

std::string nic_cell(const SystemSummary& s, bool wide) {
  return utilization_cell(s.aggregates(metric::nic_utilization_mean),
                          s.aggregates(metric::nic_utilization_max), wide);
}

std::string nvlink_cell(const SystemSummary& s, bool wide) {
  return utilization_cell(s.aggregates(metric::nvlink_utilization_mean),
                          s.aggregates(metric::nvlink_utilization_max), wide);
}

// "12 ms (0.4 %)" under --wide: the mean planner time and its mean share of the predicted iteration; the
// narrow table gives the share only where it is above the rule's limit ("520 ms (44 %, over 2 %)"), so
// that the column still fits beside the others at 100 columns.
std::string planner_cell(const SystemSummary& s, bool wide) {
  std::string cell = format_seconds(s.aggregates(metric::planner_seconds).mean);
  if (const SampleAggregates& share = s.aggregates(metric::planner_share);
      share.count > 0 && (wide || share.mean > planner_share_limit)) {
    cell += " (" + format_share(share.mean);
    if (share.mean > planner_share_limit) cell += ", over " + format_share(planner_share_limit);
    cell += ")";
  }
  const int oom = s.iterations - s.feasible_iterations;
  if (oom > 0) cell += fmt::format("  ({} OOM iteration{})", oom, oom == 1 ? "" : "s");
  return cell;
}

// clang-format off
const std::array metrics{
  MetricInfo{.name = metric::iteration_seconds, .unit = "s", .better = Better::lower, .formula = "iteration-time",
             .value = fitted<&RunMetrics::iteration_seconds>, .aggregates_at = "aggregates/iteration_seconds",
             .sampled = true, .compared = true, .gate = "iteration_seconds", .shown = Shown::seconds,
             .console = {.title = "iteration time", .importance = 1, .every_row = true, .cell = iteration_time_cell}},
  MetricInfo{.name = "iteration_parts/layers_seconds", .unit = "s", .better = Better::lower,
             .formula = "iteration-time", .value = fitted<&RunMetrics::layers_seconds>, .shown = Shown::seconds},
  MetricInfo{.name = "iteration_parts/embedding_and_head_seconds", .unit = "s", .better = Better::lower,
             .formula = "the-whole-iteration", .value = fitted<&RunMetrics::embedding_and_head_seconds>,
             .shown = Shown::seconds},
  MetricInfo{.name = "iteration_parts/gradient_sync_seconds", .unit = "s", .better = Better::none,
             .formula = "the-whole-iteration", .value = fitted<&RunMetrics::gradient_sync_seconds>,
             .shown = Shown::seconds},
  MetricInfo{.name = "iteration_parts/gradient_sync_exposed_seconds", .unit = "s", .better = Better::lower,
             .formula = "the-whole-iteration", .value = fitted<&RunMetrics::gradient_sync_exposed_seconds>,
             .shown = Shown::seconds},
  MetricInfo{.name = "iteration_parts/optimizer_seconds", .unit = "s", .better = Better::lower,
             .formula = "the-whole-iteration", .value = fitted<&RunMetrics::optimizer_seconds>,
             .shown = Shown::seconds},
  MetricInfo{.name = "tokens", .unit = "tokens", .better = Better::none, .formula = "tokens-per-second",
             .value = fitted<&RunMetrics::tokens>},
  MetricInfo{.name = metric::tokens_per_second, .unit = "tokens/s", .better = Better::higher,
             .formula = "tokens-per-second", .value = fitted<&RunMetrics::tokens_per_second>,
             .aggregates_at = "aggregates/tokens_per_second", .sampled = true, .compared = true,
             .gate = "tokens_per_second", .gbench_counter = "tokens_per_second", .gbench_position = 0,
             .console = {.title = "tokens/s", .importance = 8}},
  MetricInfo{.name = "useful_flops", .unit = "FLOP", .better = Better::none, .formula = "useful-flops",
             .value = fitted<&RunMetrics::useful_flops>},
  MetricInfo{.name = metric::model_tflops_per_gpu, .unit = "TFLOP/s", .better = Better::higher,
             .formula = "model-tflops-per-gpu", .value = fitted<&RunMetrics::model_tflops_per_gpu>,
             .aggregates_at = "aggregates/model_tflops_per_gpu", .gbench_counter = "tflops_per_gpu",
             .gbench_position = 2, .shown = Shown::one_decimal,
             .console = {.title = "TFLOP/s/GPU", .importance = 40}},
  MetricInfo{.name = metric::mfu, .unit = "1", .better = Better::higher, .formula = "mfu",
             .value = fitted<&RunMetrics::mfu>, .aggregates_at = "aggregates/mfu", .sampled = true,
             .compared = true, .gate = "mfu", .gbench_counter = "mfu", .gbench_position = 1,
             .shown = Shown::percent, .console = {.title = "MFU", .importance = 3}},
  MetricInfo{.name = metric::attention_imbalance, .unit = "1", .better = Better::lower,
             .formula = "attention-imbalance", .value = fitted<&RunMetrics::attention_imbalance>,
             .aggregates_at = "balance/attention_imbalance", .gate = "attention_imbalance",
             .shown = Shown::two_decimals,
             .console = {.title = "attn imb.", .wide_title = "attn imbalance", .importance = 4,
                         .group = ConsoleGroup::after_speedups}},
  MetricInfo{.name = metric::token_imbalance, .unit = "1", .better = Better::lower, .formula = "token-imbalance",
             .value = fitted<&RunMetrics::token_imbalance>, .aggregates_at = "balance/token_imbalance",
             .shown = Shown::two_decimals},
  MetricInfo{.name = metric::nic_utilization_mean, .unit = "1", .better = Better::none,
             .formula = "nic-utilization", .value = fitted<&RunMetrics::nic_utilization_mean>,
             .aggregates_at = "nic/utilization_mean", .gate = "nic_utilization", .shown = Shown::percent,
             .console = {.title = "NIC max", .wide_title = "NIC util mean/max", .importance = 6,
                         .group = ConsoleGroup::after_speedups, .cell = nic_cell}},
  MetricInfo{.name = metric::nic_utilization_max, .unit = "1", .better = Better::none,
             .formula = "nic-utilization", .value = fitted<&RunMetrics::nic_utilization_max>,
             .aggregates_at = "nic/utilization_max", .shown = Shown::percent},
  MetricInfo{.name = metric::nic_busy_share_mean, .unit = "1", .better = Better::none, .formula = "nic-busy-share",
             .value = fitted<&RunMetrics::nic_busy_share_mean>, .aggregates_at = "nic/busy_share_mean",
             .shown = Shown::percent},
  MetricInfo{.name = metric::nic_busy_share_max, .unit = "1", .better = Better::none, .formula = "nic-busy-share",
             .value = fitted<&RunMetrics::nic_busy_share_max>, .aggregates_at = "nic/busy_share_max",
             .shown = Shown::percent},
  MetricInfo{.name = metric::nvlink_bytes, .unit = "bytes", .better = Better::none, .formula = "nvlink-bytes",
             .value = nvlink_recorded<&RunMetrics::nvlink_bytes>, .aggregates_at = "nvlink/bytes"},
  MetricInfo{.name = metric::nvlink_utilization_mean, .unit = "1", .better = Better::none,
             .formula = "nvlink-utilization", .value = nvlink_recorded<&RunMetrics::nvlink_utilization_mean>,
             .aggregates_at = "nvlink/utilization_mean", .shown = Shown::percent,
             .console = {.title = "NVLink max", .wide_title = "NVLink util mean/max", .importance = 5,
                         .group = ConsoleGroup::after_speedups, .cell = nvlink_cell}},
  MetricInfo{.name = metric::nvlink_utilization_max, .unit = "1", .better = Better::none,
             .formula = "nvlink-utilization", .value = nvlink_recorded<&RunMetrics::nvlink_utilization_max>,
             .aggregates_at = "nvlink/utilization_max", .shown = Shown::percent},
  MetricInfo{.name = metric::prediction_ratio, .unit = "1", .better = Better::none, .formula = "prediction-ratio",
             .value = fitted<&RunMetrics::prediction_ratio>, .aggregates_at = "aggregates/prediction_ratio",
             .shown = Shown::two_decimals},
  MetricInfo{.name = "simulated_layers_seconds", .unit = "s", .better = Better::none,
             .formula = "simulation-ratio", .value = simulated_too<&RunMetrics::simulated_layers_seconds>,
             .shown = Shown::seconds},
  MetricInfo{.name = metric::simulation_ratio, .unit = "1", .better = Better::none, .formula = "simulation-ratio",
             .value = simulated_too<&RunMetrics::simulation_ratio>, .aggregates_at = "simulation/ratio",
             .shown = Shown::two_decimals},
  MetricInfo{.name = "expert_load_imbalance", .unit = "1", .better = Better::lower, .formula = "expert-load-imbalance",
             .value = moe_recorded<&RunMetrics::expert_load_imbalance>, .aggregates_at = "moe/expert_load_imbalance",
             .shown = Shown::two_decimals},
  MetricInfo{.name = "expert_rank_imbalance", .unit = "1", .better = Better::lower, .formula = "expert-load-imbalance",
             .value = moe_recorded<&RunMetrics::expert_rank_imbalance>, .aggregates_at = "moe/rank_imbalance",
             .shown = Shown::two_decimals},
  MetricInfo{.name = "moe_dispatch_bytes", .unit = "bytes", .better = Better::none, .formula = "moe-dispatch-bytes",
             .value = moe_recorded<&RunMetrics::moe_dispatch_bytes>, .aggregates_at = "moe/dispatch_bytes"},
  MetricInfo{.name = "moe_dispatch_nic_bytes", .unit = "bytes", .better = Better::none, .formula = "moe-dispatch-bytes",
             .value = moe_recorded<&RunMetrics::moe_dispatch_nic_bytes>, .aggregates_at = "moe/dispatch_nic_bytes"},
  MetricInfo{.name = "moe_share", .unit = "1", .better = Better::none, .formula = "moe-share",
             .value = moe_recorded<&RunMetrics::moe_share>, .aggregates_at = "moe/share", .shown = Shown::percent},
  MetricInfo{.name = metric::predicted_seconds, .unit = "s", .better = Better::none, .formula = "prediction-ratio",
             .value = predicted_seconds, .in_iteration_metrics = false, .sampled = true, .shown = Shown::seconds},
  MetricInfo{.name = metric::planner_seconds, .unit = "s", .better = Better::lower, .formula = "samples",
             .value = planner_seconds, .in_iteration_metrics = false, .aggregates_at = "aggregates/planner_seconds",
             .sampled = true, .shown = Shown::seconds,
             .console = {.title = "planner", .importance = 7, .group = ConsoleGroup::after_speedups,
                         .align = Align::left, .cell = planner_cell}},
  MetricInfo{.name = metric::planner_share, .unit = "1", .better = Better::lower, .formula = "planner-share",
             .value = planner_share, .in_iteration_metrics = false, .aggregates_at = "aggregates/planner_share",
             .gate = "planner_share", .shown = Shown::percent},
};
// clang-format on

}  // namespace

MetricTable metric_table() {
  return metrics;
}

const MetricInfo* find_metric(MetricTable table, std::string_view name) {
  for (const MetricInfo& m : table) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const MetricInfo* find_gate_metric(MetricTable table, std::string_view gate) {
  for (const MetricInfo& m : table) {
    if (!m.gate.empty() && m.gate == gate) return &m;
  }
  return nullptr;
}

std::vector<std::string> gate_metric_names(MetricTable table) {
  std::vector<std::string> out;
  for (const MetricInfo& m : table) {
    if (!m.gate.empty()) out.emplace_back(m.gate);
  }
  out.emplace_back("speedup");
  return out;
}

std::string shown_text(Shown shown, double value) {
  switch (shown) {
    case Shown::seconds:
      return format_seconds(value);
    case Shown::percent:
      return format_percent(value);
    case Shown::one_decimal:
      return fmt::format("{:.1f}", value);
    case Shown::two_decimals:
      return fmt::format("{:.2f}", value);
    case Shown::si:
      break;
  }
  return format_si(value);
}

}  // namespace zb::reports
