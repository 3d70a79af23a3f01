// The report reproduces its run (issue 17, item 3): `run` holds what ran (the effective seed, iterations,
// backend, every override and the scenario with the overrides written in), deterministic for the same
// inputs; `provenance` holds who, where and when (git revision and dirty flag, command line, host CPU and
// GPUs, versions of the libraries the binary links), the one section that varies between runs.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "reports/host_facts.hpp"
#include "reports/json_report.hpp"
#include "reports/run_context.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

RunContext context_with_overrides() {
  RunContext context = test::fixed_context();
  context.overrides = {ScenarioOverride{"--iterations", "/workload/iterations", 3},
                       ScenarioOverride{"--seed", "/seed", 9},
                       ScenarioOverride{"--out", "/output/dir", "out/x"}};
  return context;
}

nlohmann::ordered_json report_with(const RunContext& context) {
  test::SampleOptions options;
  options.seed = 9;  // what the --seed override made the scenario
  const RunResult run = test::sample_run(options);
  return report_json(run, summarize_run(run), context);
}

TEST(Provenance, RunSectionHoldsTheEffectiveSettingsAndOverrides) {
  const nlohmann::ordered_json run = report_with(context_with_overrides())["run"];
  EXPECT_EQ(run["scenario"], "sample");
  EXPECT_EQ(run["backend"], "sim");
  EXPECT_EQ(run["simulated"], true);
  EXPECT_EQ(run["seed"], 9);
  EXPECT_EQ(run["iterations"], 3);
  ASSERT_EQ(run["overrides"].size(), 3U);
  EXPECT_EQ(run["overrides"][1],
            (nlohmann::ordered_json{{"flag", "--seed"}, {"path", "/seed"}, {"value", 9}}));
  // The scenario as written, with each override written in where the file would hold it.
  const nlohmann::ordered_json& scenario = run["effective_scenario"];
  EXPECT_EQ(scenario["seed"], 9);
  EXPECT_EQ(scenario["workload"]["iterations"], 3);
  EXPECT_EQ(scenario["output"]["dir"], "out/x");
  EXPECT_EQ(scenario["cluster"]["preset"], "test-node");  // the rest as written
  EXPECT_TRUE(run["plan_file"].is_null());
}

TEST(Provenance, APlanRunNamesItsPlanFile) {
  RunContext context = test::fixed_context();
  context.plan_file = "what_if.plan.json";
  EXPECT_EQ(report_with(context)["run"]["plan_file"], "what_if.plan.json");
}

TEST(Provenance, ProvenanceSectionHoldsBuildCommandLineAndHost) {
  const nlohmann::ordered_json provenance = report_with(test::fixed_context())["provenance"];
  EXPECT_EQ(provenance["git"], (nlohmann::ordered_json{{"sha", "0123456789ab"}, {"dirty", false}}));
  EXPECT_EQ(provenance["argv"], (nlohmann::ordered_json{"zeppelin-bench", "run", "sample.json"}));
  EXPECT_EQ(provenance["host"]["name"], "test-host");
  EXPECT_EQ(provenance["host"]["cpu_model"], "Test CPU");
  EXPECT_EQ(provenance["host"]["logical_cpus"], 8);
  EXPECT_EQ(provenance["host"]["gpus"][0]["model"], "NVIDIA H200");
  EXPECT_EQ(provenance["host"]["gpu_driver"], "550.90.07");
  EXPECT_EQ(provenance["libraries"]["simgrid"], "3.32");
  EXPECT_FALSE(report_with(test::fixed_context()).contains("context"));  // schema 2: run + provenance
}

TEST(Provenance, OnlyLibrariesTheBinaryLinksAreListed) {
  std::vector<std::string> names;
  for (const LinkedLibrary& library : linked_libraries()) {
    names.push_back(library.name);
    EXPECT_FALSE(library.version.empty()) << library.name;
  }
  // zeppelin-bench links neither CUDA nor NCCL: a version of them would describe the build machine.
  EXPECT_EQ(std::find(names.begin(), names.end(), "cuda"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "nccl"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "simgrid"), names.end());
  const nlohmann::ordered_json real = report_with(capture_run_context("sim"))["provenance"];
  EXPECT_FALSE(real.contains("cuda_version"));
  EXPECT_FALSE(real["libraries"].contains("cuda"));
}

