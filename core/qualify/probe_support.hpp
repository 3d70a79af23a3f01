#pragma once
// What qualify's and calibrate's probes share: deterministic input values, and the transport of a launch
// whose world must be the scenario's cluster.
#include <memory>
#include <string_view>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::qualify {

// Deterministic values in [−1, 1): a figure must not depend on what the memory held.
void fill_probe_values(std::vector<float>& values, unsigned seed);

// The MPI transport of a multi-process launch. Exit 2 (zb::Error) when the launch's world is not the
// cluster's GPU count (both named) or this build has no MPI; `command` names the subcommand in the message.
[[nodiscard]] std::unique_ptr<reference::Transport> launched_transport(const Launch& launch,
                                                                       const ClusterSpec& cluster,
                                                                       std::string_view command);

}  // namespace zb::qualify
