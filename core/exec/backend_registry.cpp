// The backend registry: filled by each backend folder's BackendRegistration at static initialisation,
// read-only afterwards. make_executor(Backend) (executor.hpp) is answered here too, so that the closed
// enum of the scenario reaches the executors only through the registered names.
#include "core/exec/backend_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/config/backend_names.hpp"

namespace zb {
namespace {

// Written only by BackendRegistration during static initialisation, read-only afterwards.
std::vector<BackendInfo>& registered() {
  static std::vector<BackendInfo> backends;  // constructed on first use
  return backends;
}

[[noreturn]] void registration_bug(const std::string& backend, const std::string& what) {
  std::fprintf(stderr, "zeppelin-bench: backend registration of \"%s\": %s\n", backend.c_str(), what.c_str());
  std::abort();
}

// The values a backend hands back must be its options, by name and in order: `list backends` and
// provenance pair them by position.
void check_values(const BackendInfo& info, const BackendOptionValues& values, const char* which) {
  if (values.size() != info.options.size())
    registration_bug(info.name, std::string(which) + " gives " + std::to_string(values.size()) +
                                    " values for " + std::to_string(info.options.size()) + " options");
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].first != info.options[i].name)
      registration_bug(info.name, std::string(which) + " names \"" + values[i].first + "\" where option " +
                                      std::to_string(i) + " is \"" + info.options[i].name + "\"");
  }
}

std::string known_names() {
  std::string out;
  for (const BackendInfo& info : registered()) out += (out.empty() ? "" : ", ") + info.name;
  return out;
}

}  // namespace

const char* to_string(BackendOptionType type) {
  switch (type) {
    case BackendOptionType::integer:
      return "integer";
    case BackendOptionType::number:
      return "number";
    case BackendOptionType::choice:
      return "choice";
    case BackendOptionType::text:
      return "text";
    case BackendOptionType::list:
      return "list";
  }
  return "?";
}

std::string option_text(double value) {
  return fmt::format("{}", value);
}

std::string option_text(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

BackendRegistration::BackendRegistration(BackendInfo info) {
  if (find_backend(info.name) != nullptr) registration_bug(info.name, "registered twice");
  if (!info.options.empty() && (info.defaults == nullptr || info.configured == nullptr))
    registration_bug(info.name, "has options but no defaults or configured values");
  // The defaults need no environment, so they are checked now; configured values read it and are
  // checked when asked (configured_backend_options).
  if (info.defaults != nullptr) check_values(info, info.defaults(), "defaults()");
  if (!info.available() && info.unavailable.empty())
    registration_bug(info.name, "has no factory and does not say why");
  // The scenario loader (core/config, below this layer) validates "backend" against these names.
  register_backend_name(info.name, info.order);
  std::vector<BackendInfo>& backends = registered();
  const auto at = std::upper_bound(backends.begin(), backends.end(), info.order,
                                   [](int order, const BackendInfo& b) { return order < b.order; });
  backends.insert(at, std::move(info));
}

const std::vector<BackendInfo>& backend_catalog() {
  return registered();
}

const BackendInfo* find_backend(std::string_view name) {
  for (const BackendInfo& info : registered()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

bool is_simulated_backend(std::string_view name) {
  const BackendInfo* info = find_backend(name);
  return info != nullptr && info->simulated;
}

std::unique_ptr<Executor> make_executor(std::string_view name) {
  const BackendInfo* info = find_backend(name);
  if (info == nullptr) {
    throw Error(ExitCode::bad_input, Location{}, "unknown backend \"" + std::string(name) + "\"",
                "known backends: " + known_names() + " (zeppelin-bench list backends)");
  }
  if (!info->available()) {
    throw Error(ExitCode::bad_input, Location{},
                "backend " + info->name + " is not available in this build (" + info->unavailable + ")",
                info->unavailable_hint);
  }
  return info->factory();
}

std::unique_ptr<Executor> make_executor(Backend backend) {
  return make_executor(to_string(backend));
}

std::vector<ConfiguredOption> configured_backend_options(std::string_view name) {
  const BackendInfo* info = find_backend(name);
  if (info == nullptr || info->options.empty()) return {};
  const BackendOptionValues values = info->configured();
  check_values(*info, values, "configured()");
  std::vector<ConfiguredOption> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const BackendOption& option = info->options[i];
    out.push_back({option.name, option.type, values[i].second, option.environment,
                   std::getenv(option.environment.c_str()) != nullptr});
  }
  return out;
}

}  // namespace zb
