// The JSON report: pinned by a golden file (tests/golden/report_sample.json) built from the hand-made
// sample run with its volatile fields nulled. After an intended format change, regenerate it with
//   ZB_UPDATE_GOLDEN=1 ./zb_reports_tests --gtest_filter='JsonReport.*'
// and review the diff (docs/REPORT_FORMAT.md must describe every change).
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/atomic_write.hpp"
#include "reports/json_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

const std::filesystem::path golden_path = std::filesystem::path(ZB_SOURCE_DIR) / "tests/golden/report_sample.json";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::ordered_json sample_report(const RunContext& context) {
  const RunResult run = test::sample_run();
  return report_json(run, summarize_run(run), context);
}

TEST(JsonReport, MatchesGoldenFile) {
  // The real context (host, clock, environment) proves that nulling the volatile fields is enough.
  const std::string actual = dump_report(without_volatile_fields(sample_report(capture_run_context("sim"))));
  const char* update = std::getenv("ZB_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_file_atomically(golden_path, actual);
    GTEST_SKIP() << "golden file rewritten: " << golden_path;
  }
  ASSERT_TRUE(std::filesystem::exists(golden_path)) << "missing " << golden_path << "; run with ZB_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read_text(golden_path)) << "the JSON report changed; if intended, regenerate with ZB_UPDATE_GOLDEN=1";
}

TEST(JsonReport, VolatileFieldsAreTheOnlyDifferenceBetweenContexts) {
  RunContext other = test::fixed_context();
  other.host = "another-host";
  other.date_utc = "2030-05-05T05:05:05Z";
  other.git_sha = "fedcba987654";
  EXPECT_NE(sample_report(test::fixed_context()), sample_report(other));
  EXPECT_EQ(without_volatile_fields(sample_report(test::fixed_context())), without_volatile_fields(sample_report(other)));
}

TEST(JsonReport, CarriesContextSamplesAndGates) {
  const nlohmann::ordered_json report = sample_report(test::fixed_context());
  EXPECT_EQ(report["schema_version"], 1);
  EXPECT_EQ(report["context"]["nccl_environment"]["NCCL_IB_HCA"], "mlx5");
  EXPECT_EQ(report["context"]["scenario"]["name"], "sample");
  EXPECT_TRUE(report["context"]["simulated"].get<bool>());
  ASSERT_EQ(report["systems"].size(), 3U);
  const auto& zeppelin = report["systems"][0];
  EXPECT_EQ(zeppelin["samples"]["iteration_seconds"].size(), 3U);
  EXPECT_EQ(zeppelin["nic"]["per_nic"].size(), 4U);
  EXPECT_EQ(zeppelin["ring_steps"].size(), 1U);
  const auto& oom = report["systems"][2];
  EXPECT_EQ(oom["feasible_iterations"], 0);
  EXPECT_EQ(oom["memory"]["oom"].size(), 3U);
  EXPECT_TRUE(oom["samples"]["iteration_seconds"].empty());
  ASSERT_EQ(report["gates"].size(), 2U);
  EXPECT_TRUE(report["gates"][0]["passed"].get<bool>());
  EXPECT_FALSE(report["gates"][1]["passed"].get<bool>());
  EXPECT_FALSE(report["verdict"]["gates_passed"].get<bool>());
  // Speed-ups against every baseline that ran: zeppelin vs ring-cp, nothing against the OOM system.
  ASSERT_EQ(report["comparisons"].size(), 1U);
  EXPECT_EQ(report["comparisons"][0]["system"], "zeppelin");
  EXPECT_GT(report["comparisons"][0]["speedup"].get<double>(), 1.4);
}

TEST(JsonReport, WriteIsAtomicAndCreatesTheFolder) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "zb_json_report" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  const RunResult run = test::sample_run();
  write_json_report(run, summarize_run(run), test::fixed_context(), dir / "report.json");
  ASSERT_TRUE(std::filesystem::exists(dir / "report.json"));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "report.json") << "temporary file left behind";
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(nlohmann::json::parse(read_text(dir / "report.json"))["schema_version"], 1);
}

}  // namespace
}  // namespace zb::reports
