#pragma once
// The two printed forms of a Plan: JSON (an interface other tools read; schema_version 1, documented in
// docs/PLAN_FORMAT.md) and a human summary for `zeppelin-bench plan --format text`.
#include <string>

#include <nlohmann/json.hpp>

#include "core/plan/plan.hpp"

namespace zb::plan {

inline constexpr int plan_schema_version = 1;

[[nodiscard]] nlohmann::ordered_json to_json(const Plan& plan);
[[nodiscard]] std::string to_text(const Plan& plan);

}  // namespace zb::plan
