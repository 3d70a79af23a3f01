#include "reports/simulation_statement.hpp"

#include <iterator>

#include <fmt/format.h>

#include "reports/number_format.hpp"

namespace zb::reports {

std::vector<std::string> simulation_statements(const RunSummary& summary) {
  std::vector<std::string> lines;
  if (summary.simulated) return lines;
  for (const SystemSummary& s : summary.systems) {
    if (!s.feasible()) continue;
    if (s.aggregates(metric::simulation_ratio).count > 0) {
      const SampleAggregates& r = s.aggregates(metric::simulation_ratio);
      lines.push_back(
          fmt::format("{}: simulated/measured {} (simulated {}, measured {} per iteration; min {}, max {} "
                      "over {} iteration{})",
                      s.label, format_ratio(r.mean), format_seconds(s.simulated_layers_seconds),
                      format_seconds(s.measured_layers_seconds), format_ratio(r.min), format_ratio(r.max),
                      r.count, r.count == 1 ? "" : "s"));
    } else if (!s.stand_in.empty()) {
      lines.push_back(
          fmt::format("{}: no simulated/measured ratio: the {} backend computed {} (ZB_REF_DIMS=model on a "
                      "float32 model computes the model itself)",
                      s.label, summary.backend, s.stand_in));
    } else {
      lines.push_back(
          fmt::format("{}: no simulated/measured ratio (not simulated in this process)", s.label));
    }
  }
  if (lines.empty()) return lines;
  // The heading first, then the lines (built as a new vector: GCC 12 reports a false -Warray-bounds on
  // inserting a string at the front of this one when the string headers come precompiled).
  std::vector<std::string> out{
      "the simulator against this measurement (layers time L\u00b7(F+B), same Program, same hardware "
      "profile; "
      "> 1: the simulator is pessimistic):"};
  out.insert(out.end(), std::make_move_iterator(lines.begin()), std::make_move_iterator(lines.end()));
  return out;
}

}  // namespace zb::reports
