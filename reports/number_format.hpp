#pragma once
// Human-readable numbers shared by the console table, the HTML report and `compare`: one place decides how
// a duration or a rate is shown, so the three never disagree. Machine-readable outputs (JSON, gbench,
// Perfetto) always carry the raw SI value instead.
#include <string>

namespace zb::reports {

// 1.23 s, 45.6 ms, 789 µs, 12.0 ns: three significant digits in the largest unit that keeps the value ≥ 1.
[[nodiscard]] std::string format_seconds(double seconds);
// 1.23 M, 456 k, 12.3: SI prefixes for counts and rates (tokens/s, FLOP/s).
[[nodiscard]] std::string format_si(double value);
// 0.4123 → "41.2 %".
[[nodiscard]] std::string format_percent(double fraction);
// A small share, two significant digits below 10 %: 0.000108 → "0.011 %", 0.0193 → "1.9 %", 0.435 →
// "44 %" (format_percent would show a planner's share of an iteration as "0.0 %").
[[nodiscard]] std::string format_share(double fraction);
// +20.0 %, −3.1 % (relative change given as a fraction).
[[nodiscard]] std::string format_change(double fraction);
// A ratio such as a speed-up: 1.84×.
[[nodiscard]] std::string format_ratio(double ratio);
// p-values: 0.0042, 0.31, <1e-6.
[[nodiscard]] std::string format_p_value(double p);

}  // namespace zb::reports
