// Time-based charts of the HTML report: the iteration-time breakdown, NIC utilisation over time and the
// timeline of the first ranks.
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "reports/html_charts.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

constexpr double chart_width = 1040;
constexpr const char* receive_colour = "#333A44";  // the NIC panels' receive line

struct BreakdownPart {
  const char* key;  // part_colour key
  const char* title;
  double TimeBreakdown::*field;
};
constexpr std::array<BreakdownPart, 9> breakdown_parts{{
    {"attention", "attention", &TimeBreakdown::attention},
    {"linear", "linear (GEMMs)", &TimeBreakdown::linear},
    {"remap", "remap all-to-all", &TimeBreakdown::remap},
    {"tensor_parallel", "TP collectives", &TimeBreakdown::tensor_parallel},
    {"exposed_comm", "exposed communication", &TimeBreakdown::exposed_communication},
    {"embedding_and_head", "embedding, LM head, loss", &TimeBreakdown::embedding_and_head},
    {"gradient_sync", "exposed gradient sync", &TimeBreakdown::gradient_sync_exposed},
    {"optimizer", "optimizer step", &TimeBreakdown::optimizer},
    {"idle", "idle (waiting)", &TimeBreakdown::idle},
}};

double total_of(const TimeBreakdown& b) {
  return b.total();
}

}  // namespace

TimeUnit time_unit_for(double max_seconds) {
  if (max_seconds >= 1) return {1, "s"};
  if (max_seconds >= 1e-3) return {1e3, "ms"};
  return {1e6, "\u00b5s"};
}

std::string breakdown_chart(const RunSummary& summary) {
  // The legend is HTML above the chart (chart_figure), where it wraps instead of running off the edge.
  const double left = 150, right = 90, top = 14, bar = 26, gap = 14;
  const double height = top + static_cast<double>(summary.systems.size()) * (bar + gap) + 50;
  SvgCanvas canvas(chart_width, height, "Iteration time breakdown of the critical rank per system");
  double longest = 0;
  for (const SystemSummary& s : summary.systems) longest = std::max(longest, total_of(s.critical_rank));
  if (!(longest > 0)) longest = 1;
  const std::vector<double> ticks = nice_ticks(0, longest, 6);
  const LinearScale x{0, std::max(longest, ticks.back()), left, chart_width - right};
  const TimeUnit unit = time_unit_for(x.domain_high);
  const double axis_y = top + static_cast<double>(summary.systems.size()) * (bar + gap);
  draw_x_axis(canvas, x, ticks, axis_y, top - 8, unit.per_second,
              fmt::format("time per iteration on the critical rank ({})", unit.symbol));
  std::vector<LegendEntry> legend;
  for (const BreakdownPart& part : breakdown_parts) legend.push_back({part_colour(part.key), part.title});

  double y = top;
  for (const SystemSummary& s : summary.systems) {
    canvas.rect(left - 140, y + 7, 10, 10, system_colour(s.index));
    canvas.text(left - 124, y + 17, s.label, "start", "label");
    if (!s.feasible()) {
      canvas.text(left + 6, y + 17, "out of memory in every iteration", "start", "oom");
      y += bar + gap;
      continue;
    }
    const double total = total_of(s.critical_rank);
    double start = 0;
    for (const BreakdownPart& part : breakdown_parts) {
      const double value = s.critical_rank.*part.field;
      canvas.rect(x(start), y, x(start + value) - x(start), bar, part_colour(part.key),
                  fmt::format("{} \u2014 {}: {} ({})", s.label, part.title, format_seconds(value),
                              format_percent(total > 0 ? value / total : 0)));
      start += value;
    }
    canvas.text(x(start) + 6, y + 17, format_seconds(total), "start", "value");
    y += bar + gap;
  }
  return chart_figure(canvas, legend);
}

