// `zeppelin-bench compare BASE.json CAND.json [--threshold 5%] [--alpha 0.05] [--format text|markdown|json]`:
// CI performance gating between two JSON reports (reports/compare.hpp). Exit 1 when a system ran out of
// memory in more of its iterations than before, or when its iteration time, tokens/s or MFU got worse by
// more than the threshold with p below alpha (paired t test for simulations of the same seed and batches,
// Mann–Whitney U otherwise); 0 otherwise (warnings included); 2 when a file is missing, too large, not
// JSON, not a schema 1 or 2 report or one with impossible counts, or when no system is in both reports.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "reports/compare.hpp"

namespace zb::cli {
namespace {

struct CompareArguments {
  std::string base;
  std::string candidate;
  std::string threshold = "5%";
  double alpha = 0.05;
  std::string format = "text";
};

// "5%" → 0.05; "0.05" → 0.05. A bare number above 1 is ambiguous ("5" could mean 5 % or 500 %), so it
// is refused rather than guessed.
double parse_threshold(const std::string& text) {
  Location where;
  where.json_path = "--threshold";
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !(value >= 0)) {
    throw_input_error(where, fmt::format("\"{}\" is not a threshold", text),
                      "write it as a percentage, e.g. 5%");
  }
  if (percent) return value / 100;
  if (value > 1) {
    throw_input_error(where, fmt::format("\"{}\" is ambiguous", text),
                      fmt::format("write {}% or {}", value, value / 100));
  }
  return value;
}

ExitCode run_compare(const CompareArguments& arguments) {
  reports::CompareOptions options;
  options.threshold = parse_threshold(arguments.threshold);
  options.alpha = arguments.alpha;
  const nlohmann::json base = reports::load_report_file(arguments.base);
  const nlohmann::json candidate = reports::load_report_file(arguments.candidate);
  reports::ComparisonReport report = reports::compare_reports(base, candidate, options);
  report.base_file = arguments.base;
  report.candidate_file = arguments.candidate;

  std::string text;
  if (arguments.format == "markdown") {
    text = reports::format_comparison_markdown(report);
  } else if (arguments.format == "json") {
    text = reports::comparison_to_json(report).dump(2) + "\n";
  } else {
    text = reports::format_comparison_text(report);
  }
  write_stdout(text);  // labels and file names in it come from the report files
  return reports::exit_code_of(report);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand("compare",
                                         "Compare two JSON reports: exit 1 on an OOM or a significant "
                                         "regression beyond the threshold (CI gating)");
  auto arguments = std::make_shared<CompareArguments>();  // outlives parsing; read by the callback
  command->add_option("BASE", arguments->base, "Baseline report.json")->required()->type_name("FILE");
  command->add_option("CANDIDATE", arguments->candidate, "Candidate report.json")
      ->required()
      ->type_name("FILE");
  command
      ->add_option("--threshold", arguments->threshold, "Smallest change that counts, e.g. 5% (default 5%)")
      ->type_name("PERCENT");
  command
      ->add_option("--alpha", arguments->alpha,
                   "Significance level of the test, paired t or Mann-Whitney U (default 0.05)")
      ->check(CLI::Range(1e-9, 0.5));
  command->add_option("--format", arguments->format, "Output: text, markdown or json (default text)")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  command->callback([arguments, &status] { status.code = run_compare(*arguments); });
}

}  // namespace zb::cli
