// `zeppelin-bench report REPORT.json [--out DIR] [--format F]... [-q] [--wide]`: rebuilds a run's reports
// (report.html, the Perfetto traces, gbench.json, and report.json itself) from its report.json, e.g. a CI
// artefact kept without its HTML, or an old run to be read with this version's report pages.
//
// report.json holds every figure but not the traces and plans the HTML charts draw, so `report` replays
// the run: the scenario that ran (run.effective_scenario, every override written in, the hardware profile
// inline as run.hardware_profile records it) under the same seed. A simulated run is deterministic (same
// inputs and seed, the same results byte for byte), and `report` proves it did reproduce this one: the
// replay's figures must equal the file's (volatile fields aside, docs/REPORT_FORMAT.md) before anything is
// written; otherwise the report came from another model version and exit 2 names the first figure that
// differs. A measured run (reference, cuda) cannot be replayed and is refused with exit 2.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/backend_teardown.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/report_replay.hpp"
#include "cli/run_command.hpp"
#include "cli/scratch_folder.hpp"
#include "core/config/jsonc.hpp"
#include "reports/console.hpp"
#include "reports/json_report.hpp"
#include "reports/report_set.hpp"
#include "reports/terminal_size.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

struct ReportFlags {
  std::string report;
  std::string out;  // default: the folder of REPORT.json, whose set is replaced by the rebuilt one
  std::vector<std::string> formats;
  bool quiet = false;
  bool wide = false;
};

ExitCode rebuild(const ReportFlags& flags) {
  const nlohmann::json original = read_jsonc_file(flags.report, max_report_replay_bytes);
  const ReplayInput replay = replay_input(original, flags.report);
  const ScratchFolder scratch("report", "report");
  const std::filesystem::path scenario_file = scratch.path() / "scenario.json";
  {
    std::ofstream out(scenario_file, std::ios::binary);
    out << replay.scenario.dump(2) << "\n";
    if (!out)
      throw Error(ExitCode::runtime, Location{scenario_file.string(), "", 0, 0, -1},
                  "cannot write the replay's scenario", "set TMPDIR to a folder with free space");
  }
  RunFlags run_flags;
  run_flags.out = (scratch.path() / "reports").string();
  run_flags.formats = {"json", "html", "trace"};
  for (const std::string& format : flags.formats) run_flags.formats.push_back(format);
  run_flags.plan = replay.plan_file;
  // The rebuilt set replaces the output folder's as a whole (reports/report_set.hpp).
  const std::filesystem::path target = flags.out.empty()
                                           ? std::filesystem::absolute(flags.report).parent_path()
                                           : std::filesystem::path(flags.out);
  (void)reports::check_output_folder(target);  // before the replay's minutes, not after
  LoadedRun loaded = load_run(run_flags, scenario_file.string(), false);
  loaded.file = flags.report;  // errors of the replay name the report it came from
  for (ScenarioOverride& o : loaded.overrides)
    if (o.flag == "--out") o.value = target.string();  // where the set goes, not the private folder
  const RunOutcome outcome = execute_run(loaded, run_flags, !flags.quiet);

  const nlohmann::json replayed =
      read_jsonc_file(scratch.path() / "reports" / "report.json", max_report_replay_bytes);
  if (const std::string difference = first_figure_difference(original, replayed); !difference.empty()) {
    throw Error(
        ExitCode::bad_input, Location{flags.report, "", 0, 0, -1},
        "the replay does not reproduce this report: " + difference + " (the report was written by " +
            build_of(original) + "; this is " + build_of(replayed) + ")",
        "rebuild it with the build that wrote it, or run its scenario anew with `zeppelin-bench run`");
  }

  const std::vector<std::filesystem::path> written =
      reports::publish_report_set(target, [&](const std::filesystem::path& staging) {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(scratch.path() / "reports")) {
          std::filesystem::copy_file(entry.path(), staging / entry.path().filename());
          names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
      });
  if (flags.quiet) return outcome.verdict;
  std::string text = reports::console_summary(
      outcome.summary, flags.wide ? reports::ConsoleLayout::full()
                                  : reports::ConsoleLayout{reports::terminal_columns(stdout, 100), false});
  text += "the replay reproduced every figure of " + reports::terminal_field(flags.report) + "\n";
  for (const auto& path : written) text += "wrote " + reports::terminal_field(path.string()) + "\n";
  write_stdout(text);
  return outcome.verdict;
}

}  // namespace

void add_report_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand(
      "report", "Rebuild a simulated run's reports (HTML, traces, gbench) from its report.json, by replay");
  auto f = std::make_shared<ReportFlags>();
  command->add_option("REPORT", f->report, "A report.json written by `run` (schema 2)")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--out", f->out,
                   "Output directory (default: the report's own folder, whose report set is replaced)")
      ->type_name("DIR");
  command
      ->add_option("--format", f->formats,
                   "Formats besides json, html and trace: gbench (json, html, trace are always rebuilt)")
      ->check(CLI::IsMember({"json", "html", "trace", "gbench"}));
  command->add_flag("-q,--quiet", f->quiet, "Print nothing but errors");
  command->add_flag("--wide", f->wide, "Print the summary's every column, however wide");
  command->callback([f, &status] {
    BackendTeardown teardown;
    status.code = rebuild(*f);
    teardown.finish();
  });
}

}  // namespace zb::cli
