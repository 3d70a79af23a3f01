#pragma once
// Quantities with units, as written in scenario files ("450 GB/s", "2 us", "141 GiB", "989 TFLOP/s").
// Parsing turns them into SI base units (bytes/s, seconds, bytes, FLOP/s); formatting turns SI values back
// into short human-readable strings for the console and reports. Units are case-sensitive on purpose:
// "Gb/s" is ambiguous (bits or bytes?), so it is rejected with a hint rather than guessed.
#include <optional>
#include <string>
#include <string_view>

namespace zb {

enum class QuantityKind { bandwidth, latency, memory, compute };

// The result of parsing one quantity: a value, or a message saying what was expected.
struct QuantityParse {
  std::optional<double> value;  // SI base units; set on success
  std::string error;            // set on failure, e.g. `"450" has no unit: expected a bandwidth such as ...`
};

// The range of quantities a run can finish with. The simulator's clock is a double, and its events are
// resolved to 1 ns: once an iteration lasts beyond about 10^6 s, a microsecond latency or kernel launch no
// longer moves the clock, and the simulation cannot end (or takes a year to). These bounds sit a thousand
// times beyond any hardware the tool models, and keep one layer of the largest preset model far below that
// horizon; validation refuses quantities outside them (docs/SCENARIOS.md, "Quantities").
inline constexpr double min_bandwidth = 1e6;  // 1 MB/s: NICs and GPU links run at GB/s
inline constexpr double min_compute = 1e9;    // 1 GFLOP/s: GPUs run at TFLOP/s
inline constexpr double max_latency = 1.0;    // 1 s: links answer in microseconds

// Parses "<number> <unit>" (the space is optional). The number must be finite and ≥ 0; whether 0 is
// acceptable is for the caller to decide. Never throws.
[[nodiscard]] QuantityParse parse_quantity(std::string_view text, QuantityKind kind);

// The form an error message shows, e.g. `a bandwidth such as "400 Gbit/s" or "450 GB/s"`.
[[nodiscard]] std::string expected_form(QuantityKind kind);

// Throwing shorthands (zb::Error, exit code 2, no location) for code and tests that hold a literal.
[[nodiscard]] double parse_bandwidth(std::string_view text);  // → bytes/s
[[nodiscard]] double parse_latency(std::string_view text);    // → seconds
[[nodiscard]] double parse_memory(std::string_view text);     // → bytes
[[nodiscard]] double parse_compute(std::string_view text);    // → FLOP/s

// Formatting, at most four significant digits with the unit chosen so the number is in [1, 1000).
[[nodiscard]] std::string format_bandwidth(double bytes_per_second);  // decimal: "450 GB/s"
[[nodiscard]] std::string format_bitrate(double bytes_per_second);    // bits, as NICs are sold: "400 Gbit/s"
[[nodiscard]] std::string format_bytes(double bytes);                 // binary: "141 GiB"
[[nodiscard]] std::string format_seconds(double seconds);             // "2 us", "1.5 ms", "3.2 s"
[[nodiscard]] std::string format_flops(double flops_per_second);      // "989 TFLOP/s"
[[nodiscard]] std::string format_billions(double count);              // parameters: "6.74B", "46.7B"

}  // namespace zb
