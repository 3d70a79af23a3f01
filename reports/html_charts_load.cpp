// Load charts of the HTML report: compute time per GPU and the document-length histogram.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/html_charts.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

constexpr double chart_width = 1040;

struct RankCompute {
  double attention = 0;
  double linear = 0;
};

// Compute-stream busy time per rank over one layer (forward + backward), scaled to the whole iteration.
std::vector<RankCompute> compute_per_rank(const Trace& trace) {
  std::vector<RankCompute> out(static_cast<std::size_t>(std::max(trace.world_size, 0)));
  const double layers = std::max(trace.layers, 1);
  for (const TraceEvent& event : trace.events) {
    if (event.track != Track::compute || event.rank < 0 || event.rank >= trace.world_size) continue;
    RankCompute& rank = out[static_cast<std::size_t>(event.rank)];
    (event.category == EventCategory::attention ? rank.attention : rank.linear) +=
        (event.end - event.start) * layers;
  }
  return out;
}

std::string length_label(double tokens) {
  if (tokens >= 1024 * 1024) return fmt::format("{:g}M", tokens / (1024 * 1024));
  if (tokens >= 1024) return fmt::format("{:g}k", tokens / 1024);
  return fmt::format("{:g}", tokens);
}

std::string heatmap(const SystemSummary& system, const Trace& trace,
                    const std::vector<RankCompute>& per_rank) {
  const int per_node = std::max(trace.gpus_per_node, 1);
  const int nodes = (trace.world_size + per_node - 1) / per_node;
  const double left = 70, top = 28, cell_w = std::min(40.0, (chart_width / 2 - left - 10) / per_node);
  const double cell_h = std::clamp(300.0 / nodes, 4.0, 18.0);
  SvgCanvas canvas(chart_width / 2, top + nodes * cell_h + 30,
                   "Compute time per GPU (heatmap), " + system.label);
  double busiest = 0;
  for (const RankCompute& r : per_rank) busiest = std::max(busiest, r.attention + r.linear);
  canvas.text(left, 16, fmt::format("compute per GPU, darker = busier (max {})", format_seconds(busiest)),
              "start", "tick");
  for (int rank = 0; rank < trace.world_size; ++rank) {
    const RankCompute& r = per_rank[static_cast<std::size_t>(rank)];
    const double share = busiest > 0 ? (r.attention + r.linear) / busiest : 0;
    const int node = rank / per_node, local = rank % per_node;
    // Opacity encodes load on the system's colour: one hue per system across the page.
    canvas.polygon({{left + local * cell_w, top + node * cell_h},
                    {left + (local + 1) * cell_w - 1, top + node * cell_h},
                    {left + (local + 1) * cell_w - 1, top + (node + 1) * cell_h - 1},
                    {left + local * cell_w, top + (node + 1) * cell_h - 1}},
                   system_colour(system.index), 0.08 + 0.92 * share);
    if (local == 0 && (nodes <= 24 || node % 8 == 0))
      canvas.text(left - 6, top + (node + 1) * cell_h - 2, fmt::format("node {}", node), "end", "tick");
  }
  canvas.text(left, top + nodes * cell_h + 18, "columns: local GPU index; rows: nodes", "start", "tick");
  return chart_figure(canvas);
}

}  // namespace

double busiest_gpu_compute_seconds(const Trace& trace) {
  double busiest = 0;
  for (const RankCompute& r : compute_per_rank(trace)) busiest = std::max(busiest, r.attention + r.linear);
  return busiest;
}

