#include "reports/profile_report.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "reports/svg.hpp"

namespace zb::reports {
namespace {

struct ProfileValue {
  std::string_view key;
  double value;
  double default_value;
  [[nodiscard]] bool differs() const { return value != default_value; }
};

// A profile value as a number: flags (interference) are JSON booleans, shown here as 1 and 0.
double as_number(const nlohmann::json& value) {
  return value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>();
}

// Walks the keys in the table's order so that every report lists them the same way.
std::vector<ProfileValue> values_of(const HardwareProfile& profile) {
  const nlohmann::json values = profile.to_json();
  const nlohmann::json defaults = HardwareProfile{}.to_json();
  std::vector<ProfileValue> out;
  for (std::string_view key : hardware_profile_keys()) {
    const std::string name(key);
    out.push_back({key, as_number(values.at(name)), as_number(defaults.at(name))});
  }
  return out;
}

}  // namespace

std::string profile_statement(const HardwareProfileSpec& spec) {
  std::string changes;
  for (const ProfileValue& v : values_of(spec.profile)) {
    if (!v.differs()) continue;
    changes +=
        fmt::format("{}{} {:g} (default {:g})", changes.empty() ? "" : ", ", v.key, v.value, v.default_value);
  }
  std::string out = "hardware profile: " + spec.source;
  if (spec.source != "defaults") out += changes.empty() ? " (every value at its default)" : ": " + changes;
  return out;
}

nlohmann::ordered_json profile_to_json(const HardwareProfileSpec& spec) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  nlohmann::ordered_json differs = nlohmann::ordered_json::array();
  for (const ProfileValue& v : values_of(spec.profile)) {
    values[std::string(v.key)] = v.value;
    if (v.differs()) differs.push_back(v.key);
  }
  return nlohmann::ordered_json{
      {"source", spec.source}, {"values", std::move(values)}, {"differs_from_defaults", std::move(differs)}};
}

std::string profile_table_html(const HardwareProfileSpec& spec) {
  std::string out = fmt::format(R"(<p>Source: <code>{}</code></p>)", html_escape(spec.source));
  out += "<table><thead><tr><th>constant</th><th>value</th><th>default</th></tr></thead><tbody>";
  for (const ProfileValue& v : values_of(spec.profile)) {
    out += fmt::format(R"(<tr{}><td><code>{}</code></td><td>{:g}</td><td>{:g}</td></tr>)",
                       v.differs() ? R"( class="changed")" : "", v.key, v.value, v.default_value);
  }
  return out + "</tbody></table>";
}

}  // namespace zb::reports