std::string nic_utilization_chart(const SystemSummary& system, const Trace& trace) {
  if (system.per_iteration.empty()) return R"(<p class="note">No feasible iteration: nothing to show.</p>)";
  const RunMetrics& metrics = system.per_iteration.front();  // the iteration the trace shows
  double nic_bytes = 0;
  for (const NicMetrics& nic : metrics.nics) nic_bytes += nic.tx_bytes + nic.rx_bytes;
  if (metrics.nics.empty() || metrics.timeline_bins <= 0 || !(nic_bytes > 0)) {
    return R"(<p class="note">No traffic crossed a NIC: every transfer of this system stayed inside a node.</p>)";
  }
  const double span = metrics.timeline_bin_seconds * metrics.timeline_bins;
  const TimeUnit unit = time_unit_for(span);
  const auto nic_count = static_cast<int>(metrics.nics.size());
  // Measured NICs: the counters' bytes against the Program's first, then the same panels, labelled.
  const bool measured = metrics.nics.front().measured;
  const std::string head = measured ? measured_nic_table(metrics) : "";
  const std::string source = measured ? " (measured: NIC byte counters)" : " (simulated)";
  const char* colour = system_colour(system.index);
  const std::string forward_note =
      trace.layer.forward > 0 && trace.layer.backward > 0 ? "; dashed line: forward | backward" : "";

  if (nic_count > nic_small_multiples_limit) {
    // Heatmap: one row per NIC (the busier direction), one column per time bin.
    const double left = 90, top = 10, row = std::max(3.0, 360.0 / nic_count), width = chart_width - left - 20;
    const double height = top + row * nic_count + 50;
    SvgCanvas canvas(chart_width, height, "NIC utilisation heatmap, " + system.label + source);
    const double cell = width / metrics.timeline_bins;
    for (int k = 0; k < nic_count; ++k) {
      const NicMetrics& nic = metrics.nics[static_cast<std::size_t>(k)];
      for (int b = 0; b < metrics.timeline_bins; ++b) {
        const auto bin = static_cast<std::size_t>(b);
        const double value = std::max(bin < nic.tx_timeline.size() ? nic.tx_timeline[bin] : 0.0,
                                      bin < nic.rx_timeline.size() ? nic.rx_timeline[bin] : 0.0);
        if (value <= 0) continue;
        canvas.rect(left + b * cell, top + k * row, cell + 0.3, row + 0.3, colour,
                    fmt::format("node {} NIC {}: {}", nic.node, nic.nic, format_percent(value)));
      }
      if (nic.nic == 0)
        canvas.text(left - 6, top + k * row + std::min(row, 12.0), fmt::format("node {}", nic.node), "end",
                    "tick");
    }
    const LinearScale x{0, span * unit.per_second, left, left + width};
    draw_x_axis(
        canvas, x, nice_ticks(0, span * unit.per_second, 8), top + row * nic_count, top, 1,
        fmt::format("time within one layer, forward then backward ({}); colour = max(tx, rx) utilisation",
                    unit.symbol));
    return head + chart_figure(canvas);
  }

  // Small multiples: one panel per NIC, transmit as a filled area, receive as a line. The legend and what
  // the axes mean are HTML above the panels (chart_figure), where they wrap on a narrow screen.
  const int columns = std::min(nic_count, 8);
  const int rows = (nic_count + columns - 1) / columns;
  const double panel_w = (chart_width - 60) / columns, panel_h = 74, gap = 26, left = 50, top = 4;
  SvgCanvas canvas(chart_width, top + rows * (panel_h + gap) + 10,
                   "NIC utilisation over time per NIC, " + system.label + source);
  const std::vector<LegendEntry> legend{{colour, "transmit"}, {receive_colour, "receive", true}};
  const std::string caption = fmt::format(
      "x: time within one layer, forward then backward (0\u2013{} {}){}; y: utilisation 0\u2013100 %",
      tick_label(std::round(span * unit.per_second * 100) / 100), unit.symbol, forward_note);
  for (int k = 0; k < nic_count; ++k) {
    const NicMetrics& nic = metrics.nics[static_cast<std::size_t>(k)];
    const double px = left + (k % columns) * panel_w, py = top + (k / columns) * (panel_h + gap) + 14;
    const double w = panel_w - 12;
    canvas.rect(px, py, w, panel_h, "#F6F7F9");
    canvas.text(px, py - 4,
                fmt::format("n{} nic{} \u00b7 tx {}", nic.node, nic.nic, format_percent(nic.tx_utilization)),
                "start", "panel");
    const LinearScale x{0, static_cast<double>(metrics.timeline_bins), px, px + w};
    const LinearScale y{0, 1, py + panel_h, py};
    std::vector<std::pair<double, double>> area{{x(0), y(0)}};
    std::vector<std::pair<double, double>> receive;
    for (int b = 0; b < metrics.timeline_bins; ++b) {
      const auto bin = static_cast<std::size_t>(b);
      const double tx = std::clamp(bin < nic.tx_timeline.size() ? nic.tx_timeline[bin] : 0.0, 0.0, 1.0);
      const double rx = std::clamp(bin < nic.rx_timeline.size() ? nic.rx_timeline[bin] : 0.0, 0.0, 1.0);
      area.emplace_back(x(b), y(tx));  // step shape: constant over each bin
      area.emplace_back(x(b + 1), y(tx));
      receive.emplace_back(x(b), y(rx));
      receive.emplace_back(x(b + 1), y(rx));
    }
    area.emplace_back(x(metrics.timeline_bins), y(0));
    canvas.polygon(area, colour, 0.55);
    canvas.polyline(receive, receive_colour, 1.1);
    if (trace.layer.forward > 0 && trace.layer.backward > 0 && span > 0) {
      const double split = x(trace.layer.forward / span * metrics.timeline_bins);
      canvas.line(split, py, split, py + panel_h, "#8A9099", 1, true);
    }
  }
  return head + chart_figure(canvas, legend, caption);
}

