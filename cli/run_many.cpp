// `run` with several scenarios or a folder (the paper library, a grid): every scenario is loaded and
// checked before any runs, so a bad file costs seconds, not the library's minutes; then each runs in
// turn, a failure at run time becomes an error row instead of stopping the rest, and the combined table
// (reports/combined_table.hpp) is written and printed last.
//
// The sweep is spread over processes (cli/sweep_shard.hpp, cli/sweep_summary.hpp) in two ways:
//  - under a launcher of several processes (mpirun, srun, PMIx, PMI) when every scenario is simulated:
//    rank R runs its share, rank 0 waits for the others' results and writes the table. A measured
//    scenario (reference, cuda) runs on the launcher's processes as its own world, so a sweep with one
//    runs each scenario on all of them in turn, as a single `mpirun ... run --backend reference` does;
//  - with `--shard I/N` (or `--shard slurm-array`): this command runs shard I, whatever the launcher, and
//    `--combine` (the same command otherwise) writes the table once every shard has run.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_shard.hpp"
#include "cli/sweep_summary.hpp"
#include "core/common/env_reader.hpp"
#include "core/exec/backend_registry.hpp"
#include "reports/best_baseline.hpp"
#include "reports/combined_table.hpp"
#include "reports/report_set.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

const EnvLookup kEnvironment = [](const char* name) { return std::getenv(name); };

// Where the combined table goes: --out, else out/<folder> for one folder, else out/combined.
std::filesystem::path combined_folder(const RunFlags& f, const std::string& folder_title) {
  if (!f.out.empty()) return f.out;
  if (!folder_title.empty())
    return std::filesystem::path("out") / std::filesystem::path(folder_title).filename();
  return "out/combined";
}

// The title names what was given: the folder, the files when they are few, else their count.
std::string table_title(const std::vector<std::string>& files, const std::string& folder_title) {
  if (!folder_title.empty()) return folder_title;
  return files.size() <= 3 ? fmt::format("{}", fmt::join(files, ", "))
                           : fmt::format("{} files", files.size());
}

// Every scenario loaded, or one error listing every bad file's problems (the worst exit code of them).
// The output folders are checked later, once it is known which processes write reports.
std::vector<LoadedRun> load_all(const RunFlags& f, const std::vector<std::string>& files) {
  std::vector<LoadedRun> runs;
  std::vector<Problem> problems;
  ExitCode code = ExitCode::ok;
  std::map<std::string, std::string> folders;  // output folder → the file that writes it
  for (const std::string& file : files) {
    try {
      LoadedRun run = load_run(f, file, true, false);
      const std::string folder = std::filesystem::path(run.scenario.output.dir).lexically_normal().string();
      if (const auto [it, fresh] = folders.emplace(folder, file); !fresh) {
        throw_input_error({file, "output.dir", 0, 0, -1},
                          "writes its reports to " + folder + ", as " + it->second + " does",
                          "give each scenario its own \"name\" (with --out) or \"output.dir\"");
      }
      runs.push_back(std::move(run));
    } catch (const Error& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
      if (static_cast<int>(e.code()) > static_cast<int>(code)) code = e.code();
    }
  }
  if (!problems.empty()) throw Error(code, std::move(problems));
  return runs;
}

// Every output folder can take its report set (reports::check_output_folder), or one error naming each
// that cannot: checked by every process that writes reports, before any runs.
void check_folders(const std::vector<LoadedRun>& runs) {
  std::vector<Problem> problems;
  for (const LoadedRun& run : runs) {
    try {
      (void)reports::check_output_folder(run.scenario.output.dir);
    } catch (const Error& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
  }
  if (!problems.empty()) throw Error(ExitCode::runtime, std::move(problems));
}

// This process's share of the sweep, or none when it runs every scenario (see the file's head).
std::optional<SweepShard> choose_shard(const RunFlags& f, const std::vector<LoadedRun>& runs) {
  if (!f.shard.empty()) return parse_shard_flag(f.shard, kEnvironment);
  const Launch launch = process_launch();
  if (launch.world_size < 2) return std::nullopt;
  const auto simulated = std::count_if(
      runs.begin(), runs.end(), [](const LoadedRun& r) { return is_simulated_backend(r.scenario.backend); });
  if (simulated == static_cast<std::ptrdiff_t>(runs.size())) return rank_shard(launch);
  if (simulated > 0 && is_reporter() && !f.quiet) {
    print_progress(fmt::format(
        "note: {} of the {} scenarios are measured, so each scenario runs on all {} processes in turn; "
        "a sweep is spread over the ranks only when every scenario is simulated (--backend sim)",
        runs.size() - static_cast<std::size_t>(simulated), runs.size(), launch.world_size));
  }
  return std::nullopt;
}

// Runs the scenarios of `shard` (every one without), each to its report set; a failure becomes its row.
std::vector<ShardRow> run_share(const RunFlags& f, std::vector<LoadedRun>& runs,
                                const std::optional<SweepShard>& shard, bool reporter) {
  const bool speak = !f.quiet && reporter;
  std::vector<ShardRow> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (shard && !in_shard(i, *shard)) continue;
    LoadedRun& run = runs[i];
    run.reporter = reporter;
    std::string line =
        fmt::format("[{}/{}] {}", i + 1, runs.size(), reports::terminal_field(run.scenario.name));
    if (shard) line += " (" + shard->label + ")";
    try {
      const RunOutcome outcome = execute_run(run, f, speak);
      rows.push_back({i, reports::combined_row(outcome.summary, run.file, run.scenario.output.dir)});
      for (const reports::SystemSummary& s : outcome.summary.systems) {
        if (const std::string versus = reports::versus_best_statement(outcome.summary, s); !versus.empty()) {
          line += ": " + reports::terminal_field(versus);
          break;
        }
      }
      if (speak) write_stdout(line + (outcome.summary.gates_passed() ? "" : " [gate failed]") + "\n");
    } catch (const Error& e) {
      // One scenario failing at run time (a stuck rank, a full disk) does not cost the others' results.
      rows.push_back({i, reports::failed_row(run.scenario.name, run.file, e.what())});
      if (reporter) print_problems(e);
    }
  }
  return rows;
}

