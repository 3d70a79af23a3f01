#include "cli/scenario_set.hpp"

#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/scenario_loader.hpp"

namespace zb::cli {
namespace {

[[noreturn]] void refuse(const std::string& assignment, const std::string& what) {
  throw_input_error({"--set", "", 0, 0, -1}, assignment + ": " + what,
                    "write --set KEY=VALUE with a dotted KEY as the scenario file nests it, e.g. "
                    "--set workload.iterations=5; a system written as a name is replaced whole: "
                    "--set 'systems.1={\"name\":\"ring-cp\",\"degree\":8}'");
}

bool is_index(std::string_view part) {
  if (part.empty()) return false;
  for (const char c : part)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  return true;
}

// JSON when it parses as JSON, else the text itself as a string (so --set workload.dataset=arxiv works).
nlohmann::json value_of(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  return value.is_discarded() ? nlohmann::json(text) : value;
}

}  // namespace

Scenario load_scenario_with_sets(const std::filesystem::path& file,
                                 const std::vector<std::string>& assignments,
                                 std::vector<ScenarioOverride>& overrides) {
  if (assignments.empty()) return load_scenario(file);
  nlohmann::json json = read_jsonc_file(file);
  for (const std::string& assignment : assignments) {
    const std::size_t equals = assignment.find('=');
    if (equals == std::string::npos) refuse(assignment, "no '=' between the key and the value");
    const std::string key = assignment.substr(0, equals);
    if (key.empty()) refuse(assignment, "an empty key");
    nlohmann::json* node = &json;
    std::string pointer;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = key.find('.', start);
      const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty()) refuse(assignment, "an empty part in the key");
      pointer += "/" + part;
      if (node->is_array()) {
        if (!is_index(part) || std::stoul(part) >= node->size())
          refuse(assignment, pointer + " is not an element of an array of " + std::to_string(node->size()));
        node = &(*node)[std::stoul(part)];
      } else if (node->is_object() || node->is_null()) {
        node = &(*node)[part];
      } else {
        refuse(assignment,
               pointer.substr(0, pointer.rfind('/')) + " holds a value, not an object to step into");
      }
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    *node = value_of(assignment.substr(equals + 1));
    overrides.push_back({"--set", pointer, *node});
  }
  // Checked as the file would be; positions refer to the file with the assignments applied.
  return parse_scenario(json.dump(2), file.string() + " (with --set)");
}

}  // namespace zb::cli
