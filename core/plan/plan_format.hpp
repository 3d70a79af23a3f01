#pragma once
// The printed forms of a Plan: JSON (an interface other tools read; schema_version 2, documented in
// docs/PLAN_FORMAT.md), its strict reader, and a human summary for `zeppelin-bench plan --format text`.
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/plan/plan.hpp"

namespace zb::plan {

inline constexpr int plan_schema_version = 2;
inline constexpr int plan_oldest_schema_version = 1;  // from_json still reads this one
// A machine-written plan of a large cluster runs to tens of MiB (one op list per rank); 256 MiB still
// refuses a wrong file before it exhausts memory.
inline constexpr std::size_t max_plan_file_bytes = 256u * 1024u * 1024u;

[[nodiscard]] nlohmann::ordered_json to_json(const Plan& plan);
[[nodiscard]] std::string to_text(const Plan& plan);

// Reads a plan JSON (schema_version 1 or 2) back into a Plan; from_json(to_json(p)) prints as p does.
// Strict: an unknown key or kind, a missing required key, a wrong type, or an index that names nothing
// (a rank outside world_size, a sequence, group, micro-batch or op that does not exist) is a zb::Error
// with exit code 2 naming `file_for_messages` and the JSON path (`ranks[3].ops[7].peer`); at most the
// first 20 problems are listed. What the indices mean (coverage, matching, memory) is plan::verify's job.
[[nodiscard]] Plan from_json(const nlohmann::json& json, const std::string& file_for_messages);
// Reads and parses the file (JSON; comments are allowed, as in scenarios), then from_json.
[[nodiscard]] Plan read_plan_file(const std::filesystem::path& file);

}  // namespace zb::plan
