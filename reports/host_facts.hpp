#pragma once
// The machine a report was produced on, as far as the operating system tells without linking anything:
// CPU model and count and memory from /proc, the kernel from uname, and the NVIDIA GPUs and driver from
// /proc/driver/nvidia (present wherever the NVIDIA kernel driver is loaded, whether or not this binary
// was built with CUDA). A figure the system does not give is left empty, never guessed.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zb::reports {

struct GpuFacts {
  std::string model;   // "NVIDIA H200"
  std::string bus_id;  // "0000:18:00.0"
};

struct HostFacts {
  std::string name;                          // host name
  std::string os;                            // "Linux 6.8.0-45-generic x86_64"
  std::string cpu_model;                     // first "model name" of /proc/cpuinfo
  int logical_cpus = 0;                      // processors the scheduler can use
  std::optional<std::int64_t> memory_bytes;  // MemTotal
  std::vector<GpuFacts> gpus;                // in bus order
  std::string gpu_driver;                    // NVIDIA kernel module version, "" without the driver
};

// Reads the facts below `root` ("/" on a real machine; tests pass a folder laid out like /proc). The host
// name, kernel and CPU count come from the running system whatever `root` is.
[[nodiscard]] HostFacts read_host_facts(const std::filesystem::path& root = "/");

[[nodiscard]] nlohmann::ordered_json host_facts_to_json(const HostFacts& facts);

}  // namespace zb::reports
