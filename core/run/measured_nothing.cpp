#include "core/run/measured_nothing.hpp"

#include <fmt/format.h>

#include "core/exec/backend_registry.hpp"

namespace zb {

std::string nothing_measured(const RunResult& result) {
  if (is_simulated_backend(result.backend)) return "";
  std::string systems;
  for (const SystemResult& s : result.systems) {
    int oom = 0;
    std::string first_oom;
    for (const IterationResult& it : s.iterations) {
      if (it.feasible) return "";  // something ran: the run measured it
      ++oom;
      if (first_oom.empty() && !it.oom.empty()) first_oom = it.oom.front().str();
    }
    systems += fmt::format("{}{}: out of GPU memory in {} of {} iterations{}", systems.empty() ? "" : "; ",
                           s.system.label, oom, s.iterations.size(),
                           first_oom.empty() ? "" : ", first: " + first_oom);
  }
  return fmt::format("backend {} measured nothing: no system ran in any iteration [{}]", result.backend,
                     systems.empty() ? "no system" : systems);
}

}  // namespace zb