std::string gpu_load_chart(const SystemSummary& system, const Trace& trace, double axis_max_seconds) {
  if (trace.world_size <= 0 || trace.events.empty())
    return R"(<p class="note">No trace for this system.</p>)";
  const std::vector<RankCompute> per_rank = compute_per_rank(trace);
  if (trace.world_size > gpu_bar_chart_limit) return heatmap(system, trace, per_rank);

  // The legend is HTML above the chart (chart_figure); the top margin holds the top tick's label.
  const double width = chart_width / 2 - 10, left = 64, right = 36, top = 12, plot_h = 150;
  SvgCanvas canvas(width, top + plot_h + 48, "Compute time per GPU, " + system.label);
  double busiest = 0, total = 0;
  for (const RankCompute& r : per_rank) {
    busiest = std::max(busiest, r.attention + r.linear);
    total += r.attention + r.linear;
  }
  const double axis_top = std::max({busiest, axis_max_seconds, 1e-9});
  const TimeUnit unit = time_unit_for(axis_top);
  const std::vector<double> ticks = nice_ticks(0, axis_top * unit.per_second, 4);
  const LinearScale y{0, ticks.back() / unit.per_second, top + plot_h, top};
  const LinearScale x{0, static_cast<double>(trace.world_size), left, width - right};
  std::vector<double> tick_seconds;
  for (const double t : ticks) tick_seconds.push_back(t / unit.per_second);
  draw_y_axis(canvas, y, tick_seconds, left, width - right, unit.per_second,
              fmt::format("compute ({})", unit.symbol));
  const double slot = (x.range_high - x.range_low) / trace.world_size;
  for (int rank = 0; rank < trace.world_size; ++rank) {
    const RankCompute& r = per_rank[static_cast<std::size_t>(rank)];
    const double bx = x(rank) + slot * 0.12, bw = slot * 0.76;
    canvas.rect(bx, y(r.attention), bw, y(0) - y(r.attention), part_colour("attention"),
                fmt::format("rank {}: attention {}, linear {}", rank, format_seconds(r.attention),
                            format_seconds(r.linear)));
    canvas.rect(bx, y(r.attention + r.linear), bw, y(r.attention) - y(r.attention + r.linear),
                part_colour("linear"));
    if (trace.world_size <= 32 || rank % 8 == 0)
      canvas.text(x(rank) + slot / 2, top + plot_h + 14, std::to_string(rank), "middle", "tick");
  }
  const double mean = total / trace.world_size;
  canvas.line(left, y(mean), width - right, y(mean), "#333A44", 1, true);
  canvas.text(width - right + 4, y(mean) + 4, "mean", "start", "tick");
  canvas.text(0.5 * (left + width - right), top + plot_h + 34, "GPU (rank)", "middle", "axis-title");
  return chart_figure(canvas, {{part_colour("attention"), "attention"}, {part_colour("linear"), "linear"}});
}

std::string length_histogram_chart(const BatchRecord& workload) {
  const LengthHistogram& histogram = workload.lengths;
  if (histogram.documents() == 0) return R"(<p class="note">No documents.</p>)";
  // Half-octave bins on a log₂ axis: wide enough to be smooth, narrow enough to show the tail. The record's
  // bins are the same half octaves counted from length 1, so the chart's bin b is its bin b + 2·first_octave.
  const double first_octave = std::floor(std::log2(static_cast<double>(histogram.shortest())));
  const double last_octave =
      std::max(first_octave + 1, std::ceil(std::log2(static_cast<double>(histogram.longest())) + 1e-9));
  const int bins = static_cast<int>(2 * (last_octave - first_octave));
  std::vector<double> documents(static_cast<std::size_t>(bins), 0), tokens(static_cast<std::size_t>(bins), 0);
  const double all_tokens = histogram.tokens();
  const int offset = static_cast<int>(2 * first_octave);
  for (int recorded = 0; recorded < LengthHistogram::kBins; ++recorded) {
    if (histogram.documents_in(recorded) == 0) continue;
    const auto bin = static_cast<std::size_t>(std::clamp(recorded - offset, 0, bins - 1));
    documents[bin] += histogram.documents_in(recorded);
    tokens[bin] += histogram.tokens_in(recorded);
  }
  const double left = 70, right = 20, top = 16, plot_h = 200;
  SvgCanvas canvas(chart_width, top + plot_h + 50, "Histogram of document lengths, log axis");
  const double most = *std::max_element(documents.begin(), documents.end());
  const std::vector<double> ticks = nice_ticks(0, most, 5);
  const LinearScale y{0, ticks.back(), top + plot_h, top};
  const LinearScale x{first_octave, last_octave, left, chart_width - right};
  draw_y_axis(canvas, y, ticks, left, chart_width - right, 1, "documents");
  for (int b = 0; b < bins; ++b) {
    const double lo = first_octave + b / 2.0, hi = lo + 0.5;
    const auto i = static_cast<std::size_t>(b);
    canvas.rect(
        x(lo) + 1, y(documents[i]), x(hi) - x(lo) - 2, y(0) - y(documents[i]), "#4C78A8",
        fmt::format("{}\u2013{} tokens: {} documents, {} of all tokens", length_label(std::pow(2.0, lo)),
                    length_label(std::pow(2.0, hi)), documents[i], format_percent(tokens[i] / all_tokens)));
  }
  for (double octave = first_octave; octave <= last_octave + 1e-9; octave += 1) {
    canvas.line(x(octave), y(0), x(octave), y(0) + 4, "#8A9099");
    canvas.text(x(octave), y(0) + 16, length_label(std::pow(2.0, octave)), "middle", "tick");
  }
  canvas.text(
      0.5 * (left + chart_width - right), y(0) + 36,
      fmt::format("document length (tokens, log\u2082 scale); {} documents over {} iteration{}",
                  histogram.documents(), workload.batches.size(), workload.batches.size() == 1 ? "" : "s"),
      "middle", "axis-title");
  return chart_figure(canvas);
}

}  // namespace zb::reports
