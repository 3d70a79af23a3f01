// The "cluster" section: a preset (optional) whose values explicit keys override, then consistency checks.
#include <fmt/format.h>

#include "core/config/did_you_mean.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario_sections.hpp"

namespace zb::sections {
namespace {

constexpr int max_nodes = 100000;   // keeps nodes × GPUs well inside int
constexpr int max_per_node = 1024;  // GPUs or NICs in one node
constexpr double max_oversubscription = 1000;

std::string preset_list() {
  std::string out;
  for (const std::string& name : cluster_preset_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void read_link(const ObjectReader& cluster, std::string_view key, LinkSpec& link, bool& has_bandwidth) {
  const auto section = cluster.object(key, {"bandwidth", "latency"});
  if (!section) return;
  has_bandwidth = section->has("bandwidth");
  if (auto bandwidth = section->quantity("bandwidth", QuantityKind::bandwidth, true))
    link.bandwidth = *bandwidth;
  if (auto latency = section->quantity("latency", QuantityKind::latency, false)) link.latency = *latency;
}

void read_gpu_to_nic(const ObjectReader& cluster, ClusterSpec& spec, bool derive_default) {
  const nlohmann::json* map = cluster.array("gpu_to_nic");
  const std::string path = cluster.path_of("gpu_to_nic");
  if (map == nullptr) {
    if (cluster.has("gpu_to_nic")) return;  // wrong type, already reported
    if (derive_default) {
      // No map given while the counts differ from the preset (or there is none): spread GPUs over the
      // NICs in contiguous blocks, which is how PCIe switches pair them on common 8-GPU boards.
      spec.gpu_to_nic.clear();
      for (int gpu = 0; gpu < spec.gpus_per_node; ++gpu) {
        spec.gpu_to_nic.push_back(
            static_cast<int>(static_cast<long long>(gpu) * spec.nics_per_node / spec.gpus_per_node));
      }
    }
    return;
  }
  LoadContext& context = cluster.context();
  std::vector<int> indices;
  bool all_integers = true;
  for (std::size_t i = 0; i < map->size(); ++i) {
    const nlohmann::json& entry = (*map)[i];
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 0 ||
        entry.get<std::int64_t>() >= max_per_node) {
      context.add(index_path(path, i), "expected a NIC index (an integer >= 0), got " + describe_json(entry));
      all_integers = false;
      continue;
    }
    indices.push_back(entry.get<int>());
  }
  if (!all_integers) return;
  if (indices.size() != static_cast<std::size_t>(spec.gpus_per_node)) {
    context.add(path,
                fmt::format("has {} entries but gpus_per_node is {}", indices.size(), spec.gpus_per_node),
                "give the NIC index of every GPU of a node");
  }
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= spec.nics_per_node) {
      context.add(
          index_path(path, i),
          fmt::format("NIC index {} does not exist: nics_per_node is {}", indices[i], spec.nics_per_node),
          fmt::format("NIC indices run from 0 to {}", spec.nics_per_node - 1));
    }
  }
  spec.gpu_to_nic = std::move(indices);
}

}  // namespace

ClusterSpec read_cluster(const ObjectReader& root, bool& ok) {
  LoadContext& context = root.context();
  const std::size_t problems_before = context.problems.size();
  ok = false;
  ClusterSpec spec;
  if (!root.require("cluster", "for example {\"preset\": \"dgx-h200\", \"nodes\": 2}")) return spec;
  const auto cluster =
      root.object("cluster", {"preset", "nodes", "gpus_per_node", "gpu", "nvlink", "nics_per_node", "nic",
                              "gpu_to_nic", "pcie", "oversubscription"});
  if (!cluster) return spec;

  bool from_preset = false;
  bool unknown_preset = false;
  if (auto preset = cluster->string("preset")) {
    if (const ClusterPreset* found = find_cluster_preset(*preset)) {
      spec = found->spec;
      from_preset = true;
    } else {
      unknown_preset = true;
      context.add(
          cluster->path_of("preset"),
          fmt::format("unknown cluster preset \"{}\"; the presets are {}", printable(*preset), preset_list()),
          did_you_mean(*preset, cluster_preset_names()));
    }
  } else if (!cluster->has("preset")) {
    spec.gpu.name = "custom";
    spec.nvlink.latency = 2e-6;  // typical figures, as in the presets (presets.cpp [LAT])
    spec.nic.latency = 5e-6;
  }

  if (auto nodes = cluster->integer("nodes", 1, max_nodes)) spec.nodes = static_cast<int>(*nodes);
  const auto gpus = cluster->integer("gpus_per_node", 1, max_per_node);
  if (gpus) spec.gpus_per_node = static_cast<int>(*gpus);
  const auto nics = cluster->integer("nics_per_node", 1, max_per_node);
  if (nics) spec.nics_per_node = static_cast<int>(*nics);

  bool has_peak = false, has_memory = false, has_nvlink = false, has_nic = false;
  if (const auto gpu = cluster->object("gpu", {"name", "peak_bf16", "memory"})) {
    if (auto name = gpu->non_empty_string("name")) spec.gpu.name = *name;
    has_peak = gpu->has("peak_bf16");
    has_memory = gpu->has("memory");
    if (auto peak = gpu->quantity("peak_bf16", QuantityKind::compute, true)) spec.gpu.peak_flops = *peak;
    if (auto memory = gpu->quantity("memory", QuantityKind::memory, true)) spec.gpu.memory_bytes = *memory;
  }
  read_link(*cluster, "nvlink", spec.nvlink, has_nvlink);
  read_link(*cluster, "nic", spec.nic, has_nic);
  if (const nlohmann::json* pcie = cluster->get("pcie"); pcie != nullptr && pcie->is_null()) {
    spec.pcie_bandwidth.reset();  // null switches off a preset's PCIe link
  } else if (const auto pcie_section = cluster->object("pcie", {"bandwidth"})) {
    if (pcie_section->require("bandwidth", "or write \"pcie\": null to leave the link out")) {
      if (auto bandwidth = pcie_section->quantity("bandwidth", QuantityKind::bandwidth, true)) {
        spec.pcie_bandwidth = *bandwidth;
      }
    }
  }
  if (auto over = cluster->number("oversubscription", 1.0, max_oversubscription))
    spec.oversubscription = *over;

  if (!from_preset && !unknown_preset) {
    const std::string hint = "required when the cluster names no preset (presets: " + preset_list() + ")";
    const std::string base = cluster->path();
    if (!has_peak) context.add(base + ".gpu.peak_bf16", "missing required key", hint);
    if (!has_memory) context.add(base + ".gpu.memory", "missing required key", hint);
    if (!has_nvlink) context.add(base + ".nvlink.bandwidth", "missing required key", hint);
    if (!has_nic) context.add(base + ".nic.bandwidth", "missing required key", hint);
  }
  // The preset's GPU→NIC map only fits the preset's counts; when either count changes, derive a new one.
  const bool counts_changed = cluster->has("gpus_per_node") || cluster->has("nics_per_node");
  if (gpus.has_value() == cluster->has("gpus_per_node") &&
      nics.has_value() == cluster->has("nics_per_node")) {
    read_gpu_to_nic(*cluster, spec, !from_preset || counts_changed);
  }
  ok = context.problems.size() == problems_before;
  return spec;
}

}  // namespace zb::sections
