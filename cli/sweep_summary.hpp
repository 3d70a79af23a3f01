#pragma once
// How a spread sweep's results meet without MPI (the CLI links none for this, and a Slurm job array has
// no shared world at all): every shard writes, beside the combined table in the sweep's --out folder,
// sweep-shard-I-of-N.json with its rows (cli/sweep_rows.hpp) and what sweep it belongs to; rank 0 of a
// launcher waits for the others' files, `--combine` reads them afterwards, and either builds the table
// from them. A rank that runs rewrites sweep-shard-I-of-N.alive every second, so rank 0 tells a slow rank
// from a dead one without guessing how long a scenario may take. docs/SCENARIOS.md ("Sweeps over several
// processes").
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_command.hpp"
#include "cli/sweep_shard.hpp"
#include "reports/combined_table.hpp"

namespace zb::cli {

// What makes a sweep: its scenario files in order and the flags that change results. Shards' files of
// another sweep (an earlier one left in the folder) are told apart by it.
[[nodiscard]] nlohmann::json sweep_identity(const RunFlags& flags, const std::vector<std::string>& files);

// The row of the scenario at `position` of the sweep's list.
struct ShardRow {
  std::size_t position = 0;
  reports::CombinedRow row;
};

// Writes the shard's summary atomically, then removes its heartbeat. Throws zb::Error (exit 3).
void write_shard_summary(const std::filesystem::path& folder, const nlohmann::json& identity,
                         const SweepShard& shard, const std::string& launch,
                         const std::vector<ShardRow>& rows);

// Each position's scenario, for the row of a shard that sent none.
struct SweepEntry {
  std::string scenario;
  std::string file;
};

// How rank 0 waits for the others: a missing shard whose heartbeat has not changed for `stall_seconds`
// (ZB_SWEEP_STALL_S, default 60) is given up and its scenarios become error rows naming it.
struct ShardWait {
  std::string launch;  // launch_identity: a summary of another job is not taken
  int stall_seconds = 60;
  bool speak = false;  // one line on standard error when it starts waiting
};

// Every shard's rows, in the sweep's order; where a shard's summary is missing, unreadable or of another
// job, its scenarios' rows are errors that name the shard and what to do. With `wait`, shards not written
// yet are waited for; without (`--combine`), a summary of another sweep is bad input (exit 2).
[[nodiscard]] std::vector<reports::CombinedRow> collect_shards(const std::filesystem::path& folder, int count,
                                                               const nlohmann::json& identity,
                                                               const std::vector<SweepEntry>& entries,
                                                               const ShardWait* wait);

// The sweep's exit code from its rows: 3 when a scenario failed, else 1 when a gate failed, else 0.
[[nodiscard]] ExitCode table_exit_code(const std::vector<reports::CombinedRow>& rows);

}  // namespace zb::cli
