#pragma once
// How every report records the hardware profile a run used (docs/REPORT_FORMAT.md, run.hardware_profile):
// where it came from ("defaults", "inline" or the file's path) and every value, with the ones that differ
// from the defaults called out, since those are what make two runs' figures incomparable.
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/hardware_profile.hpp"

namespace zb::reports {

// One line: "hardware profile: defaults" or "hardware profile: FILE (gemm_efficiency 0.5, default 0.75)".
[[nodiscard]] std::string profile_statement(const HardwareProfileSpec& spec);

// {"source": ..., "values": {every key: value}, "differs_from_defaults": [keys, in the table's order]}.
[[nodiscard]] nlohmann::ordered_json profile_to_json(const HardwareProfileSpec& spec);

// A table of every value beside its default, the differing rows marked (class "changed"), text HTML-escaped.
[[nodiscard]] std::string profile_table_html(const HardwareProfileSpec& spec);

}  // namespace zb::reports
