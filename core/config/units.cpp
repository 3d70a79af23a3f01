#include "core/config/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <span>
#include <system_error>

#include "core/common/error.hpp"

namespace zb {
namespace {

struct Unit {
  std::string_view symbol;
  double factor;  // SI base units per one of this unit
};

// Decimal prefixes follow SI (1 GB = 1e9 bytes, 1 Gbit = 1e9 bits) because vendor datasheets quote link
// rates that way; binary prefixes (GiB) are accepted too because HBM capacity is quoted in GiB.
constexpr std::array bandwidth_units{
    Unit{"B/s", 1.0},         Unit{"KB/s", 1e3},           Unit{"MB/s", 1e6},
    Unit{"GB/s", 1e9},        Unit{"TB/s", 1e12},          Unit{"KiB/s", 1024.0},
    Unit{"MiB/s", 1048576.0}, Unit{"GiB/s", 1073741824.0}, Unit{"TiB/s", 1099511627776.0},
    Unit{"bit/s", 1.0 / 8},   Unit{"Kbit/s", 1e3 / 8},     Unit{"Mbit/s", 1e6 / 8},
    Unit{"Gbit/s", 1e9 / 8},  Unit{"Tbit/s", 1e12 / 8},
};
constexpr std::array latency_units{
    Unit{"s", 1.0},
    Unit{"ms", 1e-3},
    Unit{"us", 1e-6},
    Unit{"\u00b5s", 1e-6} /* micro sign */,
    Unit{"\u03bcs", 1e-6} /* Greek mu */,
    Unit{"ns", 1e-9},
};
constexpr std::array memory_units{
    Unit{"B", 1.0},         Unit{"KB", 1e3},           Unit{"MB", 1e6},
    Unit{"GB", 1e9},        Unit{"TB", 1e12},          Unit{"KiB", 1024.0},
    Unit{"MiB", 1048576.0}, Unit{"GiB", 1073741824.0}, Unit{"TiB", 1099511627776.0},
};
constexpr std::array compute_units{
    Unit{"FLOP/s", 1.0},   Unit{"MFLOP/s", 1e6},  Unit{"GFLOP/s", 1e9},
    Unit{"TFLOP/s", 1e12}, Unit{"PFLOP/s", 1e15},
};

std::span<const Unit> units_of(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bandwidth:
      return bandwidth_units;
    case QuantityKind::latency:
      return latency_units;
    case QuantityKind::memory:
      return memory_units;
    case QuantityKind::compute:
      return compute_units;
  }
  return {};
}

const char* kind_name(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bandwidth:
      return "bandwidth";
    case QuantityKind::latency:
      return "latency";
    case QuantityKind::memory:
      return "memory";
    case QuantityKind::compute:
      return "compute";
  }
  return "?";
}

const char* base_unit_of(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bandwidth:
      return "B/s";
    case QuantityKind::latency:
      return "s";
    case QuantityKind::memory:
      return "B";
    case QuantityKind::compute:
      return "FLOP/s";
  }
  return "?";
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// A hint for a unit that is not valid for `kind`: a bits/bytes ambiguity, a case slip, or a unit that
// belongs to another kind of quantity (a memory size where a bandwidth is expected).
std::string unit_hint(std::string_view unit, QuantityKind kind) {
  for (std::string_view prefix : {"K", "M", "G", "T"}) {
    const std::string bits_short = std::string(prefix) + "b/s";
    const std::string bits_ps = std::string(prefix) + "bps";
    if (unit == bits_short || equal_ignoring_case(unit, bits_ps)) {
      return fmt::format("write \"{}bit/s\" for bits or \"{}B/s\" for bytes", prefix, prefix);
    }
  }
  for (const Unit& u : units_of(kind)) {
    if (equal_ignoring_case(u.symbol, unit)) return fmt::format("did you mean \"{}\"?", u.symbol);
  }
  for (QuantityKind other :
       {QuantityKind::bandwidth, QuantityKind::latency, QuantityKind::memory, QuantityKind::compute}) {
    if (other == kind) continue;
    for (const Unit& u : units_of(other)) {
      if (u.symbol == unit) return fmt::format("\"{}\" is a {} unit", unit, kind_name(other));
    }
  }
  return {};
}

std::string trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

std::string expected_form(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bandwidth:
      return "expected a bandwidth such as \"400 Gbit/s\" or \"450 GB/s\"";
    case QuantityKind::latency:
      return "expected a latency such as \"2 us\", \"5 ns\" or \"1 ms\"";
    case QuantityKind::memory:
      return "expected a memory size such as \"141 GiB\" or \"80 GB\"";
    case QuantityKind::compute:
      return "expected a compute rate such as \"989 TFLOP/s\"";
  }
  return "expected a quantity with a unit";
}

