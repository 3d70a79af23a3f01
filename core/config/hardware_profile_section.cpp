// The "hardware_profile" key: the cost model's constants, as a profile file's path (resolved against the
// scenario's folder, so a scenario and its measured profile travel together) or an inline object with
// HardwareProfile's keys. Absent, the defaults of core/config/hardware_profile.hpp apply.
#include <fmt/format.h>

#include "core/config/jsonc.hpp"
#include "core/config/scenario_sections.hpp"

namespace zb::sections {
namespace {

constexpr const char* key = "hardware_profile";

// A profile file's problems name the profile file and its key; the scenario key that pointed there is
// added to the hint, so the user knows which scenario brought the file in.
void add_file_problems(const Error& error, LoadContext& context, const std::string& scenario_path) {
  for (const Problem& problem : error.problems()) {
    const std::string from = fmt::format("(read for {} of {})", scenario_path, context.file.string());
    context.problems.add(problem.where, problem.what,
                         problem.hint.empty() ? from : problem.hint + " " + from);
  }
}

}  // namespace

HardwareProfileSpec read_hardware_profile(const ObjectReader& root,
                                          const std::filesystem::path& scenario_folder) {
  HardwareProfileSpec spec;
  const nlohmann::json* value = root.get(key);
  if (value == nullptr) return spec;
  LoadContext& context = root.context();
  const std::string path = root.path_of(key);
  if (value->is_object()) {
    spec.profile = read_hardware_profile(*value, Location{context.file.string(), path}, context.problems);
    spec.source = "inline";
    return spec;
  }
  if (!value->is_string() || value->get_ref<const std::string&>().empty()) {
    context.add(
        path, "expected a profile file's path or an object of profile values, got " + describe_json(*value),
        "write \"profiles/h100.json\" (relative to this scenario's folder) or {\"gemm_efficiency\": 0.7}");
    return spec;
  }
  const std::filesystem::path written(value->get<std::string>());
  const std::filesystem::path file =
      (written.is_absolute() ? written : scenario_folder / written).lexically_normal();
  try {
    spec = load_hardware_profile_file(file.string());
  } catch (const Error& error) {
    add_file_problems(error, context, path);
  }
  return spec;
}

}  // namespace zb::sections
