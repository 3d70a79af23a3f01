#pragma once
// The backends a run can execute on, each registered from its own folder by one namespace-scope object:
//
//   const BackendRegistration registration{BackendInfo{
//       .name = "my-backend", .description = "...", .simulated = false, .order = 40,
//       .options = {...}, .defaults = my_defaults, .configured = my_configured, .factory =
//       make_my_executor}};
//
// The registry answers `make_executor`, `list backends`, "is this backend simulated?" and, for the report's
// provenance, the option values a run used. A backend's settings are not in the scenario: each option has
// a default and the ZB_* environment variable that overrides it (docs/ARCHITECTURE.md, "Adding a
// backend"). The registration files go in zb_backend_set (core/exec/CMakeLists.txt), which binaries get
// whole through zb_backends, so that these objects, named by no other code, are not dropped by the linker.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/exec/executor.hpp"

namespace zb {

enum class BackendOptionType {
  integer,  // a whole number: "2"
  number,   // a real number: "0.0001"
  choice,   // one of `choices`
  text,     // free text (a folder)
  list,     // comma-separated names, or a keyword the option's description explains
};
[[nodiscard]] const char* to_string(BackendOptionType type);

struct BackendOption {
  std::string name;  // "heads": how `list backends` and provenance name it
  BackendOptionType type = BackendOptionType::text;
  std::vector<std::string> choices{};  // choice: the values, in the order listed
  std::string environment;             // the ZB_* variable that overrides the default: "ZB_REF_HEADS"
  std::string description;
};

// Option values as text, spelt as their environment variables take them, one per option in its order.
using BackendOptionValues = std::vector<std::pair<std::string, std::string>>;

using BackendFactory = std::unique_ptr<Executor> (*)();

struct BackendInfo {
  std::string name{};         // "sim": the scenario's "backend" and `run --backend`
  std::string description{};  // one line
  bool simulated = false;     // its times are a model's (reports say SIMULATED), not measured on hardware
  int order = 0;              // listing order
  std::vector<BackendOption> options{};
  // Every option's default, and every option's value in this process (the defaults overridden by the
  // environment; bad input, exit 2 naming the variable, on a malformed value). Both come from the
  // backend's own options struct, so the listing and provenance cannot drift from what it runs with.
  BackendOptionValues (*defaults)() = nullptr;
  BackendOptionValues (*configured)() = nullptr;
  // Builds the executor from the environment; nullptr when this build lacks the backend, and then
  // `unavailable` says why and `unavailable_hint` what to do.
  BackendFactory factory = nullptr;
  std::string unavailable{};
  std::string unavailable_hint{};
  [[nodiscard]] bool available() const { return factory != nullptr; }
};

class BackendRegistration {
 public:
  // Registers at static initialisation; aborts on a duplicate name or on values that do not name the
  // declared options in order (a bug in the registration, caught by every test binary at start-up).
  explicit BackendRegistration(BackendInfo info);
};

// Every registered backend, by `order`.
[[nodiscard]] const std::vector<BackendInfo>& backend_catalog();

// The backend registered under `name`; nullptr when none.
[[nodiscard]] const BackendInfo* find_backend(std::string_view name);

// Whether `name` is a registered simulated backend (false for a measured or an unknown one).
[[nodiscard]] bool is_simulated_backend(std::string_view name);

// The executor for a backend by name: exit 2 naming the known backends when none is registered under it,
// exit 2 saying why when this build lacks it, exit 2 naming the variable on a malformed option value.
[[nodiscard]] std::unique_ptr<Executor> make_executor(std::string_view name);

struct ConfiguredOption {
  std::string name;
  BackendOptionType type = BackendOptionType::text;
  std::string value;              // as its environment variable spells it
  std::string environment;        // the variable
  bool from_environment = false;  // the variable was set (else the default)
};

// Helpers for a backend's values: a number in its shortest exact form (fmt's "{}": "0.0001", "1e+09", "10");
// names joined by commas, as ZB_NICS takes them.
[[nodiscard]] std::string option_text(double value);
[[nodiscard]] std::string option_text(const std::vector<std::string>& names);

// The option values a run on `name` in this process uses, with where each came from; empty for an
// unknown backend or one without options.
[[nodiscard]] std::vector<ConfiguredOption> configured_backend_options(std::string_view name);

}  // namespace zb
