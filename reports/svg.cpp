#include "reports/svg.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace zb::reports {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* system_colour(std::size_t index) {
  // Okabe–Ito inspired, readable on white and distinguishable with common colour-vision deficiencies.
  constexpr std::array<const char*, 8> palette{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                               "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442"};
  return palette[index % palette.size()];
}

const char* part_colour(std::string_view part) {
  if (part == "attention") return "#3B6FB6";
  if (part == "linear" || part == "gemm") return "#8FB3E0";
  if (part == "exposed_comm" || part == "send" || part == "recv") return "#E07B39";
  if (part == "remap") return "#9C6ADE";
  if (part == "tensor_parallel" || part == "tensor-parallel") return "#2A9D8F";
  if (part.rfind("route", 0) == 0) return "#F2B134";
  if (part == "embedding_and_head") return "#6BAF73";
  if (part == "gradient_sync") return "#B5533C";
  if (part == "optimizer") return "#4D4D4D";
  return "#C8CDD3";  // idle and anything unnamed
}

std::vector<double> nice_ticks(double low, double high, int target) {
  std::vector<double> ticks;
  if (!(high > low) || target < 1) {
    ticks.push_back(low);
    return ticks;
  }
  const double raw_step = (high - low) / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw_step)));
  const double normalized = raw_step / power;
  const double step = power * (normalized < 1.5 ? 1 : normalized < 3 ? 2 : normalized < 7 ? 5 : 10);
  // Ticks by index, not by repeated addition, so rounding errors do not accumulate; the last tick is at or
  // above `high`, so an axis drawn to it always covers the data.
  const double first_index = std::ceil(low / step - 1e-9);
  const double last_index = std::ceil(high / step - 1e-9);
  for (double i = first_index; i <= last_index; i += 1) ticks.push_back(i == 0 ? 0.0 : i * step);
  return ticks;
}

std::string tick_label(double value) {
  std::string text = fmt::format("{:.6g}", value);
  return text;
}

SvgCanvas::SvgCanvas(double width, double height, std::string_view description)
    : width_(width), height_(height), description_(description) {}

void SvgCanvas::rect(double x, double y, double width, double height, std::string_view fill,
                     std::string_view tooltip) {
  if (!(width > 0) || !(height > 0)) return;
  if (tooltip.empty()) {
    body_ += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"/>)", x, y,
                         width, height, fill);
  } else {
    // A <title> child is the SVG way to a hover tooltip, with no script.
    body_ += fmt::format(
        R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"><title>{}</title></rect>)", x,
        y, width, height, fill, html_escape(tooltip));
  }
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width,
                     bool dashed) {
  body_ += fmt::format(
      R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="{}"{}/>)", x1, y1,
      x2, y2, stroke, stroke_width, dashed ? R"( stroke-dasharray="3 3")" : "");
}

void SvgCanvas::text(double x, double y, std::string_view content, std::string_view anchor,
                     std::string_view css_class, double rotate_degrees) {
  const std::string rotation =
      rotate_degrees != 0 ? fmt::format(R"x( transform="rotate({} {:.2f} {:.2f})")x", rotate_degrees, x, y)
                          : "";
  const std::string cls = css_class.empty() ? "" : fmt::format(R"( class="{}")", css_class);
  body_ += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" text-anchor="{}"{}{}>{}</text>)", x, y, anchor, cls,
                       rotation, html_escape(content));
}

namespace {
std::string points_text(const std::vector<std::pair<double, double>>& points) {
  std::string out;
  for (const auto& [x, y] : points) out += fmt::format("{:.2f},{:.2f} ", x, y);
  return out;
}
}  // namespace

void SvgCanvas::polygon(const std::vector<std::pair<double, double>>& points, std::string_view fill,
                        double opacity) {
  body_ += fmt::format(R"(<polygon points="{}" fill="{}" fill-opacity="{}"/>)", points_text(points), fill,
                       opacity);
}

void SvgCanvas::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                         double stroke_width) {
  body_ += fmt::format(
      R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round"/>)",
      points_text(points), stroke, stroke_width);
}

std::string SvgCanvas::str() const {
  // Scales down with its column (the stylesheet's max-width: 100%), but only as far as keeps the smallest
  // text legible.
  const double min_width = std::ceil(width_ * chart_legible_font_px / chart_smallest_font_px);
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {:.0f} {:.0f}" width="{:.0f}" height="{:.0f}" style="min-width:{:.0f}px" role="img" aria-label="{}">{}</svg>)",
      width_, height_, width_, height_, min_width, html_escape(description_), body_);
}

std::string chart_figure(const SvgCanvas& canvas, const std::vector<LegendEntry>& legend,
                         std::string_view caption) {
  std::string out = R"(<figure class="chart">)";
  if (!legend.empty()) {
    out += R"(<ul class="legend">)";
    for (const LegendEntry& entry : legend) {
      out += fmt::format(R"(<li><span class="swatch{}" style="background:{}"></span>{}</li>)",
                         entry.line ? " line" : "", html_escape(entry.colour), html_escape(entry.title));
    }
    out += "</ul>";
  }
  if (!caption.empty()) out += fmt::format(R"(<p class="caption">{}</p>)", html_escape(caption));
  return out + scroll_x(canvas.str()) + "</figure>";
}

std::string scroll_x(std::string_view html) {
  return fmt::format(R"(<div class="scroll-x">{}</div>)", html);
}

double LinearScale::operator()(double value) const {
  if (domain_high == domain_low) return range_low;
  return range_low + (value - domain_low) / (domain_high - domain_low) * (range_high - range_low);
}

void draw_x_axis(SvgCanvas& canvas, const LinearScale& x, const std::vector<double>& ticks, double y,
                 double grid_to, double label_scale, std::string_view title) {
  const double slack = 1e-9 * std::fabs(x.domain_high - x.domain_low);
  for (const double tick : ticks) {
    if (tick < x.domain_low - slack || tick > x.domain_high + slack) continue;  // never draw outside the plot
    const double px = x(tick);
    canvas.line(px, grid_to, px, y, "#E3E6EA");
    canvas.line(px, y, px, y + 4, "#8A9099");
    canvas.text(px, y + 16, tick_label(tick * label_scale), "middle", "tick");
  }
  canvas.line(x.range_low, y, x.range_high, y, "#8A9099");
  canvas.text(0.5 * (x.range_low + x.range_high), y + 34, title, "middle", "axis-title");
}

void draw_y_axis(SvgCanvas& canvas, const LinearScale& y, const std::vector<double>& ticks, double x,
                 double grid_to, double label_scale, std::string_view title) {
  const double slack = 1e-9 * std::fabs(y.domain_high - y.domain_low);
  for (const double tick : ticks) {
    if (tick < y.domain_low - slack || tick > y.domain_high + slack) continue;
    const double py = y(tick);
    canvas.line(x, py, grid_to, py, "#E3E6EA");
    canvas.line(x - 4, py, x, py, "#8A9099");
    canvas.text(x - 7, py + 4, tick_label(tick * label_scale), "end", "tick");
  }
  canvas.line(x, y.range_low, x, y.range_high, "#8A9099");
  const double middle = 0.5 * (y.range_low + y.range_high);
  canvas.text(x - 44, middle, title, "middle", "axis-title", -90);
}

}  // namespace zb::reports
