// `zeppelin-bench run SCENARIO... [--backend NAME] [--out DIR] [--iterations N] [--seed N]
// [--format F]... [--profile FILE] [--plan FILE.json] [--system PATTERN]... [-q|--quiet|--verbose]`: plans
// and executes every system of a scenario for every iteration, writes the reports, then prints the summary,
// and exits 1 when a gate fails. With
// --plan it executes that one plan instead (core/run/run_plan.hpp), for what-if experiments. Several
// scenarios, or a folder of them, run in turn and add a combined table (cli/run_many.cpp); [--shard I/N]
// and [--combine] spread such a sweep over separate commands, as mpirun and srun spread it over ranks.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cli/backend_teardown.hpp"
#include "cli/commands.hpp"
#include "cli/moe_gate.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "cli/run_command.hpp"
#include "cli/scenario_paths.hpp"
#include "cli/scenario_set.hpp"
#include "cli/scratch_folder.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/exec/backend_registry.hpp"
#include "core/exec/executor.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/plan/plan_format.hpp"
#include "core/run/measured_nothing.hpp"
#include "core/run/preflight.hpp"
#include "core/run/run_plan.hpp"
#include "core/run/run_scenario.hpp"
#include "reports/console.hpp"
#include "reports/progress_bar.hpp"
#include "reports/report_files.hpp"
#include "reports/report_set.hpp"
#include "reports/run_context.hpp"
#include "reports/terminal_size.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

// The summary fits the terminal it is printed on (100 columns where there is none: a CI log, a pipe);
// --wide prints every column.
reports::ConsoleLayout console_layout(const RunFlags& f, std::FILE* out) {
  if (f.wide) return reports::ConsoleLayout::full();
  return {reports::terminal_columns(out, 100), false};
}

// --backend's choices: every registered backend (core/exec/backend_registry.hpp), in listing order.
std::vector<std::string> registered_backends() {
  std::vector<std::string> names;
  for (const BackendInfo& info : backend_catalog()) names.push_back(info.name);
  return names;
}

// `--out -`: report.json alone on standard output, for a pipe (`| jq .systems`), as `-` means for most
// tools; the summary goes to standard error. The report is written as ever, into a private temporary
// folder (the checks, the atomic set), then copied out and the folder removed.
ExitCode run_to_stdout(const RunFlags& flags, const std::string& file) {
  const ScratchFolder scratch("stdout", "--out");
  const std::filesystem::path& folder = scratch.path();
  RunFlags f = flags;
  f.out = (folder / "report").string();
  LoadedRun loaded = load_run(f, file, false);
  loaded.formats = {"json"};
  for (ScenarioOverride& o : loaded.overrides)
    if (o.flag == "--out") o.value = "-";  // what the user asked for, not the private folder
  const bool quiet = f.quiet || !is_reporter();
  const RunOutcome outcome = execute_run(loaded, f, !quiet);
  if (is_reporter()) {
    std::ifstream in(folder / "report" / "report.json", std::ios::binary);
    const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (report.empty())
      throw Error(ExitCode::runtime, Location{"--out", "", 0, 0, -1}, "the report could not be read back",
                  "run with --out DIR");
    write_stdout(report);
  }
  if (!quiet) {
    const std::string text = reports::console_summary(outcome.summary, console_layout(f, stderr));
    std::fputs(text.c_str(), stderr);
  }
  return outcome.verdict;
}

ExitCode run_one(const RunFlags& f, const std::string& file) {
  if (f.out == "-") return run_to_stdout(f, file);
  const LoadedRun loaded = load_run(f, file, false);
  const bool quiet = f.quiet || !is_reporter();
  const RunOutcome outcome = execute_run(loaded, f, !quiet);
  if (quiet) return outcome.verdict;
  std::string text = reports::console_summary(outcome.summary, console_layout(f, stdout));
  for (const auto& path : outcome.written) text += "wrote " + reports::terminal_field(path.string()) + "\n";
  write_stdout(text);
  return outcome.verdict;
}

}  // namespace

