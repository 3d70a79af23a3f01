// The `sim` backend's registration (core/exec/backend_registry.hpp): SimGrid's model of the scenario's
// cluster. It has no settings outside the scenario, so no options.
#include "core/exec/backend_registry.hpp"
#include "core/exec/sim/sim_executor.hpp"

namespace zb::sim {
namespace {

std::unique_ptr<Executor> make_sim_executor() {
  return std::make_unique<SimExecutor>();
}

const BackendRegistration registration{BackendInfo{
    .name = "sim",
    .description = "SimGrid flow model of the scenario's cluster (docs/SIMULATOR.md); the default",
    .simulated = true,
    .order = 10,
    .factory = make_sim_executor}};

}  // namespace
}  // namespace zb::sim
