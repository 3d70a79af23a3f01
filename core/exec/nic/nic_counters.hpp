#pragma once
// The byte counters of a host's network interfaces, read from sysfs as the kernel keeps them:
//   InfiniBand / RoCE ports  /sys/class/infiniband/<dev>/ports/<port>/counters/port_xmit_data, port_rcv_data
//                            in 4-byte words (the IB spec's PortXmitData and PortRcvData: octets / 4)
//   any netdev               /sys/class/net/<if>/statistics/tx_bytes, rx_bytes, in bytes
// A NIC is named "mlx5_0:1" (device and port; "mlx5_0" means port 1) or by its netdev name ("eth0",
// or "rail2" on the emulated cluster of scripts/emulated-cluster.sh). The NIC sampler (nic_sampler.hpp)
// reads these during a measured run; the order of the list is the NIC index the reports use.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zb::nic {

struct NicCounters {
  std::string name;              // as asked for: "mlx5_0:1", "rail0"
  std::filesystem::path tx, rx;  // the two counter files
  std::uint64_t scale = 1;       // bytes per counter unit (4 for InfiniBand port counters)
};

struct ByteCounts {
  std::uint64_t tx = 0, rx = 0;
};

// Resolves each name under `sysfs` ("/sys", or a copy of its layout): an InfiniBand device (with an
// optional ":port") first, then a netdev. zb::Error (exit 2) naming the NIC and the paths tried when a
// counter file is missing or unreadable, so a typo in ZB_NICS stops the run before it starts.
[[nodiscard]] std::vector<NicCounters> resolve_nics(const std::vector<std::string>& names,
                                                    const std::filesystem::path& sysfs = "/sys");

// Every InfiniBand port under `sysfs` (device order, then port), or when there is none every netdev but
// the loopback: what a measured run samples when the user names no NICs.
[[nodiscard]] std::vector<std::string> default_nic_names(const std::filesystem::path& sysfs = "/sys");

// "a,b,c" → {"a", "b", "c"} (empty items dropped): the ZB_NICS variable.
[[nodiscard]] std::vector<std::string> split_nic_list(const std::string& text);

// The counters now, in bytes. zb::Error (exit 3) when a file vanished or holds no number.
[[nodiscard]] ByteCounts read_counters(const NicCounters& nic);

}  // namespace zb::nic