QuantityParse parse_quantity(std::string_view raw, QuantityKind kind) {
  const std::string text = trim(raw);
  if (text.empty()) return {std::nullopt, "empty value: " + expected_form(kind)};

  double number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [number_end, ec] = std::from_chars(begin, end, number);
  if (ec == std::errc::result_out_of_range) {
    return {std::nullopt, fmt::format("\"{}\": the number is out of range", text)};
  }
  if (ec != std::errc{} || number_end == begin) {
    return {std::nullopt, fmt::format("\"{}\" does not start with a number: {}", text, expected_form(kind))};
  }
  if (!std::isfinite(number)) return {std::nullopt, fmt::format("\"{}\" is not a finite number", text)};
  if (number < 0) return {std::nullopt, fmt::format("\"{}\" must not be negative", text)};

  const std::string unit = trim(std::string_view(number_end, static_cast<std::size_t>(end - number_end)));
  if (unit.empty()) return {std::nullopt, fmt::format("\"{}\" has no unit: {}", text, expected_form(kind))};
  for (const Unit& u : units_of(kind)) {
    if (u.symbol != unit) continue;
    // "1e308 TiB" is a finite number times a unit, but no finite quantity: refuse it here rather than let
    // an infinity reach the cost model (where every time would be zero or NaN).
    const double value = number * u.factor;
    if (!std::isfinite(value)) {
      return {std::nullopt,
              fmt::format("\"{}\" is too large: in {} it overflows to infinity", text, base_unit_of(kind))};
    }
    return {value, {}};
  }
  std::string message =
      fmt::format("\"{}\": unknown {} unit \"{}\": {}", text, kind_name(kind), unit, expected_form(kind));
  if (const std::string hint = unit_hint(unit, kind); !hint.empty()) message += " (" + hint + ")";
  return {std::nullopt, message};
}

static double parse_or_throw(std::string_view text, QuantityKind kind) {
  QuantityParse parsed = parse_quantity(text, kind);
  if (!parsed.value) throw_input_error({}, parsed.error);
  return *parsed.value;
}

double parse_bandwidth(std::string_view text) {
  return parse_or_throw(text, QuantityKind::bandwidth);
}
double parse_latency(std::string_view text) {
  return parse_or_throw(text, QuantityKind::latency);
}
double parse_memory(std::string_view text) {
  return parse_or_throw(text, QuantityKind::memory);
}
double parse_compute(std::string_view text) {
  return parse_or_throw(text, QuantityKind::compute);
}

// Picks the largest unit (ordered small to large) in which |value| ≥ 1, so the number shown is short.
static std::string format_scaled(double value, std::span<const Unit> ascending_units) {
  if (!std::isfinite(value)) return fmt::format("{} {}", value, ascending_units.front().symbol);
  const Unit* chosen = &ascending_units.front();
  for (const Unit& u : ascending_units) {
    if (std::fabs(value) >= u.factor) chosen = &u;
  }
  return fmt::format("{:.4g} {}", value / chosen->factor, chosen->symbol);
}

std::string format_bandwidth(double bytes_per_second) {
  constexpr std::array units{Unit{"B/s", 1.0},  Unit{"KB/s", 1e3},  Unit{"MB/s", 1e6},
                             Unit{"GB/s", 1e9}, Unit{"TB/s", 1e12}, Unit{"PB/s", 1e15}};
  return format_scaled(bytes_per_second, units);
}

std::string format_bitrate(double bytes_per_second) {
  constexpr std::array units{Unit{"bit/s", 1.0}, Unit{"Kbit/s", 1e3}, Unit{"Mbit/s", 1e6},
                             Unit{"Gbit/s", 1e9}, Unit{"Tbit/s", 1e12}};
  return format_scaled(bytes_per_second * 8, units);
}

std::string format_bytes(double bytes) {
  constexpr std::array units{Unit{"B", 1.0},
                             Unit{"KiB", 1024.0},
                             Unit{"MiB", 1048576.0},
                             Unit{"GiB", 1073741824.0},
                             Unit{"TiB", 1099511627776.0},
                             Unit{"PiB", 1125899906842624.0}};
  return format_scaled(bytes, units);
}

std::string format_seconds(double seconds) {
  // Below a nanosecond (or exactly zero) the nanosecond unit still reads best.
  constexpr std::array units{Unit{"ns", 1e-9}, Unit{"us", 1e-6}, Unit{"ms", 1e-3}, Unit{"s", 1.0}};
  if (seconds == 0) return "0 s";
  return format_scaled(seconds, units);
}

std::string format_flops(double flops_per_second) {
  constexpr std::array units{Unit{"FLOP/s", 1.0},   Unit{"MFLOP/s", 1e6},  Unit{"GFLOP/s", 1e9},
                             Unit{"TFLOP/s", 1e12}, Unit{"PFLOP/s", 1e15}, Unit{"EFLOP/s", 1e18}};
  return format_scaled(flops_per_second, units);
}

std::string format_billions(double count) {
  return fmt::format("{:.3g}B", count / 1e9);
}

}  // namespace zb
