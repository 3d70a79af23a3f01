#pragma once
// The parts of `zeppelin-bench run` shared by the one-scenario form (cli/cmd_run.cpp) and the
// several-scenario form (cli/run_many.cpp): the flags, loading a scenario with its overrides, and running
// it to its reports.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/config/scenario.hpp"
#include "core/run/run_result.hpp"
#include "reports/summary.hpp"

namespace zb::cli {

struct RunFlags {
  std::vector<std::string> scenarios;  // files, or folders of them
  std::string backend;
  std::string out;
  std::optional<int> iterations;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> formats;
  std::string plan;                  // a plan JSON to execute instead of planning
  std::string profile;               // a hardware-profile JSON replacing the scenario's
  std::vector<std::string> sets;     // --set KEY=VALUE, applied to the scenario file's JSON
  std::vector<std::string> systems;  // --system: regular expressions; only systems whose label matches one
  bool quiet = false;
  bool verbose = false;
  bool wide = false;     // --wide: the summary's every column, unwrapped, however wide the terminal
  std::string shard;     // --shard I/N or slurm-array: run one share of a sweep (cli/sweep_shard.hpp)
  bool combine = false;  // --combine: the combined table from the shards' results, running nothing
};

// Whether this process writes reports and prints (rank 0 under a multi-process launcher).
[[nodiscard]] bool is_reporter();

// A scenario as it will run: the file's content with the flags applied, and the formats to write.
struct LoadedRun {
  std::string file;
  Scenario scenario;
  std::vector<ScenarioOverride> overrides;
  std::vector<std::string> formats;
  // Writes the reports (and checks that it can): rank 0 under a launcher, or every rank of a sweep spread
  // over the ranks, each for its own scenarios (cli/run_many.cpp).
  bool reporter = true;
};

// Loads `file` and applies the flags; --out replaces output.dir, or with `out_is_parent` becomes its
// parent (DIR/<name>). Checks that the run can be done (core/run/preflight) and that the output folder
// can take the reports (where `check_folder`), so a bad scenario fails before any work. Throws zb::Error
// (exit 2 or 3).
[[nodiscard]] LoadedRun load_run(const RunFlags& flags, const std::string& file, bool out_is_parent,
                                 bool check_folder = is_reporter());

struct RunOutcome {
  reports::RunSummary summary;
  ExitCode verdict = ExitCode::ok;  // check_failed when a gate failed
  std::vector<std::filesystem::path> written;
};

// Plans and executes every system (or the --plan file), writes the reports (where `run.reporter`), and
// returns the summary. `progress` shows the terminal progress bar.
[[nodiscard]] RunOutcome execute_run(const LoadedRun& run, const RunFlags& flags, bool progress);

// `run` with several scenarios or a folder: each runs in turn, then the combined table is written and
// printed; spread over processes by a launcher or --shard, and --combine (cli/sweep_summary.hpp). Exit
// code: 2 when any scenario is bad input (before anything runs), else 3 when any failed at run time, else 1
// when any gate failed, else 0 (a rank other than 0 of a spread sweep: 0 once its results are written).
[[nodiscard]] ExitCode run_many(const RunFlags& flags, const std::vector<std::string>& files,
                                const std::string& folder_title);

}  // namespace zb::cli