bool is_reporter() {
  return process_launch().rank == 0;
}

// --system PATTERN...: keeps the systems whose label a pattern finds (ECMAScript regular expressions,
// searched as Google Benchmark's --benchmark_filter is), in scenario order, and the gates that compare
// only systems still there ("best" stays: it is chosen among the baselines that remain). Exit 2 for a
// pattern that is no regular expression, or when no system is left.
void keep_systems(Scenario& scenario, const std::vector<std::string>& patterns, const std::string& file,
                  std::vector<ScenarioOverride>& overrides) {
  std::vector<std::regex> filters;
  for (const std::string& pattern : patterns) {
    try {
      filters.emplace_back(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(ExitCode::bad_input, Location{file, "", 0, 0, -1},
                  "--system " + pattern + ": not a regular expression (" + e.what() + ")",
                  "write a label, or an ECMAScript pattern such as 'ring-cp|zeppelin'");
    }
  }
  // The file's own entries of what is kept go into the overrides, so that the report's effective scenario
  // (the file with every override written in) is a valid scenario that runs exactly this: a label such as
  // "ring-cp[degree=8]" is no system entry, and the gates on a left-out system must go with it.
  const nlohmann::json& source = scenario.source_json;
  const bool source_systems = source.contains("systems") && source["systems"].is_array() &&
                              source["systems"].size() == scenario.systems.size();
  std::vector<std::string> all;
  std::vector<SystemSpec> systems;
  nlohmann::json kept_entries = nlohmann::json::array();
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < scenario.systems.size(); ++i) {
    SystemSpec& system = scenario.systems[i];
    all.push_back(system.label);
    const bool match = std::any_of(filters.begin(), filters.end(),
                                   [&](const std::regex& r) { return std::regex_search(system.label, r); });
    if (!match) continue;
    kept.push_back(system.label);
    kept_entries.push_back(source_systems ? source["systems"][i] : nlohmann::json(system.label));
    systems.push_back(std::move(system));
  }
  if (systems.empty()) {
    std::string labels;
    for (const std::string& label : all) labels += (labels.empty() ? "\"" : ", \"") + label + "\"";
    throw Error(ExitCode::bad_input, Location{file, "/systems", 0, 0, -1},
                "--system matches none of the scenario's systems: " + labels,
                "give a label or a pattern that finds one (several --system flags add up)");
  }
  scenario.systems = std::move(systems);
  const auto present = [&kept](const std::string& label) {
    return label.empty() || label == "best" || std::find(kept.begin(), kept.end(), label) != kept.end();
  };
  const bool source_gates = source.contains("gates") && source["gates"].is_array() &&
                            source["gates"].size() == scenario.gates.size();
  nlohmann::json kept_gates = nlohmann::json::array();
  std::vector<GateSpec> gates;
  for (std::size_t i = 0; i < scenario.gates.size(); ++i) {
    if (!present(scenario.gates[i].system) || !present(scenario.gates[i].baseline)) continue;
    if (source_gates) kept_gates.push_back(source["gates"][i]);
    gates.push_back(std::move(scenario.gates[i]));
  }
  const bool gates_dropped = gates.size() != scenario.gates.size();
  scenario.gates = std::move(gates);
  overrides.push_back({"--system", "/systems", kept_entries});
  if (gates_dropped && source_gates) overrides.push_back({"--system", "/gates", kept_gates});
}

