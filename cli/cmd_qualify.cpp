// `zeppelin-bench qualify SCENARIO [--backend reference|cuda] [--floors FILE] [--out DIR]`: measures the
// scenario's cluster in the spirit of nccl-tests and nvbandwidth (core/qualify: per GPU GEMM and
// attention throughput, per link bandwidth and latency, every rail at once, a routed transfer against a
// direct one), checks every figure against its floor and exits 1 naming each figure below it. One
// process per GPU under mpirun or srun; on one machine, scripts/emulated-cluster.sh run (reference).
// The cuda backend is refused with exit 2 in a build without CUDA and NCCL, exit 3 without a usable GPU;
// an --out that cannot take the reports with exit 3 before any probe runs.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "cli/backend_teardown.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/qualify/cuda_qualify.hpp"
#include "core/qualify/nominal_floors.hpp"
#include "core/qualify/qualify_run.hpp"
#include "reports/atomic_write.hpp"
#include "reports/qualify_report.hpp"

namespace zb::cli {
namespace {

struct QualifyFlags {
  std::string scenario;
  std::string backend = "reference";
  std::string floors;
  std::string out;
};

// The --out folder must take qualify.json and qualify.html before the minutes of measuring, not after
// (exit 3, as `run` and `calibrate` check theirs): the folder, or the nearest folder above it that
// exists, accepts a file. Nothing is created here.
void check_out_folder(const std::filesystem::path& out) {
  Location where;
  where.json_path = "--out";
  const auto refuse = [&](const std::string& why) {
    throw Error(ExitCode::runtime, where,
                fmt::format("{} cannot take qualify.json and qualify.html: {}", out.string(), why),
                "choose another --out");
  };
  std::filesystem::path existing = std::filesystem::absolute(out);
  std::error_code error;
  while (!std::filesystem::exists(existing, error) && existing.has_relative_path())
    existing = existing.parent_path();
  if (!std::filesystem::is_directory(existing, error))
    refuse(existing == std::filesystem::absolute(out) ? "it is a file, not a folder"
                                                      : existing.string() + " is a file, not a folder");
  try {
    const std::filesystem::path probe = existing / (".qualify-probe-" + reports::unique_temporary_suffix());
    reports::write_file_atomically(probe, "");
    std::filesystem::remove(probe, error);
  } catch (const Error& e) {
    refuse(existing.string() + " does not accept a file (" + e.problems().front().what + ")");
  }
}

ExitCode qualify(const QualifyFlags& flags) {
  const Scenario scenario = load_scenario(flags.scenario);
  const std::string out = flags.out.empty() ? "out/" + scenario.name + "-qualify" : flags.out;
  if (is_reporter()) check_out_folder(out);
  const bool cuda = flags.backend == "cuda";
  qualify::QualifyOptions options;
  if (!flags.floors.empty()) options.floors = qualify::read_floors_file(flags.floors);
  qualify::apply_nominal_floors(options.floors, scenario.cluster,
                                qualify::nominal_fractions(options.floors, cuda));
  options.progress = print_progress;
  const qualify::QualifyResult result =
      cuda ? qualify::run_qualify_cuda(scenario, options) : qualify::run_qualify(scenario, options);
  if (!result.is_reporter) return result.failures() == 0 ? ExitCode::ok : ExitCode::check_failed;
  // The verdict first: measured figures are never lost to a folder that failed after the check.
  write_stdout(reports::qualify_console(result));
  reports::write_qualify_reports(result, options.floors, out);
  write_stdout(fmt::format("wrote {0}/qualify.json\nwrote {0}/qualify.html\n", out));
  return result.failures() == 0 ? ExitCode::ok : ExitCode::check_failed;
}

}  // namespace

void add_qualify_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand(
      "qualify",
      "Measure the cluster's GPUs and links against floors (exit 1 naming every figure below its floor)");
  auto flags = std::make_shared<QualifyFlags>();
  command->add_option("SCENARIO", flags->scenario, "Scenario file whose cluster to qualify; required")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--backend", flags->backend,
                   "reference (this host's CPU kernels and interfaces) or cuda (cuBLASLt, cuDNN SDPA, NCCL; "
                   "absolute floors "
                   "from the cluster's nominal figures)")
      ->check(CLI::IsMember({"reference", "cuda"}));
  command
      ->add_option(
          "--floors", flags->floors,
          "Floors file (JSON): relative_to_median, per-probe minimums, nominal_fraction, max_latency")
      ->type_name("FILE");
  command
      ->add_option("--out", flags->out,
                   "Folder for qualify.json and qualify.html (default out/<scenario>-qualify)")
      ->type_name("DIR");
  command->callback([flags, &status] {
    BackendTeardown teardown;  // the cuda backend's NCCL world ends before main returns
    status.code = qualify(*flags);
    teardown.finish();
  });
}

}  // namespace zb::cli