std::string timeline_chart(const SystemSummary& system, const Trace& trace, double axis_span_seconds) {
  const int ranks = std::min(timeline_ranks, trace.world_size);
  const double span = std::max(trace.trace_seconds(), axis_span_seconds);
  if (ranks <= 0 || !(span > 0)) return R"(<p class="note">No trace for this system.</p>)";
  const std::array<Track, 3> tracks{Track::compute, Track::comm, Track::nic};
  // The relay lane (routing legs carried for other ranks) only when some shown rank carries any.
  const bool relays = std::any_of(trace.events.begin(), trace.events.end(), [&](const TraceEvent& e) {
    return e.track == Track::nic && e.rank < ranks;
  });
  const int lanes = relays ? 3 : 2;
  // The legend is HTML above the chart (chart_figure); the top margin holds the forward | backward labels.
  const double left = 120, lane = 14, lane_gap = 3, rank_gap = 10, top = 26;
  const double rank_height = lanes * (lane + lane_gap) + rank_gap;
  const double height = top + ranks * rank_height + 44;
  SvgCanvas canvas(chart_width, height, "Timeline of the first ranks, " + system.label);
  const TimeUnit unit = time_unit_for(span);
  const LinearScale x{0, span, left, chart_width - 20};
  std::vector<double> ticks = nice_ticks(0, span * unit.per_second, 10);
  for (double& tick : ticks) tick /= unit.per_second;
  const double axis_y = height - 44;
  draw_x_axis(canvas, x, ticks, axis_y, top - 4, unit.per_second,
              fmt::format("time within one layer, forward then backward ({})", unit.symbol));
  std::vector<LegendEntry> legend{{part_colour("attention"), "attention"},
                                  {part_colour("gemm"), "GEMM"},
                                  {part_colour("send"), "send / recv"},
                                  {part_colour("remap"), "remap"}};
  if (relays) legend.push_back({part_colour("route"), "routed relay legs"});
  for (int rank = 0; rank < ranks; ++rank) {
    const double rank_y = top + rank * rank_height;
    for (std::size_t s = 0; s < static_cast<std::size_t>(lanes); ++s) {
      const double y = rank_y + static_cast<double>(s) * (lane + lane_gap);
      canvas.rect(left, y, x.range_high - left, lane, "#F6F7F9");
      canvas.text(left - 8, y + 11, fmt::format("rank {} {}", rank, s == 2 ? "relay" : to_string(tracks[s])),
                  "end", "tick");
    }
  }
  for (const TraceEvent& event : trace.events) {
    if (event.rank >= ranks) continue;
    const std::size_t s = event.track == Track::compute ? 0 : event.track == Track::comm ? 1 : 2;
    const double y = top + event.rank * rank_height + static_cast<double>(s) * (lane + lane_gap);
    const double width = std::max(0.6, x(event.end) - x(event.start));  // keep very short kernels visible
    canvas.rect(x(event.start), y, width, lane, part_colour(to_string(event.category)),
                fmt::format("rank {} {}: {} ({}, {})", event.rank, to_string(event.pass), event.name,
                            format_seconds(event.end - event.start), to_string(event.category)));
  }
  if (trace.layer.backward > 0) {
    const double split = x(trace.layer.forward);
    canvas.line(split, top - 6, split, axis_y, "#333A44", 1, true);
    canvas.text(split - 4, top - 8, "forward", "end", "tick");
    canvas.text(split + 4, top - 8, "backward", "start", "tick");
  }
  return chart_figure(canvas, legend);
}

}  // namespace zb::reports