LoadedRun load_run(const RunFlags& f, const std::string& file, bool out_is_parent, bool check_folder) {
  LoadedRun run;
  run.file = file;
  run.reporter = is_reporter();
  std::vector<ScenarioOverride> sets;
  run.scenario = load_scenario_with_sets(file, f.sets, sets);
  refuse_hydraulis_replicas_with_experts(run.scenario, file);
  Scenario& scenario = run.scenario;
  std::optional<std::string> out_dir;  // names are letters, digits, '.', '_' and '-': a safe folder name
  if (!f.out.empty())
    out_dir = out_is_parent ? (std::filesystem::path(f.out) / scenario.name).string() : f.out;
  run.overrides =
      apply_overrides(scenario, f.backend.empty() ? std::nullopt : std::optional<std::string>(f.backend),
                      f.iterations, f.seed, out_dir);
  run.overrides.insert(run.overrides.begin(), sets.begin(), sets.end());
  if (!f.systems.empty()) keep_systems(scenario, f.systems, file, run.overrides);
  if (const auto profile = read_profile_flag(f.profile)) {
    scenario.hardware_profile = *profile;
    run.overrides.push_back({"--profile", "/hardware_profile", profile->source});
  }
  run.formats = scenario.output.formats;
  for (const auto& extra : f.formats) {
    if (std::find(run.formats.begin(), run.formats.end(), extra) == run.formats.end())
      run.formats.push_back(extra);
  }
  if (!f.formats.empty()) run.overrides.push_back({"--format", "/output/formats", run.formats});
  // A bad lengths file or a run larger than this machine's memory fails now, not when it is killed.
  check_runnable(scenario);
  // An output folder that cannot take the reports fails now, not after minutes of simulation.
  if (check_folder) (void)reports::check_output_folder(scenario.output.dir);
  return run;
}

RunOutcome execute_run(const LoadedRun& run, const RunFlags& f, bool progress) {
  const Scenario& scenario = run.scenario;
  reports::ProgressBar bar(stderr, progress && reports::ProgressBar::can_redraw(stderr));
  RunOptions options;
  options.simulate_measured = run.reporter;
  options.on_progress = [&](const RunProgress& p) {
    if (f.verbose && progress) bar.note(p.system + ": iteration " + std::to_string(p.iteration));
    bar.update({p.system, p.system_index, p.systems, p.iteration, p.iterations});
  };
  // A plan file's ops are named in messages where the file wrote them (a compact file's runs).
  const auto run_the_plan = [&] {
    plan::OpSources sources;
    plan::Plan plan = plan::read_plan_file(f.plan, &sources);
    return run_plan(scenario, std::move(plan), f.plan, options, sources);
  };
  const RunResult result = f.plan.empty() ? run_scenario(scenario, options) : run_the_plan();
  bar.finish();  // the full bar stays on its line; the summary and any error start on a line of their own
  RunOutcome outcome;
  outcome.summary = reports::summarize_run(result);
  reports::RunContext context = reports::capture_run_context(result.backend, run.overrides);
  context.plan_file = f.plan;
  context.runtime = result.runtime;  // what the executor asked at run time (cuda: versions, the GPU)
  outcome.verdict = outcome.summary.gates_passed() ? ExitCode::ok : ExitCode::check_failed;
  const std::string nothing = nothing_measured(result);
  if (run.reporter) {
    // Reports first: a reader of stdout that stops early (`| head -1`) or a full terminal log must not
    // cost the reports, and the output is then written in one piece.
    outcome.written =
        reports::write_reports(result, outcome.summary, context, scenario.output.dir, run.formats);
  }
  // A measured backend that ran nothing ends as a failure (exit 3) instead of printing a summary whose
  // header says the figures were measured: the report, kept for its out-of-memory details, holds none.
  if (!nothing.empty()) {
    throw Error(ExitCode::runtime, Location{run.file, "", 0, 0, -1},
                nothing + "; the report in " + scenario.output.dir.string() + " holds no measured figure",
                "give the scenario a model and workload that fit its GPUs (`zeppelin-bench run " + run.file +
                    " --backend sim` shows which systems are out of memory), or more GPUs");
  }
  return outcome;
}

