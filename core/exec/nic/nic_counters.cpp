#include "core/exec/nic/nic_counters.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/common/error.hpp"

namespace zb::nic {
namespace fs = std::filesystem;
namespace {

bool readable_number(const fs::path& file) {
  std::ifstream in(file);
  std::uint64_t value = 0;
  return static_cast<bool>(in >> value);
}

std::uint64_t read_number(const fs::path& file, const std::string& nic) {
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!in && text.empty())
    throw Error(ExitCode::runtime, Location{}, "NIC " + nic + ": cannot read " + file.string(),
                "the interface went away during the run");
  if (ec != std::errc{})
    throw Error(ExitCode::runtime, Location{},
                "NIC " + nic + ": " + file.string() + " holds \"" + text + "\", not a count");
  return value;
}

std::vector<std::string> sorted_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> split_nic_list(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) names.push_back(item);
  return names;
}

std::vector<NicCounters> resolve_nics(const std::vector<std::string>& names, const fs::path& sysfs) {
  std::vector<NicCounters> nics;
  for (const std::string& name : names) {
    const auto colon = name.find(':');
    const std::string device = name.substr(0, colon);
    const std::string port = colon == std::string::npos ? "1" : name.substr(colon + 1);
    const fs::path ib = sysfs / "class/infiniband" / device / "ports" / port / "counters";
    const fs::path net = sysfs / "class/net" / name / "statistics";
    NicCounters nic{.name = name, .tx = {}, .rx = {}};
    if (readable_number(ib / "port_xmit_data") && readable_number(ib / "port_rcv_data")) {
      nic.tx = ib / "port_xmit_data";
      nic.rx = ib / "port_rcv_data";
      nic.scale = 4;
    } else if (readable_number(net / "tx_bytes") && readable_number(net / "rx_bytes")) {
      nic.tx = net / "tx_bytes";
      nic.rx = net / "rx_bytes";
    } else {
      throw Error(
          ExitCode::bad_input, Location{},
          "NIC \"" + name + "\" has no byte counters: neither " + (ib / "port_xmit_data").string() + " nor " +
              (net / "tx_bytes").string() + " can be read",
          "name InfiniBand ports as <device>[:<port>] (ls /sys/class/infiniband) or network interfaces "
          "by name (ls /sys/class/net) in ZB_NICS");
    }
    nics.push_back(std::move(nic));
  }
  return nics;
}

std::vector<std::string> default_nic_names(const fs::path& sysfs) {
  std::vector<std::string> names;
  for (const std::string& device : sorted_entries(sysfs / "class/infiniband"))
    for (const std::string& port : sorted_entries(sysfs / "class/infiniband" / device / "ports"))
      names.push_back(device + ":" + port);
  if (!names.empty()) return names;
  for (const std::string& netdev : sorted_entries(sysfs / "class/net"))
    if (netdev != "lo") names.push_back(netdev);
  return names;
}

ByteCounts read_counters(const NicCounters& nic) {
  return {.tx = read_number(nic.tx, nic.name) * nic.scale, .rx = read_number(nic.rx, nic.name) * nic.scale};
}

}  // namespace zb::nic
