// `zeppelin-bench calibrate SCENARIO --out PROFILE.json [--backend reference|cuda] [--profile BASE]
// [--budget SECONDS]`:
// measures the kernels and links a run of the scenario uses (core/qualify/calibration.hpp; cuda_qualify.hpp
// on GPUs) and writes the hardware profile fitted to them, in the format the "hardware_profile" key and
// `--profile` read, with the fit report (every point and its residual) beside it as PROFILE.fit.json. One
// process per GPU under mpirun or srun; on one machine, scripts/emulated-cluster.sh run (reference).
// Without a launcher only the kernels are measured.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "cli/backend_teardown.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "cli/run_command.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/qualify/calibration.hpp"
#include "core/qualify/cuda_qualify.hpp"
#include "reports/atomic_write.hpp"
#include "reports/number_format.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

struct CalibrateFlags {
  std::string scenario;
  std::string out;
  std::string profile;
  std::string backend = "reference";
  double budget_seconds = 0;  // --budget: 0 measures every shape
};

std::filesystem::path fit_report_path(const std::filesystem::path& profile) {
  std::filesystem::path path = profile;
  path.replace_extension(".fit.json");
  return path;
}

std::string percent(double residual) {
  return fmt::format("{:.1f} %", 100 * residual);
}

// "12.0 % (time-weighted 3.1 %)": single calls, then a sum of them (what a run adds up).
std::string residuals(const qualify::FitResiduals& fit) {
  return fmt::format("{} (time-weighted {})", percent(fit.rms_residual()),
                     percent(fit.weighted_rms_residual()));
}

// The profile file: a comment saying where the numbers came from, then every constant (JSON with
// comments, as the profile reader accepts).
std::string profile_text(const qualify::Calibration& c, const qualify::CalibrationSamples& samples,
                         const Scenario& s, const std::filesystem::path& fit) {
  std::string text = fmt::format(
      "// Hardware profile fitted by `zeppelin-bench calibrate {}` ({}, {} rank{}, backend {}{}).\n",
      s.source_file.filename().string(), samples.launch, samples.ranks, samples.ranks == 1 ? "" : "s",
      samples.backend, samples.device.empty() ? "" : " on " + samples.device);
  text += fmt::format(
      "// RMS residuals (single calls, then time-weighted): attention {}, attention backward {}, GEMM {}",
      residuals(c.attention), residuals(c.attention_backward), residuals(c.gemm));
  if (c.nvlink) text += ", intra-node link " + residuals(*c.nvlink);
  if (c.nic) text += ", inter-node link " + residuals(*c.nic);
  text += ". Every point and its residual: " + fit.filename().string() + ".\n";
  for (const std::string& note : c.notes) text += "// " + note + "\n";
  return text + c.profile.to_json().dump(2) + "\n";
}

std::string console_text(const qualify::Calibration& c) {
  std::string out = "fitted (cost-model form; residual = fitted / measured − 1):\n";
  out += fmt::format(
      "  attention   efficiency {:.4g} of peak, half at {:.4g} query rows, {} per call   RMS residual {}\n",
      c.profile.attention_efficiency, c.profile.attention_half_tokens,
      reports::format_seconds(c.profile.attention_call_overhead), residuals(c.attention));
  out += fmt::format(
      "  backward    attention factor {:.4g}                                    RMS residual {}\n",
      c.profile.backward_attention_factor, residuals(c.attention_backward));
  out += fmt::format(
      "  GEMM        efficiency {:.4g} of peak, half at {:.4g} rows, {} per call   RMS residual {}\n",
      c.profile.gemm_efficiency, c.profile.gemm_half_rows,
      reports::format_seconds(c.profile.gemm_call_overhead), residuals(c.gemm));
  if (c.nvlink)
    out += fmt::format("  intra-node  {}B/s, latency {} (efficiency {:.4g}, overhead {})   RMS residual {}\n",
                       reports::format_si(c.nvlink->bandwidth), reports::format_seconds(c.nvlink->latency),
                       c.profile.nvlink_bandwidth_efficiency,
                       reports::format_seconds(c.profile.nvlink_transfer_overhead), residuals(*c.nvlink));
  if (c.nic)
    out += fmt::format("  inter-node  {}B/s, latency {} (efficiency {:.4g}, overhead {})   RMS residual {}\n",
                       reports::format_si(c.nic->bandwidth), reports::format_seconds(c.nic->latency),
                       c.profile.nic_bandwidth_efficiency,
                       reports::format_seconds(c.profile.nic_transfer_overhead), residuals(*c.nic));
  for (const std::string& note : c.notes) out += "note: " + note + "\n";
  return out;
}

