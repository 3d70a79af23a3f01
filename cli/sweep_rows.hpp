#pragma once
// A combined-table row as JSON and back, losslessly, so that the table built from shards' files is the
// one process's table byte for byte: every field of reports::CombinedRow is kept (combined.json leaves
// some out, e.g. the subject's strategy and each iteration's long-document shares, and derives others),
// numbers print in nlohmann's shortest form that reads back to the same double, and the non-finite ones,
// which JSON has no number for, as the strings "inf", "-inf" and "nan".
#include <nlohmann/json.hpp>

#include "reports/combined_table.hpp"

namespace zb::cli {

[[nodiscard]] nlohmann::json row_to_json(const reports::CombinedRow& row);

// The row `row_to_json` wrote. Throws nlohmann::json::exception where a key is missing or of another
// type (the caller names the file).
[[nodiscard]] reports::CombinedRow row_from_json(const nlohmann::json& json);

}  // namespace zb::cli
