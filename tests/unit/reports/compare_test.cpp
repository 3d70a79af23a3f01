// `compare` of measured runs (the U test): verdicts and exit codes. The report files are built here from the
// sample run: a report
// against itself exits 0; one whose samples are 20 % slower exits 1; too few samples warn and exit 0; an
// unreadable, endless, invalid or wrong-version file, counts no run writes, and reports with no system in
// common exit 2. The CLI cases run the real binary.
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "reports/atomic_write.hpp"
#include "reports/compare.hpp"
#include "reports/json_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

// Measured runs ("cuda"): the unpaired U test these cases pin. Simulations of the same seed are paired
// instead (paired_compare_test.cpp).
nlohmann::json report_with(int iterations, double time_scale) {
  test::SampleOptions options;
  options.iterations = iterations;
  options.time_scale = time_scale;
  options.backend = "cuda";
  return test::sample_report_json(options);
}

const MetricComparison& find(const ComparisonReport& report, const std::string& system,
                             const std::string& metric) {
  for (const MetricComparison& m : report.metrics) {
    if (m.system == system && m.metric == metric) return m;
  }
  throw std::runtime_error("no such row");
}

TEST(Compare, SelfComparisonIsUnchanged) {
  const nlohmann::json report = report_with(8, 1.0);
  const ComparisonReport result = compare_reports(report, report, {});
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_EQ(result.regressions(), 0);
  EXPECT_DOUBLE_EQ(find(result, "zeppelin", "iteration_seconds").change, 0.0);
  EXPECT_EQ(find(result, "zeppelin", "iteration_seconds").verdict, Verdict::unchanged);
}

TEST(Compare, TwentyPercentSlowerIsARegression) {
  const ComparisonReport result = compare_reports(report_with(8, 1.0), report_with(8, 1.2), {});
  EXPECT_EQ(exit_code_of(result), ExitCode::check_failed);
  const MetricComparison& time = find(result, "zeppelin", "iteration_seconds");
  EXPECT_NEAR(time.change, 0.2, 1e-12);
  EXPECT_LT(time.p_value, 0.05);
  EXPECT_EQ(time.verdict, Verdict::regression);
  EXPECT_EQ(find(result, "ring-cp", "tokens_per_second").verdict, Verdict::regression);  // lower is worse
  EXPECT_EQ(find(result, "zeppelin", "mfu").verdict, Verdict::regression);
}

TEST(Compare, TwentyPercentFasterIsAnImprovement) {
  const ComparisonReport result = compare_reports(report_with(8, 1.2), report_with(8, 1.0), {});
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_EQ(find(result, "zeppelin", "iteration_seconds").verdict, Verdict::improvement);
}

TEST(Compare, ChangeBelowThresholdIsNotARegression) {
  CompareOptions options;
  options.threshold = 0.25;
  EXPECT_EQ(exit_code_of(compare_reports(report_with(8, 1.0), report_with(8, 1.2), options)), ExitCode::ok);
}

TEST(Compare, TooFewSamplesWarnInsteadOfJudging) {
  const ComparisonReport result = compare_reports(report_with(2, 1.0), report_with(2, 1.5), {});
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_EQ(find(result, "zeppelin", "iteration_seconds").verdict, Verdict::inconclusive);
  ASSERT_FALSE(result.warnings.empty());
  EXPECT_NE(format_comparison_text(result).find("WARNING: zeppelin / iteration_seconds: 2 and 2 samples"),
            std::string::npos);
}

TEST(Compare, ThreeSamplesCannotReachAlphaAndSaySo) {
  // Exact test, 3 vs 3: the smallest two-sided p is 0.1, never below 0.05.
  const ComparisonReport result = compare_reports(report_with(3, 1.0), report_with(3, 1.5), {});
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_EQ(find(result, "zeppelin", "iteration_seconds").verdict, Verdict::inconclusive);
  EXPECT_NE(find(result, "zeppelin", "iteration_seconds").warning.find("cannot reach p < 0.05"),
            std::string::npos);
}

