#pragma once
// Minimal building blocks for the self-contained HTML report: HTML escaping, a consistent palette, and an
// inline-SVG canvas with axis helpers. No charting library: the report must open offline, from a CI
// artefact, with no network and no script.
#include <string>
#include <string_view>
#include <vector>

namespace zb::reports {

// Escapes & < > " ' so any text (scenario names, labels, descriptions) is inert in element content and in
// quoted attribute values alike.
[[nodiscard]] std::string html_escape(std::string_view text);

// Colour of the i-th system of the scenario; the same system has the same colour in every chart.
[[nodiscard]] const char* system_colour(std::size_t index);
// Colours of the time-breakdown parts and of trace event categories (attention, linear, comm, remap, idle).
[[nodiscard]] const char* part_colour(std::string_view part);

// "Nice" axis ticks covering [low, high]: 1, 2 or 5 times a power of ten, about `target` of them.
[[nodiscard]] std::vector<double> nice_ticks(double low, double high, int target = 5);
// Tick label without trailing zeros: 0.5, 10, 1.25.
[[nodiscard]] std::string tick_label(double value);

// The smallest font chart text is set in (the stylesheet's `svg text.tick` and `svg text.panel`,
// html_style.hpp), and the smallest size it may render at when a chart scales down with a narrow column:
// an SVG never gets narrower than chart_legible_font_px / chart_smallest_font_px of its own width, and a
// narrower screen scrolls it sideways instead (chart_figure).
inline constexpr double chart_smallest_font_px = 11;
inline constexpr double chart_legible_font_px = 9.5;

class SvgCanvas {
 public:
  SvgCanvas(double width, double height, std::string_view description);

  void rect(double x, double y, double width, double height, std::string_view fill,
            std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1,
            bool dashed = false);
  // `anchor`: start | middle | end. `css_class` selects a style of the page's stylesheet.
  void text(double x, double y, std::string_view content, std::string_view anchor = "start",
            std::string_view css_class = "", double rotate_degrees = 0);
  void polygon(const std::vector<std::pair<double, double>>& points, std::string_view fill,
               double opacity = 1);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double stroke_width = 1.5);

  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] double height() const { return height_; }
  [[nodiscard]] std::string str() const;

 private:
  double width_;
  double height_;
  std::string description_;
  std::string body_;
};

// One entry of a chart's legend: a swatch of `colour` (a filled square, or a short line for a series drawn
// as a line) and its title.
struct LegendEntry {
  std::string colour;
  std::string title;
  bool line = false;
};

// A chart as the page shows it: the legend and the caption as HTML above the chart, where they wrap at any
// width and keep the page's text size (inside the SVG they would be cut off or shrink with it), then the
// SVG in a container that scrolls sideways when the screen is narrower than the chart may shrink to.
[[nodiscard]] std::string chart_figure(const SvgCanvas& canvas, const std::vector<LegendEntry>& legend = {},
                                       std::string_view caption = {});
// A table (or any wide block) in a container that scrolls sideways when the screen is narrower than the
// table, so no column is ever cut off or pushes the page wider than the screen.
[[nodiscard]] std::string scroll_x(std::string_view html);

// A linear mapping from data values to pixels.
struct LinearScale {
  double domain_low = 0, domain_high = 1;
  double range_low = 0, range_high = 1;
  [[nodiscard]] double operator()(double value) const;
};

// Axis with grid lines: ticks are data values; labels show value · label_scale. The title goes under the
// x axis, or rotated left of the y axis. `grid_to` is the far edge the grid lines reach.
void draw_x_axis(SvgCanvas& canvas, const LinearScale& x, const std::vector<double>& ticks, double y,
                 double grid_to, double label_scale, std::string_view title);
void draw_y_axis(SvgCanvas& canvas, const LinearScale& y, const std::vector<double>& ticks, double x,
                 double grid_to, double label_scale, std::string_view title);

}  // namespace zb::reports
