#include "core/config/scenario_loader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/config/backend_names.hpp"
#include "core/config/did_you_mean.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/known_names.hpp"
#include "core/config/scenario_sections.hpp"

namespace zb {
namespace {

constexpr std::size_t max_name_length = 100;

// Names end up in folder names (out/<name>) and report titles, hence the conservative character set.
std::string name_problem(const std::string& name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > max_name_length) return fmt::format("is longer than {} characters", max_name_length);
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return fmt::format("\"{}\" may contain only letters, digits, '.', '_' and '-'", printable(name));
  }
  if (name == "." || name == "..") return "must not be \".\" or \"..\"";
  return {};
}

}  // namespace

namespace sections {

OutputSpec read_output(const ObjectReader& root, const std::string& scenario_name) {
  OutputSpec spec;
  spec.dir = std::filesystem::path("out") / (scenario_name.empty() ? "scenario" : scenario_name);
  spec.formats = {"json", "html"};
  const auto output = root.object("output", {"dir", "formats"});
  if (!output) return spec;
  if (auto dir = output->non_empty_string("dir")) spec.dir = *dir;
  const nlohmann::json* formats = output->array("formats");
  if (formats == nullptr) return spec;
  spec.formats.clear();
  for (std::size_t i = 0; i < formats->size(); ++i) {
    const nlohmann::json& format = (*formats)[i];
    const std::string path = index_path(output->path_of("formats"), i);
    if (!format.is_string()) {
      root.context().add(path, "expected a format name (a string), got " + describe_json(format));
      continue;
    }
    const std::string name = format.get<std::string>();
    if (std::find(known_output_formats.begin(), known_output_formats.end(), name) ==
        known_output_formats.end()) {
      root.context().add(path, fmt::format("unknown output format \"{}\"", printable(name)),
                         suggestion_hint(name, known_output_formats));
    } else if (std::find(spec.formats.begin(), spec.formats.end(), name) != spec.formats.end()) {
      root.context().add(path, fmt::format("format \"{}\" is listed twice", name));
    } else {
      spec.formats.push_back(name);
    }
  }
  return spec;
}

}  // namespace sections

std::vector<std::string_view> scenario_top_level_keys() {
  return {"name",    "description", "seed",   "cluster", "model", "parallelism",      "workload",
          "systems", "backend",     "passes", "output",  "gates", "hardware_profile", "planner_error"};
}

Scenario parse_scenario(std::string_view text, const std::filesystem::path& file_for_messages) {
  nlohmann::json json = parse_jsonc(text, file_for_messages);  // syntax errors throw here, with line:column

  LoadContext context{file_for_messages, {}};
  const ObjectReader root(json, "", context, scenario_top_level_keys());
  if (!root.valid()) context.problems.throw_if_any();  // not an object: nothing else can be read

  Scenario scenario;
  if (root.require("name", "letters, digits, '.', '_' and '-', e.g. \"quickstart\"")) {
    if (auto name = root.string("name")) {
      if (std::string problem = name_problem(*name); !problem.empty())
        context.add(root.path_of("name"), problem);
      else
        scenario.name = *name;
    }
  }
  if (auto description = root.string("description")) scenario.description = *description;
  if (auto seed = root.unsigned_integer("seed")) scenario.seed = *seed;

  bool cluster_ok = false, model_ok = false, systems_ok = false;
  scenario.cluster = sections::read_cluster(root, cluster_ok);
  scenario.model = sections::read_model(root, model_ok);
  scenario.parallelism = sections::read_parallelism(root, cluster_ok ? &scenario.cluster : nullptr,
                                                    model_ok ? &scenario.model : nullptr);
  const std::filesystem::path folder = file_for_messages.parent_path();
  scenario.workload = sections::read_workload(root, folder);
  scenario.hardware_profile = sections::read_hardware_profile(root, folder);
  const std::optional<int> world_size =
      cluster_ok ? std::optional<int>(scenario.cluster.world_size() / scenario.parallelism.tensor)
                 : std::nullopt;
  SystemCheckContext facts{world_size};
  facts.tensor = scenario.parallelism.tensor;
  if (model_ok) {
    facts.heads = scenario.model.heads;
    facts.kv_heads = scenario.model.kv_heads;
  }
  if (cluster_ok) facts.gpus_per_node = scenario.cluster.gpus_per_node;
  scenario.systems = sections::read_systems(root, facts, systems_ok);
  scenario.gates = sections::read_gates(root, scenario.systems, systems_ok);

  // Any registered backend (core/config/backend_names.hpp): the set is open, the check is not.
  const std::vector<std::string_view> backends(backend_names().begin(), backend_names().end());
  if (auto backend = root.choice("backend", backends)) scenario.backend = *backend;
  if (auto passes = root.choice("passes", known_passes)) {
    scenario.passes = *passes == "fwd" ? Passes::fwd : Passes::fwd_bwd;
  }
  // Beyond a half, a "fit" would no longer say which of two layouts is faster at all.
  if (auto error = root.number("planner_error", 0.0, 0.5)) scenario.planner_error = *error;
  scenario.output = sections::read_output(root, scenario.name);

  context.problems.throw_if_any();
  scenario.source_file = file_for_messages;
  scenario.source_json = std::move(json);
  return scenario;
}

Scenario load_scenario(const std::filesystem::path& file) {
  return parse_scenario(read_text_file(file), file);
}

}  // namespace zb