TEST(Compare, SystemsOnOneSideOnlyAreWarnings) {
  nlohmann::json candidate = report_with(8, 1.0);
  candidate["systems"][0]["label"] = "zeppelin-v2";
  const ComparisonReport result = compare_reports(report_with(8, 1.0), candidate, {});
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_GE(result.warnings.size(), 2U);
}

// A gate over nothing must not pass: every label renamed, or no systems on a side, is bad input naming
// both sides' labels (it was "no regression", exit 0).
TEST(Compare, NoSystemInCommonIsBadInputListingBothSides) {
  nlohmann::json renamed = report_with(8, 1.0);
  for (auto& system : renamed["systems"]) system["label"] = system["label"].get<std::string>() + "-v2";
  nlohmann::json empty = report_with(8, 1.0);
  empty["systems"] = nlohmann::json::array();
  for (const nlohmann::json& candidate : {renamed, empty}) {
    try {
      (void)compare_reports(report_with(8, 1.0), candidate, {});
      ADD_FAILURE() << "compared " << candidate["systems"].size() << " systems with none in common";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      const std::string message = e.what();
      EXPECT_NE(
          message.find("systems: nothing to compare: no system label is in both reports (base: \"zeppelin\""),
          std::string::npos)
          << message;
      EXPECT_NE(
          message.find(candidate["systems"].empty() ? "candidate: none)" : "candidate: \"zeppelin-v2\""),
          std::string::npos)
          << message;
    }
  }
}

TEST(Compare, FormatsCarryTheSameVerdict) {
  ComparisonReport result = compare_reports(report_with(8, 1.0), report_with(8, 1.2), {});
  EXPECT_NE(format_comparison_text(result).find("REGRESSION"), std::string::npos);
  EXPECT_NE(format_comparison_markdown(result).find("| zeppelin | iteration_seconds |"), std::string::npos);
  const nlohmann::ordered_json json = comparison_to_json(result);
  EXPECT_EQ(json["exit_code"], 1);
  EXPECT_EQ(json["results"][0]["verdict"], "REGRESSION");
}

std::filesystem::path scratch_dir() {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "zb_compare_test";
  std::filesystem::create_directories(dir);
  return dir;
}

std::filesystem::path write_json(const std::string& name, const nlohmann::json& json) {
  const std::filesystem::path path = scratch_dir() / name;
  write_file_atomically(path, json.dump());
  return path;
}

TEST(CompareFiles, BadFilesAreBadInputNamingTheFile) {
  const std::filesystem::path missing = scratch_dir() / "missing.json";
  const std::filesystem::path garbage = scratch_dir() / "garbage.json";
  write_file_atomically(garbage, "{ not json");
  nlohmann::json wrong_version = report_with(3, 1.0);
  wrong_version["schema_version"] = 3;
  const std::filesystem::path future = write_json("future.json", wrong_version);
  for (const std::filesystem::path& path : {missing, garbage, future}) {
    try {
      (void)load_report_file(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find(path.filename().string()), std::string::npos) << e.what();
    }
  }
}

// Counts no run writes are refused where they stand: 2^63 - 1 iterations once wrapped around into the
// out-of-memory shares and read as a regression.
TEST(CompareFiles, CountsNoRunWritesAreBadInputNamingThePath) {
  struct Case {
    const char* name;
    std::uint64_t iterations;
    std::uint64_t feasible;
    const char* expected;
  };
  const std::uint64_t most = 2147483647;  // INT_MAX: run's iteration count is an int
  for (const Case& c :
       {Case{"huge.json", 9223372036854775807ULL, 8,
             "systems[0].iterations: 9223372036854775807 "
             "iterations is more than a run can have"},
        Case{"just_over.json", most + 1, 8, "systems[0].iterations: 2147483648 iterations"},
        Case{"more_fitted.json", 8, 9, "systems[0].feasible_iterations: 9 iterations fitted of 8"}}) {
    nlohmann::json report = report_with(8, 1.0);
    report["systems"][0]["iterations"] = c.iterations;
    report["systems"][0]["feasible_iterations"] = c.feasible;
    const std::filesystem::path path = write_json(c.name, report);
    try {
      (void)load_report_file(path);
      ADD_FAILURE() << "accepted " << c.name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find(path.string() + ": " + c.expected), std::string::npos) << e.what();
    }
  }
  nlohmann::json at_most = report_with(8, 1.0);
  at_most["systems"][0]["iterations"] = most;
  EXPECT_NO_THROW((void)load_report_file(write_json("at_most.json", at_most)));
}

