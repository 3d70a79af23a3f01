#pragma once
// What `zeppelin-bench report` (cli/cmd_report.cpp) needs from a report.json to replay its run, and the
// check that the replay reproduced it. Separate from the command so that tests can pin each rule.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace zb::cli {

// report.json of a long run on a large cluster is tens of MiB (per-iteration NIC arrays); more is no report.
inline constexpr std::size_t max_report_replay_bytes = 256u * 1024u * 1024u;

struct ReplayInput {
  nlohmann::json scenario;  // a scenario file's content that reproduces the run
  std::string plan_file;    // the run's --plan file, when it had one
};

// The scenario that ran (run.effective_scenario) made self-contained: the hardware profile inline as
// run.hardware_profile.values records it (so a profile file that moved or changed does not matter), a
// relative lengths file resolved against the folder of the scenario file the run read
// (provenance.scenario_file, relative to where it ran), output.dir dropped. Throws zb::Error (exit 2)
// naming `file` and the JSON path for a report this cannot replay: another schema, a measured run (its
// figures come from hardware, not from a seed), a missing section, a --plan file that is gone.
[[nodiscard]] ReplayInput replay_input(const nlohmann::json& report, const std::string& file);

// "" when `replayed` carries the same figures as `original` (the sections scenario, verdict,
// best_baseline, baseline_ranking, workload, systems, comparisons and gates, volatile fields aside);
// else the first difference as "/systems/0/per_iteration/1/iteration_seconds: 6.79 in the report, 6.81
// replayed".
[[nodiscard]] std::string first_figure_difference(const nlohmann::json& original,
                                                  const nlohmann::json& replayed);

// "zeppelin-bench 0.1.0, git beff254d1055 (dirty)" from provenance, "an unknown build" without one.
[[nodiscard]] std::string build_of(const nlohmann::json& report);

}  // namespace zb::cli
