// `zeppelin-bench run SCENARIO [--backend sim|reference|cuda] [--out DIR] [--iterations N] [--seed N]
// [--format F]... [--profile FILE] [--plan FILE.json] [--quiet|--verbose]`: plans and executes every system of a scenario
// for every iteration, writes the reports, then prints the summary, and exits 1 when a gate fails. With
// --plan it executes that one plan instead (core/run/run_plan.hpp), for what-if experiments.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/exec/reference/launcher.hpp"
#include "core/plan/plan_format.hpp"
#include "core/run/preflight.hpp"
#include "core/run/run_plan.hpp"
#include "core/run/run_scenario.hpp"
#include "reports/console.hpp"
#include "reports/progress_bar.hpp"
#include "reports/report_files.hpp"
#include "reports/report_set.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

struct RunFlags {
  std::string scenario;
  std::string backend;
  std::string out;
  std::optional<int> iterations;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> formats;
  std::string plan;  // a plan JSON to execute instead of planning
  std::string profile;  // a hardware-profile JSON replacing the scenario's
  bool quiet = false;
  bool verbose = false;
};

Backend parse_backend(const std::string& name) {
  if (name == "sim") return Backend::sim;
  if (name == "reference") return Backend::reference;
  return Backend::cuda;
}

ExitCode run(const RunFlags& f) {
  Scenario scenario = load_scenario(f.scenario);
  std::vector<ScenarioOverride> overrides =
      apply_overrides(scenario, f.backend.empty() ? std::nullopt : std::optional<Backend>(parse_backend(f.backend)),
                      f.iterations, f.seed, f.out.empty() ? std::nullopt : std::optional<std::string>(f.out));
  if (const auto profile = read_profile_flag(f.profile)) {
    scenario.hardware_profile = *profile;
    overrides.push_back({"--profile", "/hardware_profile", profile->source});
  }
  std::vector<std::string> formats = scenario.output.formats;
  for (const auto& extra : f.formats) {
    if (std::find(formats.begin(), formats.end(), extra) == formats.end()) formats.push_back(extra);
  }
  if (!f.formats.empty()) overrides.push_back({"--format", "/output/formats", formats});
  // A bad lengths file or a run larger than this machine's memory fails now, not when it is killed.
  check_runnable(scenario);
  // Under a multi-process launcher every process runs the command; rank 0 alone speaks and writes.
  const bool reporter = reference::launcher_rank() == 0;
  const bool quiet = f.quiet || !reporter;
  // An output folder that cannot take the reports fails now, not after minutes of simulation.
  if (reporter) (void)reports::check_output_folder(scenario.output.dir);
  reports::ProgressBar bar(stderr, !quiet && isatty(fileno(stderr)) != 0);
  RunOptions options;
  options.on_progress = [&](const RunProgress& p) {
    if (f.verbose && !quiet) bar.note(p.system + ": iteration " + std::to_string(p.iteration));
    bar.update({p.system, p.system_index, p.systems, p.iteration, p.iterations});
  };
  const RunResult result = f.plan.empty() ? run_scenario(scenario, options)
                                          : run_plan(scenario, plan::read_plan_file(f.plan), f.plan, options);
  bar.clear();  // the summary and any error start on a line of their own
  const reports::RunSummary summary = reports::summarize_run(result);
  reports::RunContext context = reports::capture_run_context(result.backend, std::move(overrides));
  context.plan_file = f.plan;
  const ExitCode verdict = summary.gates_passed() ? ExitCode::ok : ExitCode::check_failed;
  if (!reporter) return verdict;
  // Reports first: a reader of stdout that stops early (`| head -1`) or a full terminal log must not
  // cost the reports, and the output is then written in one piece.
  const auto written = reports::write_reports(result, summary, context, scenario.output.dir, formats);
  if (quiet) return verdict;
  std::string text = reports::console_summary(summary);
  for (const auto& path : written) text += "wrote " + reports::terminal_field(path.string()) + "\n";
  write_stdout(text);
  return verdict;
}

}  // namespace

void add_run_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand("run", "Plan and execute every system of a scenario; write the reports");
  auto f = std::make_shared<RunFlags>();
  command->add_option("SCENARIO", f->scenario, "Scenario file; required")->required()->type_name("FILE");
  command->add_option("--backend", f->backend, "Executor, overriding the scenario's \"backend\" (default: the scenario's, sim)")
      ->check(CLI::IsMember({"sim", "reference", "cuda"}));
  command->add_option("--out", f->out, "Output directory, overriding \"output.dir\" (default: out/<name>)");
  command->add_option("--iterations", f->iterations, "Iterations, overriding \"workload.iterations\"");
  command->add_option("--seed", f->seed, "Seed, overriding \"seed\"");
  command->add_option("--format", f->formats, "Extra report format(s) beyond \"output.formats\": json, html, trace, gbench")
      ->check(CLI::IsMember({"json", "html", "trace", "gbench"}));
  add_profile_option(*command, f->profile);
  command->add_option("--plan", f->plan,
                      "Execute this plan JSON (from `plan --format json`, possibly edited) instead of the scenario's "
                      "systems; the scenario's gates are not evaluated")
      ->type_name("FILE")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  command->add_flag("--quiet", f->quiet, "Print nothing but errors (default: summary and progress on a terminal)");
  command->add_flag("--verbose", f->verbose, "Print each (system, iteration) as it starts");
  command->callback([f, &status] { status.code = run(*f); });
}

}  // namespace zb::cli
