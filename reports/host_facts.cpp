#include "reports/host_facts.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

namespace zb::reports {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// The value after "key:" on the first line that starts with `key` ("model name\t: AMD EPYC" → "AMD EPYC").
std::string field(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':', key.size());
    if (colon != std::string::npos) return trimmed(line.substr(colon + 1));
  }
  return "";
}

std::optional<std::int64_t> memory_total(const std::filesystem::path& meminfo) {
  std::istringstream value(field(meminfo, "MemTotal"));  // "24683584 kB"
  std::int64_t kibibytes = 0;
  std::string unit;
  if (!(value >> kibibytes >> unit) || unit != "kB") return std::nullopt;
  return kibibytes * 1024;
}

bool looks_like_version(const std::string& token) {
  return !token.empty() && std::isdigit(static_cast<unsigned char>(token.front())) != 0 &&
         token.find('.') != std::string::npos && std::all_of(token.begin(), token.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
         });
}

// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build ..." → "550.90.07".
std::string driver_version(const std::filesystem::path& version_file) {
  std::istringstream words(field(version_file, "NVRM version"));
  std::string word;
  while (words >> word) {
    if (looks_like_version(word)) return word;
  }
  return "";
}

std::vector<GpuFacts> nvidia_gpus(const std::filesystem::path& folder) {
  std::vector<GpuFacts> out;
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::filesystem::path information = entry.path() / "information";
    GpuFacts gpu;
    gpu.model = field(information, "Model");
    gpu.bus_id = field(information, "Bus Location");
    if (gpu.bus_id.empty()) gpu.bus_id = entry.path().filename().string();  // the folder is named by bus id
    if (!gpu.model.empty()) out.push_back(std::move(gpu));
  }
  // Directory order is the file system's; bus order is the machine's and stable.
  std::sort(out.begin(), out.end(), [](const GpuFacts& a, const GpuFacts& b) { return a.bus_id < b.bus_id; });
  return out;
}

std::string host_name() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown";
  return std::string(buffer.data());
}

std::string operating_system() {
  utsname names{};
  if (uname(&names) != 0) return "";
  return std::string(names.sysname) + " " + names.release + " " + names.machine;
}

}  // namespace

HostFacts read_host_facts(const std::filesystem::path& root) {
  HostFacts facts;
  facts.name = host_name();
  facts.os = operating_system();
  facts.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  facts.cpu_model = field(root / "proc/cpuinfo", "model name");
  facts.memory_bytes = memory_total(root / "proc/meminfo");
  facts.gpus = nvidia_gpus(root / "proc/driver/nvidia/gpus");
  facts.gpu_driver = driver_version(root / "proc/driver/nvidia/version");
  return facts;
}

nlohmann::ordered_json host_facts_to_json(const HostFacts& facts) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuFacts& gpu : facts.gpus) gpus.push_back({{"model", gpu.model}, {"bus_id", gpu.bus_id}});
  auto text_or_null = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
  };
  return nlohmann::ordered_json{
      {"name", facts.name},
      {"os", text_or_null(facts.os)},
      {"cpu_model", text_or_null(facts.cpu_model)},
      {"logical_cpus", facts.logical_cpus},
      {"memory_bytes",
       facts.memory_bytes ? nlohmann::ordered_json(*facts.memory_bytes) : nlohmann::ordered_json()},
      {"gpus", std::move(gpus)},
      {"gpu_driver", text_or_null(facts.gpu_driver)},
  };
}

}  // namespace zb::reports
