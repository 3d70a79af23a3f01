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