// The profile's folder must take a file before minutes of measuring, not after (exit 3 naming it).
void check_writable(const std::filesystem::path& out) {
  if (std::filesystem::is_directory(out)) {
    throw Error(ExitCode::runtime, Location{out.string(), ""},
                "--out names a folder; it must name the profile file to write",
                "write --out " + (out / "profile.json").string());
  }
  const std::filesystem::path probe =
      out.parent_path().empty()
          ? std::filesystem::path(".calibrate-probe-" + reports::unique_temporary_suffix())
          : out.parent_path() / (".calibrate-probe-" + reports::unique_temporary_suffix());
  reports::write_file_atomically(probe, "");
  std::error_code ignored;
  std::filesystem::remove(probe, ignored);
}

ExitCode calibrate(const CalibrateFlags& flags) {
  Scenario scenario = load_scenario(flags.scenario);
  if (const auto profile = read_profile_flag(flags.profile)) scenario.hardware_profile = *profile;
  if (is_reporter()) check_writable(flags.out);
  if (flags.budget_seconds > 0 && flags.backend == "cuda")
    throw Error(ExitCode::bad_input, Location{flags.scenario, ""},
                "--budget sizes the reference backend's CPU kernel shapes; the cuda backend's sweep takes "
                "seconds and has no budget",
                "leave out --budget, or calibrate with --backend reference");
  qualify::CalibrationShapes shapes;
  shapes.budget_seconds = flags.budget_seconds;
  const qualify::CalibrationSamples samples =
      flags.backend == "cuda"
          ? qualify::measure_for_calibration_cuda(scenario, qualify::GpuCalibrationSweep{})
          // One line per shape on stderr: CPU kernels at a large model's dims take minutes each.
          : qualify::measure_for_calibration(scenario, shapes, print_progress);
  if (!samples.is_reporter) return ExitCode::ok;
  const qualify::Calibration calibration = qualify::fit_calibration(samples, scenario);
  const std::filesystem::path out = flags.out;
  const std::filesystem::path fit = fit_report_path(out);
  reports::write_file_atomically(out, profile_text(calibration, samples, scenario, fit));
  reports::write_file_atomically(fit,
                                 qualify::calibration_json(samples, calibration, scenario).dump(2) + "\n");
  write_stdout(console_text(calibration) + "wrote " + reports::terminal_field(out.string()) + "\nwrote " +
               reports::terminal_field(fit.string()) + "\n");
  return ExitCode::ok;
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand(
      "calibrate", "Measure the kernels and links a run uses and write the hardware profile fitted to them");
  auto flags = std::make_shared<CalibrateFlags>();
  command
      ->add_option("SCENARIO", flags->scenario, "Scenario whose model and cluster to calibrate for; required")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--out", flags->out,
                   "Profile file to write (the fit report goes beside it as *.fit.json); required")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--backend", flags->backend,
                   "reference (this host's CPU kernels and interfaces) or cuda (cuDNN SDPA, cuBLASLt, NCCL "
                   "on the GPUs)")
      ->check(CLI::IsMember({"reference", "cuda"}));
  add_profile_option(*command, flags->profile);
  command
      ->add_option("--budget", flags->budget_seconds,
                   "Seconds to spend measuring kernels (reference backend): a quick probe estimates every "
                   "shape, then fewer runs and the largest shapes are cut to fit; the estimate is printed")
      ->type_name("SECONDS")
      ->check(CLI::PositiveNumber);
  command->callback([flags, &status] {
    BackendTeardown teardown;  // the cuda backend's NCCL world ends before main returns
    status.code = calibrate(*flags);
    teardown.finish();
  });
}

}  // namespace zb::cli
