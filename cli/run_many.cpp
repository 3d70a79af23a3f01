// `run` with several scenarios or a folder (the paper library, a grid): every scenario is loaded and
// checked before any runs, so a bad file costs seconds, not the library's minutes; then each runs in
// turn, a failure at run time becomes an error row instead of stopping the rest, and the combined table
// (reports/combined_table.hpp) is written and printed last.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "reports/best_baseline.hpp"
#include "reports/combined_table.hpp"
#include "reports/report_set.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

// Where the combined table goes: --out, else out/<folder> for one folder, else out/combined.
std::filesystem::path combined_folder(const RunFlags& f, const std::string& folder_title) {
  if (!f.out.empty()) return f.out;
  if (!folder_title.empty())
    return std::filesystem::path("out") / std::filesystem::path(folder_title).filename();
  return "out/combined";
}

// Every scenario loaded, or one error listing every bad file's problems (the worst exit code of them).
std::vector<LoadedRun> load_all(const RunFlags& f, const std::vector<std::string>& files) {
  std::vector<LoadedRun> runs;
  std::vector<Problem> problems;
  ExitCode code = ExitCode::ok;
  std::map<std::string, std::string> folders;  // output folder → the file that writes it
  for (const std::string& file : files) {
    try {
      LoadedRun run = load_run(f, file, true);
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
  const std::vector<LoadedRun> runs = load_all(f, files);
  const std::filesystem::path table_folder = combined_folder(f, folder_title);
  const bool speak = !f.quiet && is_reporter();
  ExitCode worst = ExitCode::ok;
  std::vector<reports::CombinedRow> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const LoadedRun& run = runs[i];
    const std::string head =
        fmt::format("[{}/{}] {}", i + 1, runs.size(), reports::terminal_field(run.scenario.name));
    try {
      const RunOutcome outcome = execute_run(run, f, speak);
      if (outcome.verdict == ExitCode::check_failed && worst == ExitCode::ok) worst = ExitCode::check_failed;
      rows.push_back(reports::combined_row(outcome.summary, run.file, run.scenario.output.dir));
      if (speak) {
        std::string line = head;
        for (const reports::SystemSummary& s : outcome.summary.systems) {
          if (const std::string versus = reports::versus_best_statement(outcome.summary, s);
              !versus.empty()) {
            line += ": " + reports::terminal_field(versus);
            break;
          }
        }
        write_stdout(line + (outcome.summary.gates_passed() ? "" : " [gate failed]") + "\n");
      }
    } catch (const Error& e) {
      // One scenario failing at run time (a stuck rank, a full disk) does not cost the others' results.
      worst = ExitCode::runtime;
      rows.push_back(reports::failed_row(run.scenario.name, run.file, e.what()));
      if (is_reporter()) print_problems(e);
    }
  }
  if (!is_reporter()) return worst;
  // The title names what was given: the folder, the files when they are few, else their count.
  std::string title = folder_title;
  if (title.empty())
    title =
        files.size() <= 3 ? fmt::format("{}", fmt::join(files, ", ")) : fmt::format("{} files", files.size());
  const reports::CombinedTable table = reports::combine(title, std::move(rows));
  const auto written = reports::write_combined_table(table, table_folder);
  if (f.quiet) return worst;
  std::string text = "\n" + reports::terminal_text(reports::combined_text(table));
  for (const auto& path : written) text += "wrote " + reports::terminal_field(path.string()) + "\n";
  write_stdout(text);
  return worst;
}

}  // namespace zb::cli
