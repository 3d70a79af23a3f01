// `zeppelin-bench list [systems|backends|clusters|models|datasets|scenarios] [--format text|json]`: what the
// tool knows, printed from the same tables the scenario loader validates against, so the listing cannot drift
// from the checks. JSON carries the same facts in SI units (FLOP/s, bytes, bytes/s), for scripts.
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
#include "core/cost/model_params.hpp"
#include "core/exec/backend_registry.hpp"
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

// Every registered backend with its options, from the registry make_executor answers from.
void list_backends() {
  std::vector<TableRow> rows;
  for (const BackendInfo& backend : backend_catalog()) {
    rows.push_back({backend.name, backend.simulated ? "simulated" : "measured",
                    backend.available() ? "yes" : "no", "", "", backend.description});
    const BackendOptionValues defaults =
        backend.defaults != nullptr ? backend.defaults() : BackendOptionValues{};
    for (std::size_t i = 0; i < backend.options.size(); ++i) {
      const BackendOption& option = backend.options[i];
      std::string type = to_string(option.type);
      if (!option.choices.empty()) type += " (" + option_text(option.choices) + ")";
      rows.push_back({"  " + option.name, type, "", defaults[i].second.empty() ? "\"\"" : defaults[i].second,
                      option.environment, option.description});
    }
  }
  print_table(stdout,
              {"BACKEND / OPTION", "TIMING / TYPE", "IN BUILD", "DEFAULT", "ENVIRONMENT", "DESCRIPTION"},
              rows);
  for (const BackendInfo& backend : backend_catalog()) {
    if (!backend.available())
      std::printf("\n%s is not available in this build: %s.\n", backend.name.c_str(),
                  backend.unavailable.c_str());
  }
  std::printf(
      "\nSet an option through its environment variable; a run's report records the values it used "
      "(provenance.backend).\n");
}

nlohmann::ordered_json backends_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const BackendInfo& backend : backend_catalog()) {
    const BackendOptionValues defaults =
        backend.defaults != nullptr ? backend.defaults() : BackendOptionValues{};
    nlohmann::ordered_json options = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < backend.options.size(); ++i) {
      const BackendOption& option = backend.options[i];
      nlohmann::ordered_json entry = {{"name", option.name}, {"type", to_string(option.type)}};
      if (!option.choices.empty()) entry["choices"] = option.choices;
      entry["default"] = defaults[i].second;
      entry["environment"] = option.environment;
      entry["description"] = option.description;
      options.push_back(std::move(entry));
    }
    out.push_back({{"name", backend.name},
                   {"description", backend.description},
                   {"timing", backend.simulated ? "simulated" : "measured"},
                   {"available", backend.available()},
                   {"unavailable_reason", backend.available() ? nlohmann::ordered_json(nullptr)
                                                              : nlohmann::ordered_json(backend.unavailable)},
                   {"options", options}});
  }
  return out;
}

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

nlohmann::ordered_json systems_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SystemInfo& system : system_catalog()) {
    nlohmann::ordered_json options = nlohmann::ordered_json::array();
    for (const SystemOption& option : system.options)
      options.push_back({{"name", option.name},
                         {"type", describe_option_type(option)},
                         {"default", nlohmann::ordered_json::parse(option.default_value.dump())},
                         {"description", option.description}});
    out.push_back({{"name", system.name}, {"description", system.description}, {"options", options}});
  }
  return out;
}

nlohmann::ordered_json clusters_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ClusterPreset& preset : cluster_presets()) {
    const ClusterSpec& c = preset.spec;
    out.push_back({{"name", preset.name},
                   {"summary", preset.summary},
                   {"gpus_per_node", c.gpus_per_node},
                   {"gpu", c.gpu.name},
                   {"peak_flops", c.gpu.peak_flops},
                   {"memory_bytes", c.gpu.memory_bytes},
                   {"nvlink_bandwidth_bytes_per_second", c.nvlink.bandwidth},
                   {"nics_per_node", c.nics_per_node},
                   {"nic_bandwidth_bytes_per_second", c.nic.bandwidth},
                   {"gpu_to_nic", c.gpu_to_nic}});
  }
  return out;
}