ExitCode publish_table(const RunFlags& f, const std::string& title, std::vector<reports::CombinedRow> rows,
                       const std::filesystem::path& folder) {
  const ExitCode code = table_exit_code(rows);
  const reports::CombinedTable table = reports::combine(title, std::move(rows));
  const auto written = reports::write_combined_table(table, folder);
  if (f.quiet) return code;
  std::string text = "\n" + reports::terminal_text(reports::combined_text(table));
  for (const auto& path : written) text += "wrote " + reports::terminal_field(path.string()) + "\n";
  write_stdout(text);
  return code;
}

std::vector<SweepEntry> entries_of(const std::vector<LoadedRun>& runs) {
  std::vector<SweepEntry> entries;
  for (const LoadedRun& run : runs) entries.push_back({run.scenario.name, run.file});
  return entries;
}

}  // namespace

ExitCode run_many(const RunFlags& f, const std::vector<std::string>& files, const std::string& folder_title) {
  if (!f.plan.empty()) {
    throw_input_error(
        {"--plan", "", 0, 0, -1},
        fmt::format("executes one plan against one scenario; {} scenarios were given", files.size()),
        "give one scenario file with --plan");
  }
  if (f.out == "-") {
    throw_input_error(
        {"--out", "", 0, 0, -1},
        fmt::format("- (report.json on standard output) takes one scenario; {} were given", files.size()),
        "give one scenario file, or a folder with --out DIR");
  }
  std::vector<LoadedRun> runs = load_all(f, files);
  const std::filesystem::path table_folder = combined_folder(f, folder_title);
  const std::string title = table_title(files, folder_title);
  const nlohmann::json identity = sweep_identity(f, files);
  if (f.combine) {
    if (!is_reporter()) return ExitCode::ok;
    const int count = shard_count_in(table_folder);
    return publish_table(f, title, collect_shards(table_folder, count, identity, entries_of(runs), nullptr),
                         table_folder);
  }
  const std::optional<SweepShard> shard = choose_shard(f, runs);
  // Every rank of a spread sweep writes its own scenarios' reports; otherwise rank 0 writes them all.
  const bool reporter = (shard && shard->ranks) || is_reporter();
  ShardWait wait{launch_identity(kEnvironment), 60, !f.quiet};
  if (shard && shard->ranks && shard->index == 0) {  // read where it is used, before any work
    read_env_integer("ZB_SWEEP_STALL_S", wait.stall_seconds);
    if (wait.stall_seconds < 1)
      throw_input_error(env_location("ZB_SWEEP_STALL_S"), "the stall limit is at least 1 second");
  }
  if (reporter) check_folders(runs);
  if (shard && reporter) clear_shard_files(table_folder, *shard);
  std::vector<ShardRow> own;
  {
    // Rank 0 waits for the other ranks while their heartbeat changes (cli/sweep_summary.hpp).
    std::optional<Heartbeat> heartbeat;
    if (shard && shard->ranks && shard->index != 0) heartbeat.emplace(table_folder, *shard);
    own = run_share(f, runs, shard, reporter);
  }
  std::vector<reports::CombinedRow> own_rows;
  for (const ShardRow& r : own) own_rows.push_back(r.row);
  if (!shard) {
    if (!is_reporter()) return table_exit_code(own_rows);
    return publish_table(f, title, std::move(own_rows), table_folder);
  }
  // Under --shard, the launcher's other processes were the scenarios' world; rank 0 reports.
  if (!reporter) return table_exit_code(own_rows);
  write_shard_summary(table_folder, identity, *shard, launch_identity(kEnvironment), own);
  if (shard->ranks && shard->index != 0) {
    // Its failures reach the exit code through rank 0's table: under mpirun, a process that exits
    // non-zero ends the whole job, rank 0 included, before the table is written.
    return ExitCode::ok;
  }
  if (!shard->ranks) {
    if (!f.quiet) {
      write_stdout(fmt::format(
          "wrote {} ({}: {} scenarios); once every shard has run, the same command with "
          "--combine instead of --shard writes the combined table\n",
          reports::terminal_field(shard_summary_path(table_folder, shard->index, shard->count).string()),
          shard->label, own.size()));
    }
    return table_exit_code(own_rows);
  }
  return publish_table(
      f, title, collect_shards(table_folder, shard->count, identity, entries_of(runs), &wait), table_folder);
}

}  // namespace zb::cli
