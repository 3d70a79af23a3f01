#include "reports/number_format.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace zb::reports {
namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string three_digits(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

}  // namespace

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0) return "0 s";
  if (magnitude >= 1) return three_digits(seconds) + " s";
  if (magnitude >= 1e-3) return three_digits(seconds * 1e3) + " ms";
  if (magnitude >= 1e-6) return three_digits(seconds * 1e6) + " \u00b5s";
  return three_digits(seconds * 1e9) + " ns";
}

std::string format_si(double value) {
  if (!std::isfinite(value)) return "n/a";
  struct Prefix {
    double scale;
    const char* symbol;
  };
  constexpr std::array<Prefix, 5> prefixes{
      {{1e15, " P"}, {1e12, " T"}, {1e9, " G"}, {1e6, " M"}, {1e3, " k"}}};
  for (const Prefix& prefix : prefixes) {
    // Rounding could print 1000 k; promote to the next prefix before that happens.
    if (std::fabs(value) >= prefix.scale * 0.9995) return three_digits(value / prefix.scale) + prefix.symbol;
  }
  return three_digits(value);
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return fmt::format("{:.1f} %", fraction * 100);
}

std::string format_share(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double percent = fraction * 100;
  if (percent >= 10 || percent <= 0) return fmt::format("{:.0f} %", percent);
  return fmt::format("{:.2g} %", percent);
}

std::string format_change(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double percent = fraction * 100;
  if (std::fabs(percent) < 0.05) return "0.0 %";
  // A real minus sign reads better than a hyphen in tables.
  return percent > 0 ? fmt::format("+{:.1f} %", percent) : fmt::format("\u2212{:.1f} %", -percent);
}

std::string format_ratio(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return fmt::format("{:.2f}\u00d7", ratio);
}

std::string format_p_value(double p) {
  if (!std::isfinite(p)) return "n/a";
  if (p < 1e-6) return "<1e-6";
  if (p < 0.001) return fmt::format("{:.1e}", p);
  if (p < 0.1) return fmt::format("{:.4f}", p);
  return fmt::format("{:.2f}", p);
}

}  // namespace zb::reports
