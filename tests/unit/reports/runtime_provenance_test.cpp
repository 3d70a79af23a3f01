// The versions a GPU run used, asked at run time by its executor (RunResult::runtime, copied into the
// RunContext by the run command), are written as provenance.runtime; a simulated report claims none of
// them, even when a context carries some by mistake (docs/REPORT_FORMAT.md).
#include <gtest/gtest.h>

#include "reports/json_report.hpp"
#include "reports/run_context.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

RuntimeFacts h200_facts() {
  RuntimeFacts facts;
  facts.asked_by = "cuda backend, rank 0 (GPU 0)";
  facts.libraries = {{"cuda_driver", "13.0"}, {"cuda_runtime", "13.0"}, {"nccl", "2.27.3"},
                     {"cudnn", "9.19.0"},     {"cublaslt", "13.1.0"},   {"cupti", "13.0.1"}};
  facts.gpu_name = "NVIDIA H200";
  facts.gpu_sm_count = 132;
  facts.gpu_memory_bytes = 150'000'000'000;
  facts.gpu_compute_capability = "9.0";
  return facts;
}

TEST(RuntimeProvenance, AMeasuredRunNamesTheVersionsAskedAtRunTime) {
  RunContext context = test::fixed_context();
  context.backend = "cuda";
  context.simulated = false;
  context.runtime = h200_facts();
  const nlohmann::ordered_json provenance = provenance_to_json(context, "one-h200.json");
  ASSERT_TRUE(provenance.contains("runtime")) << provenance.dump(2);
  const nlohmann::ordered_json& runtime = provenance["runtime"];
  EXPECT_EQ(runtime["asked_by"], "cuda backend, rank 0 (GPU 0)");
  EXPECT_EQ(runtime["libraries"]["cuda_driver"], "13.0");
  EXPECT_EQ(runtime["libraries"]["cuda_runtime"], "13.0");
  EXPECT_EQ(runtime["libraries"]["nccl"], "2.27.3");
  EXPECT_EQ(runtime["libraries"]["cudnn"], "9.19.0");
  EXPECT_EQ(runtime["libraries"]["cublaslt"], "13.1.0");
  EXPECT_EQ(runtime["libraries"]["cupti"], "13.0.1");
  // In the order the executor asked them, so reports diff cleanly.
  std::vector<std::string> names;
  for (const auto& [name, version] : runtime["libraries"].items()) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"cuda_driver", "cuda_runtime", "nccl", "cudnn", "cublaslt", "cupti"}));
  EXPECT_EQ(runtime["gpu"]["name"], "NVIDIA H200");
  EXPECT_EQ(runtime["gpu"]["compute_capability"], "9.0");
  EXPECT_EQ(runtime["gpu"]["sm_count"], 132);
  EXPECT_EQ(runtime["gpu"]["memory_bytes"], 150'000'000'000);
  // The build's own list stays the build's: no runtime version leaks into provenance.libraries.
  EXPECT_FALSE(provenance["libraries"].contains("nccl"));
}

TEST(RuntimeProvenance, ASimulatedReportClaimsNoDriverLibraryOrGpu) {
  RunContext context = test::fixed_context();  // backend sim
  EXPECT_FALSE(provenance_to_json(context, "sample.json").contains("runtime"));
  context.runtime = h200_facts();  // even if a context carried facts, a simulation used none of them
  EXPECT_FALSE(provenance_to_json(context, "sample.json").contains("runtime"));
  // The whole report too.
  const RunResult run = test::sample_run({});
  const nlohmann::ordered_json report = report_json(run, summarize_run(run), context);
  EXPECT_FALSE(report["provenance"].contains("runtime"));
}

TEST(RuntimeProvenance, ABackendThatAskedNothingWritesNoRuntimeSection) {
  RunContext context = test::fixed_context();
  context.backend = "reference";
  context.simulated = false;
  EXPECT_FALSE(provenance_to_json(context, "sample.json").contains("runtime"));
}

}  // namespace
}  // namespace zb::reports