void add_run_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command =
      app.add_subcommand("run", "Plan and execute every system of a scenario; write the reports");
  auto f = std::make_shared<RunFlags>();
  command
      ->add_option("SCENARIO", f->scenarios,
                   "Scenario file(s), or folders of them (every *.json below, in path order); several add a "
                   "combined table with a row per scenario; required")
      ->required()
      ->type_name("FILE|DIR");
  command
      ->add_option("--backend", f->backend,
                   "Executor, overriding the scenario's \"backend\" (default: the scenario's, sim)")
      ->check(CLI::IsMember(registered_backends()));
  command
      ->add_option(
          "--out", f->out,
          "Output directory, overriding \"output.dir\" (default: out/<name>); with several scenarios, "
          "each writes to DIR/<name> and the combined table to DIR; - writes report.json alone to standard "
          "output "
          "(the summary to standard error)")
      ->type_name("DIR");
  command->add_option("--iterations", f->iterations, "Iterations, overriding \"workload.iterations\"");
  // A negative seed would wrap to 2^64 - 1 silently; the scenario file refuses it too.
  command->add_option("--seed", f->seed, "Seed, overriding \"seed\" (0 or more)")
      ->check([](const std::string& text) {
        return !text.empty() && text.front() == '-'
                   ? "a seed is an integer of 0 or more, not " + text + " (as the scenario's \"seed\")"
                   : std::string();
      });
  command
      ->add_option("--format", f->formats,
                   "Extra report format(s) beyond \"output.formats\": json, html, trace, gbench")
      ->check(CLI::IsMember({"json", "html", "trace", "gbench"}));
  add_profile_option(*command, f->profile);
  command
      ->add_option(
          "--plan", f->plan,
          "Execute this plan JSON (from `plan --format json`, possibly edited) instead of the scenario's "
          "systems; the scenario's gates are not evaluated")
      ->type_name("FILE")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  command
      ->add_option("--set", f->sets,
                   "KEY=VALUE: set any scenario key before it is checked (repeatable; dotted KEY as the file "
                   "nests it, e.g. workload.iterations=5; VALUE is JSON, else a string)")
      ->type_name("KEY=VALUE");
  command
      ->add_option("--system", f->systems,
                   "Run only the systems whose label this regular expression finds (repeatable, as "
                   "--benchmark_filter); gates comparing a left-out system are dropped")
      ->type_name("PATTERN");
  command->add_flag("-q,--quiet", f->quiet,
                    "Print nothing but errors (default: summary and progress on a terminal)");
  command->add_flag("--verbose", f->verbose, "Print each (system, iteration) as it starts");
  command->add_flag(
      "--wide", f->wide,
      "Print the summary's every column (speed-up against each baseline, TFLOP/s/GPU, mean and "
      "max utilisation) without wrapping, however wide; by default it fits the terminal, or 100 "
      "columns off a terminal");
  CLI::Option* shard =
      command
          ->add_option("--shard", f->shard,
                       "I/N: run only shard I (from 0) of N of the scenarios (round-robin in path order) and "
                       "write its results beside the table (--out); slurm-array: the Slurm job array task's "
                       "place. Under mpirun or srun a sweep of simulated scenarios is spread over the ranks "
                       "without it")
          ->type_name("I/N|slurm-array");
  command
      ->add_flag(
          "--combine", f->combine,
          "Run nothing: write the combined table from the results the shards (--shard) wrote to --out; "
          "give the shards' scenarios and flags")
      ->excludes(shard);
  command->callback([f, &status] {
    BackendTeardown teardown;  // on every way out of the run, before main returns
    const ScenarioPaths paths = expand_scenario_paths(f->scenarios);
    const bool sweep = paths.several || !f->shard.empty() || f->combine;
    status.code = sweep ? run_many(*f, paths.files, paths.folder_title) : run_one(*f, paths.files.front());
    teardown.finish();
  });
}

}  // namespace zb::cli
