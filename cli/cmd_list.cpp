// `zeppelin-bench list [systems|clusters|models|datasets|scenarios]`: what the tool knows, printed from
// the same tables the scenario loader validates against, so the listing cannot drift from the checks.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/known_names.hpp"
#include "core/config/presets.hpp"
#include "core/config/system_catalog.hpp"
#include "core/config/units.hpp"
#include "core/workload/datasets.hpp"

#ifndef ZB_SOURCE_DIR
#error "ZB_SOURCE_DIR must name the source tree (cli/CMakeLists.txt defines it)"
#endif

namespace zb::cli {
namespace {

void list_systems() {
  std::vector<TableRow> rows;
  for (const SystemInfo& system : system_catalog()) {
    rows.push_back({system.name, "", "", system.description});
    for (const SystemOption& option : system.options) {
      rows.push_back({"  " + option.name, describe_option_type(option),
                      format_option_value(option.default_value), option.description});
    }
  }
  print_table(stdout, {"SYSTEM / OPTION", "TYPE", "DEFAULT", "DESCRIPTION"}, rows);
}

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

void list_clusters() {
  std::vector<TableRow> rows;
  for (const ClusterPreset& preset : cluster_presets()) {
    const ClusterSpec& c = preset.spec;
    rows.push_back({preset.name, fmt::format("{} \u00d7 {}", c.gpus_per_node, c.gpu.name),
                    format_flops(c.gpu.peak_flops), format_bytes(c.gpu.memory_bytes),
                    format_bandwidth(c.nvlink.bandwidth),
                    fmt::format("{} \u00d7 {}", c.nics_per_node, format_bitrate(c.nic.bandwidth)),
                    "[" + join_ints(c.gpu_to_nic) + "]"});
  }
  print_table(stdout, {"PRESET", "GPUS/NODE", "PEAK BF16", "MEMORY", "NVLINK/DIR", "NICS/NODE", "GPU_TO_NIC"},
              rows);
  std::printf("\nA preset describes one node; set \"nodes\" in the scenario. Sources: docs/SCENARIOS.md.\n");
}

void list_models() {
  std::vector<TableRow> rows;
  for (const ModelPreset& preset : model_presets()) {
    const ModelSpec& m = preset.spec;
    rows.push_back({preset.name, std::to_string(m.layers), std::to_string(m.hidden), std::to_string(m.heads),
                    std::to_string(m.kv_heads), std::to_string(m.ffn_hidden), std::to_string(m.vocab),
                    preset.summary});
  }
  print_table(stdout, {"PRESET", "LAYERS", "HIDDEN", "HEADS", "KV_HEADS", "FFN", "VOCAB", "MODEL"}, rows);
}

// Every preset with its fit, source, assumptions and target quantiles, from the workload module's table.
void list_datasets() {
  for (const DatasetPreset& preset : dataset_presets()) std::printf("%s\n", describe(preset).c_str());
  std::printf("Use one as \"workload\": {\"dataset\": \"NAME\"}; docs/WORKLOADS.md has the fits.\n");
}

// A scenario's name and description, read leniently: a broken file is listed, not fatal.
TableRow describe_scenario_file(const std::filesystem::path& file, const std::filesystem::path& root) {
  const std::string shown = file.lexically_relative(root).generic_string();
  try {
    const nlohmann::json json = read_jsonc_file(file);
    auto text = [&json](const char* key) {
      return json.is_object() && json.contains(key) && json[key].is_string() ? json[key].get<std::string>()
                                                                             : "";
    };
    return {shown, text("name"), text("description")};
  } catch (const Error& e) {
    return {shown, "?",
            "cannot be read: " + (e.problems().empty() ? std::string(e.what()) : e.problems().front().what)};
  }
}

void list_scenarios() {
  const std::filesystem::path source_dir(ZB_SOURCE_DIR);
  const std::filesystem::path library = source_dir / "scenarios";
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(library, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") files.push_back(it->path());
  }
  if (files.empty()) {
    std::printf("no scenarios found in %s\n", library.string().c_str());
    return;
  }
  std::sort(files.begin(), files.end());
  std::vector<TableRow> rows;
  for (const auto& file : files) rows.push_back(describe_scenario_file(file, source_dir));
  print_table(stdout, {"FILE", "NAME", "DESCRIPTION"}, rows);
}

struct Listing {
  const char* name;
  void (*print)();
};
constexpr Listing listings[] = {{"systems", list_systems},
                                {"clusters", list_clusters},
                                {"models", list_models},
                                {"datasets", list_datasets},
                                {"scenarios", list_scenarios}};

void list(const std::string& what) {
  const bool all = what == "all";
  bool first = true;
  for (const Listing& listing : listings) {
    if (!all && what != listing.name) continue;
    if (all) std::printf("%s== %s ==\n", first ? "" : "\n", listing.name);
    first = false;
    listing.print();
  }
  std::fflush(stdout);
}

}  // namespace

void add_list_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command =
      app.add_subcommand("list", "List the systems, cluster and model presets, datasets or scenarios");
  auto what = std::make_shared<std::string>("all");
  command->add_option("WHAT", *what, "What to list: systems, clusters, models, datasets, scenarios or all")
      ->check(CLI::IsMember({"systems", "clusters", "models", "datasets", "scenarios", "all"}))
      ->capture_default_str();
  command->callback([what, &status] {
    list(*what);
    status.code = ExitCode::ok;
  });
}

}  // namespace zb::cli