// An endless input is read up to the limit and refused, never to the end: /dev/zero once grew to 3 GB.
TEST(CompareFiles, AnEndlessInputIsRefusedAtTheLimit) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  try {
    (void)load_report_file("/dev/zero");
    ADD_FAILURE() << "read /dev/zero";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("/dev/zero: the input is larger than the limit of 268435456 bytes"),
              std::string::npos)
        << e.what();
  }
}

// The real CLI, when it has been built next to this test (it is, in a full build).
int run_cli(const std::string& arguments) {
  const std::filesystem::path cli(ZB_CLI_PATH);
  if (!std::filesystem::exists(cli)) return -1;
  const int status = std::system((cli.string() + " " + arguments + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

TEST(CompareCli, ExitCodes) {
  if (!std::filesystem::exists(ZB_CLI_PATH)) GTEST_SKIP() << "zeppelin-bench not built";
  const auto base = write_json("base.json", report_with(8, 1.0)).string();
  const auto slower = write_json("slower.json", report_with(8, 1.2)).string();
  const auto few = write_json("few.json", report_with(2, 1.0)).string();
  const auto few_slower = write_json("few_slower.json", report_with(2, 1.5)).string();
  EXPECT_EQ(run_cli("compare " + base + " " + base), 0);
  EXPECT_EQ(run_cli("compare " + base + " " + slower), 1);
  EXPECT_EQ(run_cli("compare " + base + " " + slower + " --threshold 25%"), 0);
  EXPECT_EQ(run_cli("compare " + few + " " + few_slower), 0);
  EXPECT_EQ(run_cli("compare " + base + " " + slower + " --format markdown"), 1);
  EXPECT_EQ(run_cli("compare " + base + " " + slower + " --format json"), 1);
  // A system that goes from fitting to out of memory fails the comparison (it was "inconclusive", exit 0).
  test::SampleOptions out_of_memory;
  out_of_memory.iterations = 8;
  out_of_memory.backend = "cuda";
  out_of_memory.ring_cp_oom_iterations = 8;
  const auto oom = write_json("oom.json", test::sample_report_json(out_of_memory)).string();
  EXPECT_EQ(run_cli("compare " + base + " " + oom), 1);
  // Simulations of the same seed pair up: 3 iterations 20 % slower decide (they were "inconclusive").
  test::SampleOptions simulated_slower;
  simulated_slower.time_scale = 1.2;
  const auto sim = write_json("sim.json", test::sample_report_json()).string();
  const auto sim_slower = write_json("sim_slower.json", test::sample_report_json(simulated_slower)).string();
  EXPECT_EQ(run_cli("compare " + sim + " " + sim_slower), 1);
  EXPECT_EQ(run_cli("compare " + sim + " " + sim), 0);
  EXPECT_EQ(run_cli("compare " + base + " " + (scratch_dir() / "missing.json").string()), 2);
  EXPECT_EQ(run_cli("compare " + base + " " + base + " --threshold lots"), 2);
  EXPECT_EQ(run_cli("compare " + base + " " + base + " --format html"), 2);
  nlohmann::json renamed = report_with(8, 1.0);
  for (auto& system : renamed["systems"]) system["label"] = "renamed-" + system["label"].get<std::string>();
  EXPECT_EQ(run_cli("compare " + base + " " + write_json("renamed.json", renamed).string()), 2);
  EXPECT_EQ(run_cli("compare " + base + " /dev/zero"), 2);
}

}  // namespace
}  // namespace zb::reports
