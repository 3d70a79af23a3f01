// `zeppelin-bench run SCENARIO [--backend sim|reference|cuda] [--out DIR] [--iterations N] [--seed N]
// [--format F]... [--plan FILE.json] [--quiet|--verbose]`: plans and executes every system of a scenario
// for every iteration, prints the summary, writes the reports, and exits 1 when a gate fails. With
// --plan it executes that one plan instead (core/run/run_plan.hpp), for what-if experiments.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/exec/reference/launcher.hpp"
#include "core/plan/plan_format.hpp"
#include "core/run/run_plan.hpp"
#include "core/run/run_scenario.hpp"
#include "reports/console.hpp"
#include "reports/report_files.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"

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
  bool quiet = false;
  bool verbose = false;
};

Backend parse_backend(const std::string& name) {
  if (name == "sim") return Backend::sim;
  if (name == "reference") return Backend::reference;
  return Backend::cuda;
}

// A one-line progress bar on stderr (only when it is a terminal): system, iteration, ETA.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() {
    if (enabled_ && shown_) std::fputs("\r\033[K", stderr);
  }
  void update(const RunProgress& p) {
    if (!enabled_) return;
    const int total = p.systems * p.iterations;
    const int done = p.system_index * p.iterations + p.iteration;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done > 0 ? elapsed / done * (total - done) : 0;
    constexpr int width = 24;
    const int filled = total > 0 ? width * done / total : 0;
    std::fprintf(stderr, "\r\033[K[%s%s] %s  iteration %d/%d  ETA %.0fs", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(), p.system.c_str(), p.iteration + 1,
                 p.iterations, eta);
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

ExitCode run(const RunFlags& f) {
  Scenario scenario = load_scenario(f.scenario);
  std::vector<ScenarioOverride> overrides =
      apply_overrides(scenario, f.backend.empty() ? std::nullopt : std::optional<Backend>(parse_backend(f.backend)),
                      f.iterations, f.seed, f.out.empty() ? std::nullopt : std::optional<std::string>(f.out));
  std::vector<std::string> formats = scenario.output.formats;
  for (const auto& extra : f.formats) {
    if (std::find(formats.begin(), formats.end(), extra) == formats.end()) formats.push_back(extra);
  }
  if (!f.formats.empty()) overrides.push_back({"--format", "/output/formats", formats});
  // Under a multi-process launcher every process runs the command; rank 0 alone speaks and writes.
  const bool reporter = reference::launcher_rank() == 0;
  const bool quiet = f.quiet || !reporter;
  ProgressBar bar(!quiet && isatty(fileno(stderr)) != 0);
  RunOptions options;
  options.on_progress = [&](const RunProgress& p) {
    bar.update(p);
    if (f.verbose && !quiet) std::fprintf(stderr, "%s: iteration %d\n", p.system.c_str(), p.iteration);
  };
  const RunResult result = f.plan.empty() ? run_scenario(scenario, options)
                                          : run_plan(scenario, plan::read_plan_file(f.plan), f.plan, options);
  const reports::RunSummary summary = reports::summarize_run(result);
  reports::RunContext context = reports::capture_run_context(result.backend, std::move(overrides));
  context.plan_file = f.plan;
  if (!reporter) return summary.gates_passed() ? ExitCode::ok : ExitCode::check_failed;
  if (!quiet) reports::print_console_summary(stdout, summary);
  const auto written = reports::write_reports(result, summary, context, scenario.output.dir, formats);
  if (!quiet) {
    for (const auto& path : written) std::fprintf(stdout, "wrote %s\n", path.string().c_str());
  }
  std::fflush(stdout);
  return summary.gates_passed() ? ExitCode::ok : ExitCode::check_failed;
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
