// The NVLink panel of the HTML report: per GPU (per node above gpu_bar_chart_limit GPUs), the share of its
// NVLink port's nominal bandwidth the layers' intra-node traffic used, transmit and receive side by side
// (docs/METRICS.md, "NVLink utilisation"). Means over the system's feasible iterations.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/config/units.hpp"
#include "reports/html_charts.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

constexpr double panel_width = 1040;
constexpr const char* receive_colour = "#333A44";

struct Bar {
  std::string label;    // axis label: rank, or "n3"
  std::string tooltip;  // what the bar pair stands for, with its figures
  double tx = 0, rx = 0;
};

std::vector<Bar> bars_per_gpu(const std::vector<NvlinkMetrics>& gpus) {
  std::vector<Bar> bars;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const NvlinkMetrics& g = gpus[k];
    bars.push_back({std::to_string(k),
                    fmt::format("node {} GPU {}: tx {} ({}B), rx {} ({}B)", g.node, g.gpu,
                                format_percent(g.tx_utilization), format_si(g.tx_bytes),
                                format_percent(g.rx_utilization), format_si(g.rx_bytes)),
                    g.tx_utilization, g.rx_utilization});
  }
  return bars;
}

// Many GPUs: one bar pair per node, the mean over its GPUs; the busiest GPU is in the tooltip.
std::vector<Bar> bars_per_node(const std::vector<NvlinkMetrics>& gpus) {
  std::vector<Bar> bars;
  for (std::size_t k = 0; k < gpus.size();) {
    const int node = gpus[k].node;
    double tx = 0, rx = 0, busiest = 0, count = 0;
    for (; k < gpus.size() && gpus[k].node == node; ++k) {
      tx += gpus[k].tx_utilization;
      rx += gpus[k].rx_utilization;
      busiest = std::max({busiest, gpus[k].tx_utilization, gpus[k].rx_utilization});
      count += 1;
    }
    bars.push_back(
        {fmt::format("n{}", node),
         fmt::format("node {}: mean over its GPUs tx {}, rx {}; busiest GPU {}", node,
                     format_percent(tx / count), format_percent(rx / count), format_percent(busiest)),
         tx / count, rx / count});
  }
  return bars;
}

}  // namespace

std::string nvlink_utilization_chart(const SystemSummary& system) {
  if (system.per_iteration.empty()) return R"(<p class="note">No feasible iteration: nothing to show.</p>)";
  if (system.nvlinks.empty()) return R"(<p class="note">This backend records no NVLink loads.</p>)";
  double bytes = 0;
  for (const NvlinkMetrics& g : system.nvlinks) bytes += g.tx_bytes + g.rx_bytes;
  if (!(bytes > 0))
    return R"(<p class="note">No traffic crossed NVLink: no transfer of this system stayed inside a node.</p>)";

  const bool per_node = static_cast<int>(system.nvlinks.size()) > gpu_bar_chart_limit;
  const std::vector<Bar> bars = per_node ? bars_per_node(system.nvlinks) : bars_per_gpu(system.nvlinks);
  // The legend and the totals are HTML above the chart (chart_figure), where they wrap on a narrow screen.
  const double left = 64, right = 20, top = 12, plot_h = 150;
  SvgCanvas canvas(panel_width, top + plot_h + 48,
                   "NVLink utilisation per " + std::string(per_node ? "node" : "GPU") + ", " + system.label);
  const LinearScale y{0, 1, top + plot_h, top};
  const LinearScale x{0, static_cast<double>(bars.size()), left, panel_width - right};
  draw_y_axis(canvas, y, {0, 0.25, 0.5, 0.75, 1}, left, panel_width - right, 100, "utilisation (%)");
  const char* colour = system_colour(system.index);
  const std::string totals =
      fmt::format("mean {} / max {} of {} per direction; {}B per iteration",
                  format_percent(system.aggregates(metric::nvlink_utilization_mean).mean),
                  format_percent(system.aggregates(metric::nvlink_utilization_max).mean),
                  format_bandwidth(system.nvlinks.front().bandwidth),
                  format_si(system.aggregates(metric::nvlink_bytes).mean));
  const double slot = (x.range_high - x.range_low) / static_cast<double>(bars.size());
  for (std::size_t k = 0; k < bars.size(); ++k) {
    const Bar& b = bars[k];
    const double bx = x(static_cast<double>(k)) + slot * 0.1, bw = slot * 0.4;
    const double tx = std::clamp(b.tx, 0.0, 1.0), rx = std::clamp(b.rx, 0.0, 1.0);
    canvas.rect(bx, y(tx), bw, y(0) - y(tx), colour, b.tooltip);
    canvas.rect(bx + bw, y(rx), bw, y(0) - y(rx), receive_colour, b.tooltip);
    if (bars.size() <= 32 || k % 8 == 0)
      canvas.text(x(static_cast<double>(k)) + slot / 2, top + plot_h + 14, b.label, "middle", "tick");
  }
  canvas.text(0.5 * (left + panel_width - right), top + plot_h + 34,
              per_node ? "node (mean over its GPUs)" : "GPU (rank)", "middle", "axis-title");
  return chart_figure(canvas, {{colour, "transmit"}, {receive_colour, "receive"}}, totals);
}

}  // namespace zb::reports