TEST(Provenance, ProvenanceIsTheOnlySectionThatVaries) {
  RunContext other = context_with_overrides();
  other.git_sha = "fedcba987654";
  other.git_dirty = true;
  other.argv = {"/opt/zb/zeppelin-bench", "run", "/tmp/s.json", "--seed", "9"};
  other.host.name = "elsewhere";
  other.date_utc = "2031-01-01T00:00:00Z";
  const nlohmann::ordered_json a = report_with(context_with_overrides());
  const nlohmann::ordered_json b = report_with(other);
  EXPECT_NE(a["provenance"], b["provenance"]);
  EXPECT_EQ(without_volatile_fields(a), without_volatile_fields(b));
  EXPECT_TRUE(without_volatile_fields(a)["provenance"].is_null());
  EXPECT_EQ(a["run"], b["run"]);
}

// Issue 36: a report says how its backend was configured, each option's value and whether it came from
// its default or its environment variable; the simulator has no options.
TEST(Provenance, RecordsTheBackendsOptionValuesAndWhereEachCameFrom) {
  EXPECT_EQ(report_with(capture_run_context("sim"))["provenance"]["backend"],
            (nlohmann::ordered_json{{"name", "sim"}, {"options", nlohmann::ordered_json::object()}}));
  ::setenv("ZB_REF_HEADS", "4", 1);
  RunContext context = capture_run_context("reference");
  ::unsetenv("ZB_REF_HEADS");
  EXPECT_FALSE(context.simulated);
  const nlohmann::ordered_json backend = provenance_to_json(context, "sample.json")["backend"];
  EXPECT_EQ(backend["name"], "reference");
  EXPECT_EQ(backend["options"]["heads"],
            (nlohmann::ordered_json{{"value", 4}, {"from", "environment ZB_REF_HEADS"}}));
  EXPECT_EQ(backend["options"]["tolerance"], (nlohmann::ordered_json{{"value", 1e-4}, {"from", "default"}}));
  EXPECT_EQ(backend["options"]["transport"],
            (nlohmann::ordered_json{{"value", "auto"}, {"from", "default"}}));
}

TEST(Provenance, TheCommandLineIsReadFromTheProcess) {
  const std::vector<std::string> argv = process_arguments();
  ASSERT_FALSE(argv.empty());
  EXPECT_NE(argv.front().find("zb_reports_tests"), std::string::npos) << argv.front();
  EXPECT_FALSE(capture_run_context("sim").argv.empty());
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(HostFacts, ReadFromProcFilesIncludingNvidiaGpus) {
  const std::filesystem::path root = std::filesystem::path(testing::TempDir()) / "zb_host_facts";
  std::filesystem::remove_all(root);
  write(root / "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
        "processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n");
  write(root / "proc/meminfo", "MemTotal:       24683584 kB\nMemFree:         1000000 kB\n");
  const std::filesystem::path gpus = root / "proc/driver/nvidia/gpus";
  write(gpus / "0000:9a:00.0/information",
        "Model: \t\t NVIDIA H200\nIRQ:   \t\t 123\nBus Location: \t 0000:9a:00.0\n");
  write(gpus / "0000:18:00.0/information", "Model: \t\t NVIDIA H200\nBus Location: \t 0000:18:00.0\n");
  write(root / "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build  "
        "(dvs-builder@U16)  Fri May 31 "
        "09:30:47 UTC 2024\nGCC version:  gcc version 12.3.0\n");
  const HostFacts facts = read_host_facts(root);
  EXPECT_EQ(facts.cpu_model, "AMD EPYC 9654 96-Core Processor");
  ASSERT_TRUE(facts.memory_bytes.has_value());
  EXPECT_EQ(*facts.memory_bytes, 24683584LL * 1024);
  ASSERT_EQ(facts.gpus.size(), 2U);
  EXPECT_EQ(facts.gpus[0].bus_id, "0000:18:00.0");  // bus order, not directory order
  EXPECT_EQ(facts.gpus[1].model, "NVIDIA H200");
  EXPECT_EQ(facts.gpu_driver, "550.90.07");
  EXPECT_GT(facts.logical_cpus, 0);
  EXPECT_FALSE(facts.os.empty());
}

TEST(HostFacts, AMachineWithoutTheNvidiaDriverHasNoGpusAndNoDriver) {
  const std::filesystem::path root = std::filesystem::path(testing::TempDir()) / "zb_host_facts_cpu_only";
  std::filesystem::remove_all(root);
  write(root / "proc/cpuinfo", "model name\t: Test CPU\n");
  const HostFacts facts = read_host_facts(root);
  EXPECT_TRUE(facts.gpus.empty());
  EXPECT_EQ(facts.gpu_driver, "");
  EXPECT_FALSE(facts.memory_bytes.has_value());
  const nlohmann::ordered_json json = host_facts_to_json(facts);
  EXPECT_TRUE(json["gpu_driver"].is_null());
  EXPECT_TRUE(json["memory_bytes"].is_null());
}

}  // namespace
}  // namespace zb::reports
