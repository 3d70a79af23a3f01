#pragma once
// What a measured run says about the simulator: per system, the simulator's layers time for the same
// Program under the same hardware profile against the measured one (RunMetrics::simulation_ratio,
// docs/METRICS.md), or why there is no such figure. The console and the HTML report print these lines.
#include <string>
#include <vector>

#include "reports/summary.hpp"

namespace zb::reports {

// Nothing for a simulated run; otherwise a heading line and one line per system that ran.
[[nodiscard]] std::vector<std::string> simulation_statements(const RunSummary& summary);

}  // namespace zb::reports
