#pragma once
// The printed forms of a Plan: JSON (an interface other tools read; schema_version 3, documented in
// docs/PLAN_FORMAT.md), its strict reader, and a human summary for `zeppelin-bench plan --format text`.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/plan/op_sources.hpp"
#include "core/plan/plan.hpp"

namespace zb::plan {

inline constexpr int plan_schema_version = 3;
inline constexpr int plan_oldest_schema_version = 1;  // from_json still reads this one

// How much of a plan the JSON holds (docs/PLAN_FORMAT.md, "Detail"):
//   compact  everything run --plan needs, with a rank's repeated ops folded into runs, layouts that the
//            groups imply written "groups", and attention blocks as arrays: the default;
//   full     the same plan with every op, shard and block spelled out (for editing one ring step by hand);
//   summary  the plan's shape (groups, per-rank op counts, bytes, pairs) without ops or layouts: it cannot
//            be run, and the reader refuses it.
enum class Detail { summary, compact, full };
[[nodiscard]] const char* to_string(Detail d);

// A compact plan is a few MiB where its schema-2 form was hundreds (ring CP on 128 GPUs: 2.4 MB against
// 241 MB; on 1024 GPUs 29 MB against 888 MB); 256 MiB admits every plan this tool prints and still refuses
// a wrong file before the reader's DOM, several times the text, exhausts memory.
inline constexpr std::size_t max_plan_file_bytes = 256u * 1024u * 1024u;
// Runs multiply ops: a file may expand to at most this many ops in all (about 0.4 KiB of memory each, so
// 13 GiB at the limit; ring CP on 1024 GPUs has 5.2M), so that a `run` count edited into millions is
// refused instead of exhausting memory.
inline constexpr std::size_t max_plan_ops = std::size_t{1} << 25;

[[nodiscard]] nlohmann::ordered_json to_json(const Plan& plan, Detail detail = Detail::compact);
// The same document as text, one element per line, handed to `out` in chunks of whole lines as it is
// written (a large plan is never held as text in memory): what `plan --format json` prints.
void write_json(const Plan& plan, Detail detail, const std::function<void(std::string_view)>& out);
[[nodiscard]] std::string to_json_text(const Plan& plan, Detail detail = Detail::compact);
[[nodiscard]] std::string to_text(const Plan& plan);

struct ReadLimits {
  std::size_t max_ops = max_plan_ops;  // after runs are expanded
};

// Reads a plan JSON (schema_version 1 to 3, detail compact or full) back into a Plan; from_json of what
// to_json printed prints the same bytes again, at either detail. Strict: an unknown key or kind, a missing
// required key, a wrong type, or an index that names nothing (a rank outside world_size, a sequence,
// group, micro-batch or op that does not exist) is a zb::Error with exit code 2 naming `file_for_messages`
// and the JSON path (`ranks[3].ops[7].peer`); at most the first 20 problems are listed. A summary is
// refused the same way. What the indices mean (coverage, matching, memory) is plan::verify's job.
// With `sources`, records where each op stands in the file (op_sources.hpp), for what checks the plan later.
[[nodiscard]] Plan from_json(const nlohmann::json& json, const std::string& file_for_messages,
                             ReadLimits limits = {}, OpSources* sources = nullptr);
// Reads and parses the file (JSON; comments are allowed, as in scenarios), then from_json.
[[nodiscard]] Plan read_plan_file(const std::filesystem::path& file, OpSources* sources = nullptr);

}  // namespace zb::plan
