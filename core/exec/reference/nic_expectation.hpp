#pragma once
// The bytes each NIC should carry in a measured reference run, from the Program alone: every transfer
// leg between two nodes moves its real fragment (message_payload.hpp: the leg's share of the message's
// float32 payload), and every message of a collective that moves rows moves its payload. Which NIC a
// leg uses is the cluster's GPU→NIC map and the pairing (ReferenceOptions::NicPairing). The executor
// puts the figure next to the sampled counters (LinkLoad::expected_bytes), so a report shows whether the
// NICs carried what the plan says, within the framing overhead (docs/REFERENCE.md).
#include <vector>

#include "core/config/scenario.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/reference_options.hpp"
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Sets expected_bytes of every measured NIC load in `loads` (tx: bytes leaving the node on that NIC,
// rx: arriving); loads of NICs no transfer uses get 0.
void set_expected_nic_bytes(std::vector<LinkLoad>& loads, const lower::Program& program,
                            const AttentionDims& dims, const ClusterSpec& cluster,
                            ReferenceOptions::NicPairing pairing);

}  // namespace zb::reference