// Every preset with its parameter counts (core/cost/model_params.hpp: stored, and what one token uses); an
// MoE preset's entry has a "moe" object besides.
nlohmann::ordered_json models_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ModelPreset& preset : model_presets()) {
    const ModelSpec& m = preset.spec;
    nlohmann::ordered_json entry = {{"name", preset.name},        {"summary", preset.summary},
                                    {"layers", m.layers},         {"hidden", m.hidden},
                                    {"heads", m.heads},           {"kv_heads", m.kv_heads},
                                    {"ffn_hidden", m.ffn_hidden}, {"vocab", m.vocab}};
    const ModelParams params = count_params(m);
    entry["params"] = params.total;
    entry["active_params"] = params.active;
    if (m.has_experts()) {
      entry["moe"] = {
          {"experts", m.moe.experts},
          {"top_k", m.moe.top_k},
          {"shared_experts", m.moe.shared_experts},
          {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
          {"capacity_factor", m.moe.capacity_factor ? nlohmann::ordered_json(*m.moe.capacity_factor)
                                                    : nlohmann::ordered_json("dropless")}};
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// "8 × 14336, top-2" for Mixtral; "60 × 1408, top-4, 4 shared" for Qwen-MoE; "-" for a dense model.
std::string expert_shape(const MoeSpec& moe) {
  if (moe.experts == 0) return "-";
  std::string shape = fmt::format("{} \u00d7 {}, top-{}", moe.experts, moe.expert_ffn_hidden, moe.top_k);
  if (moe.shared_experts > 0) shape += fmt::format(", {} shared", moe.shared_experts);
  if (moe.capacity_factor) shape += fmt::format(", capacity {:g}", *moe.capacity_factor);
  return shape;
}

// "6.74B" for llama-7b; "46.7B, 12.9B active" for Mixtral (the figures its release states).
std::string param_counts(const ModelSpec& model) {
  const ModelParams p = count_params(model);
  if (!model.has_experts()) return format_billions(p.total);
  return format_billions(p.total) + ", " + format_billions(p.active) + " active";
}

nlohmann::ordered_json datasets_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const DatasetPreset& preset : dataset_presets())
    out.push_back({{"name", preset.name}, {"source", preset.source}, {"description", describe(preset)}});
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
                    expert_shape(m.moe), param_counts(m), preset.summary});
  }
  print_table(
      stdout,
      {"PRESET", "LAYERS", "HIDDEN", "HEADS", "KV_HEADS", "FFN", "VOCAB", "EXPERTS", "PARAMS", "MODEL"},
      rows);
  std::printf(
      "\nEXPERTS: routed experts \u00d7 their FFN width, experts per token, shared experts. PARAMS: "
      "projections, experts and embeddings (no norms), and for MoE what one token uses (docs/METRICS.md, "
      "\"Parameters\"). MoE models run with expert parallelism (\"parallelism\": {\"expert\": e}), "
      "composable with tensor parallelism, whose width the experts share (ETP = TP, docs/MOE.md).\n");
}

// Every preset with its fit, source, assumptions and target quantiles, from the workload module's table.
void list_datasets() {
  for (const DatasetPreset& preset : dataset_presets()) std::printf("%s\n", describe(preset).c_str());
  std::printf("Use one as \"workload\": {\"dataset\": \"NAME\"}; docs/WORKLOADS.md has the fits.\n");
}

// A path as the user can pass it from where they are: relative to the working folder when the file is
// under it (`scenarios/quickstart.json` from the source tree), absolute otherwise.
std::string usable_path(const std::filesystem::path& file) {
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::current_path(ec);
  const std::filesystem::path relative = ec ? std::filesystem::path() : file.lexically_relative(here);
  if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  return file.lexically_normal().generic_string();
}

// A scenario's name and description, read leniently: a broken file is listed, not fatal.
TableRow describe_scenario_file(const std::filesystem::path& file) {
  const std::string shown = usable_path(file);
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

// The scenario library: installed beside the executable (PREFIX/share/zeppelin-bench/scenarios, from
// `cmake --install`), else the source tree this binary was built from.
std::filesystem::path library_folder() {
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed =
        executable.parent_path().parent_path() / "share" / "zeppelin-bench" / "scenarios";
    if (std::filesystem::is_directory(installed, ec)) return installed;
  }
  return std::filesystem::path(ZB_SOURCE_DIR) / "scenarios";
}

std::vector<std::filesystem::path> library_files() {
  const std::filesystem::path library = library_folder();
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(library, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void list_scenarios() {
  const std::vector<std::filesystem::path> files = library_files();
  if (files.empty()) {
    std::printf("no scenarios found in %s\n", library_folder().string().c_str());
    return;
  }
  std::vector<TableRow> rows;
  for (const auto& file : files) rows.push_back(describe_scenario_file(file));
  print_table(stdout, {"FILE", "NAME", "DESCRIPTION"}, rows);
}

nlohmann::ordered_json scenarios_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& file : library_files()) {
    const TableRow row = describe_scenario_file(file);
    out.push_back({{"file", row[0]}, {"name", row[1]}, {"description", row[2]}});
  }
  return out;
}

struct Listing {
  const char* name;
  void (*print)();
  nlohmann::ordered_json (*json)();
};
constexpr Listing listings[] = {
    {"systems", list_systems, systems_json},    {"backends", list_backends, backends_json},
    {"clusters", list_clusters, clusters_json}, {"models", list_models, models_json},
    {"datasets", list_datasets, datasets_json}, {"scenarios", list_scenarios, scenarios_json}};

void list(const std::string& what, const std::string& format) {
  const bool all = what == "all";
  if (format == "json") {  // one object, keyed by listing, with the asked one(s) only
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const Listing& listing : listings)
      if (all || what == listing.name) out[listing.name] = listing.json();
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    std::fflush(stdout);
    return;
  }
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
  CLI::App* command = app.add_subcommand(
      "list", "List the systems, backends, cluster and model presets, datasets or scenarios");
  auto what = std::make_shared<std::string>("all");
  command
      ->add_option("WHAT", *what,
                   "What to list: systems, backends, clusters, models, datasets, scenarios or all")
      ->check(CLI::IsMember({"systems", "backends", "clusters", "models", "datasets", "scenarios", "all"}))
      ->capture_default_str();
  auto format = std::make_shared<std::string>("text");
  command->add_option("--format", *format, "text (tables) or json (one object, SI units, for scripts)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command->callback([what, format, &status] {
    list(*what, *format);
    status.code = ExitCode::ok;
  });
}

}  // namespace zb::cli
