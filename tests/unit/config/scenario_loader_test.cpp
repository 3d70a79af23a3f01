#include "core/config/scenario_loader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.hpp"
#include "core/config/document_limit.hpp"
#include "core/config/jsonc.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

using json = nlohmann::json;

Scenario parse_json(const json& j, const std::filesystem::path& file = "dir/scenario.json") {
  return parse_scenario(j.dump(), file);
}

json base_json() {
  return parse_jsonc(test::base_scenario_text, "base.json");
}

TEST(ScenarioLoader, BaseScenarioTakesPresetValues) {
  const Scenario s = parse_scenario(test::base_scenario_text, "dir/base.json");
  EXPECT_EQ(s.name, "base");
  EXPECT_EQ(s.description, "the scenario the tests mutate");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.cluster.preset, "dgx-h200");
  EXPECT_EQ(s.cluster.nodes, 2);
  EXPECT_EQ(s.cluster.world_size(), 16);
  EXPECT_DOUBLE_EQ(s.cluster.nic.bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(s.cluster.nvlink.bandwidth, 450e9);
  EXPECT_EQ(s.cluster.gpu_to_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.model.preset, "llama-7b");
  EXPECT_EQ(s.model.hidden, 4096);
  EXPECT_EQ(s.workload.source, WorkloadSource::dataset);
  EXPECT_EQ(s.workload.dataset, "wikipedia");
  EXPECT_EQ(s.workload.tokens_per_iteration, 1048576);
  EXPECT_EQ(s.workload.iterations, 3);
  ASSERT_EQ(s.systems.size(), 3u);
  EXPECT_EQ(s.systems[0].label, "zeppelin");
  EXPECT_EQ(s.systems[0].options, (json{{"routing", true},
                                        {"remap", true},
                                        {"partitioning", "hierarchical"},
                                        {"remap_policy", "where-it-pays"},
                                        {"heads", "ring"},
                                        {"best_of", false}}));
  EXPECT_EQ(s.systems[1].label, "ring-cp");
  EXPECT_EQ(s.systems[2].label, "uniform-cp[degree=8]");
  EXPECT_EQ(s.systems[2].options, (json{{"degree", 8}, {"dealing", "balanced"}}));
  EXPECT_EQ(s.backend, "sim");
  EXPECT_EQ(s.passes, Passes::fwd_bwd);
  EXPECT_EQ(s.output.dir, std::filesystem::path("out/base"));
  EXPECT_EQ(s.output.formats, (std::vector<std::string>{"json", "html", "trace"}));
  ASSERT_EQ(s.gates.size(), 1u);
  EXPECT_EQ(s.gates[0].metric, "speedup");
  EXPECT_EQ(s.gates[0].baseline, "ring-cp");
  EXPECT_EQ(s.gates[0].min, 1.2);
  EXPECT_FALSE(s.gates[0].max);
  EXPECT_EQ(s.source_file, std::filesystem::path("dir/base.json"));
  EXPECT_EQ(s.source_json, base_json());  // as written, comments stripped
}

TEST(ScenarioLoader, SpeedupGateMayNameTheBestBaseline) {
  json j = base_json();
  j["gates"][0]["baseline"] = "best";
  const Scenario s = parse_json(j);
  ASSERT_EQ(s.gates.size(), 1u);
  EXPECT_EQ(s.gates[0].baseline, "best");  // resolved by the reports, once the run is over
}

TEST(ScenarioLoader, ExplicitKeysOverrideThePreset) {
  json j = base_json();
  j["cluster"]["nic"] = {{"bandwidth", "200 Gbit/s"}};
  j["cluster"]["gpus_per_node"] = 4;
  j["cluster"]["nics_per_node"] = 2;
  j["cluster"]["gpu"] = {{"memory", "80 GB"}};
  j["cluster"]["pcie"] = nullptr;
  j["cluster"]["oversubscription"] = 2;
  j["model"]["layers"] = 2;
  j["model"]["dtype"] = "fp32";
  j["systems"] = {"zeppelin",
                  {{"name", "zeppelin"}, {"routing", false}, {"partitioning", "flat"}},
                  {{"name", "uniform-cp"}, {"degree", 4}, {"label", "ucp4"}}};
  j["gates"] = {{{"metric", "mfu"}, {"system", "ucp4"}, {"min", 0.1}, {"max", 0.9}}};
  const Scenario s = parse_json(j);
  EXPECT_EQ(s.cluster.preset, "dgx-h200");
  EXPECT_EQ(s.cluster.gpu.name, "H200");                            // kept from the preset
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_flops, 989e12);               // kept
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_bytes, 80e9);               // overridden
  EXPECT_DOUBLE_EQ(s.cluster.nic.bandwidth, 25e9);                  // overridden
  EXPECT_DOUBLE_EQ(s.cluster.nic.latency, 5e-6);                    // kept
  EXPECT_EQ(s.cluster.gpu_to_nic, (std::vector<int>{0, 0, 1, 1}));  // derived for the new counts
  EXPECT_FALSE(s.cluster.pcie_bandwidth);
  EXPECT_DOUBLE_EQ(s.cluster.oversubscription, 2.0);
  EXPECT_EQ(s.model.layers, 2);
  EXPECT_EQ(s.model.hidden, 4096);
  EXPECT_EQ(s.model.dtype_bytes, 4);
  EXPECT_EQ(s.systems[1].label, "zeppelin[routing=false,partitioning=flat]");
  EXPECT_EQ(s.systems[2].label, "ucp4");
  EXPECT_EQ(s.gates[0].metric, "mfu");
  EXPECT_TRUE(s.gates[0].baseline.empty());
}

TEST(ScenarioLoader, CustomClusterAndModelWithoutPresets) {
  json j = base_json();
  j["cluster"] = {{"nodes", 3},
                  {"gpus_per_node", 4},
                  {"nics_per_node", 1},
                  {"gpu", {{"name", "X1"}, {"peak_bf16", "100 TFLOP/s"}, {"memory", "48 GiB"}}},
                  {"nvlink", {{"bandwidth", "100 GB/s"}}},
                  {"nic", {{"bandwidth", "100 Gbit/s"}, {"latency", "8 us"}}}};
  j["model"] = {{"layers", 4}, {"hidden", 512}, {"heads", 8}, {"ffn_hidden", 2048}, {"vocab", 1000}};
  j["systems"] = {"ring-cp", {{"name", "uniform-cp"}, {"degree", 6}}};
  j["gates"] = json::array();
  const Scenario s = parse_json(j);
  EXPECT_TRUE(s.cluster.preset.empty());
  EXPECT_EQ(s.cluster.world_size(), 12);
  EXPECT_EQ(s.cluster.gpu_to_nic, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(s.cluster.nvlink.latency, 2e-6);  // typical default
  EXPECT_DOUBLE_EQ(s.cluster.nic.latency, 8e-6);
  EXPECT_FALSE(s.cluster.pcie_bandwidth);
  EXPECT_TRUE(s.model.preset.empty());
  EXPECT_EQ(s.model.kv_heads, 8);  // defaults to heads
  EXPECT_EQ(s.systems[1].label, "uniform-cp[degree=6]");
}

TEST(ScenarioLoader, DefaultsApplyWhenKeysAreOmitted) {
  const json j = {{"name", "minimal"},
                  {"cluster", {{"preset", "a800-4nic"}}},
                  {"model", {{"preset", "llama3-8b"}}},
                  {"workload", {{"distribution", {{"kind", "fixed"}, {"value", 4096}}}}},
                  {"systems", {"ring-cp"}}};
  const Scenario s = parse_json(j);
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.cluster.nodes, 1);
  EXPECT_EQ(s.cluster.gpu_to_nic, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(s.workload.source, WorkloadSource::distribution);
  EXPECT_EQ(s.workload.distribution.kind, "fixed");
  EXPECT_EQ(s.workload.distribution.value, 4096);
  EXPECT_EQ(s.workload.max_seq_len, 65536);
  EXPECT_EQ(s.workload.long_documents, LongDocuments::truncate);
  EXPECT_EQ(s.workload.tokens_per_iteration, 1048576);
  EXPECT_EQ(s.workload.iterations, 3);
  EXPECT_EQ(s.backend, "sim");
  EXPECT_EQ(s.passes, Passes::fwd_bwd);
  EXPECT_EQ(s.output.dir, std::filesystem::path("out/minimal"));
  EXPECT_EQ(s.output.formats, (std::vector<std::string>{"json", "html"}));
  EXPECT_TRUE(s.gates.empty());
}

TEST(ScenarioLoader, LognormalDistributionWithTail) {
  json j = base_json();
  j["workload"] = {
      {"distribution", {{"median", 900}, {"sigma", 1.3}, {"tail_alpha", 1.5}, {"tail_from", 0.9}}},
      {"long_documents", "split"}};
  const Scenario s = parse_json(j);
  EXPECT_EQ(s.workload.distribution.kind, "lognormal");
  EXPECT_DOUBLE_EQ(s.workload.distribution.median, 900);
  EXPECT_DOUBLE_EQ(s.workload.distribution.sigma, 1.3);
  EXPECT_EQ(s.workload.distribution.tail_alpha, 1.5);
  EXPECT_DOUBLE_EQ(s.workload.distribution.tail_from, 0.9);
  EXPECT_EQ(s.workload.long_documents, LongDocuments::split);
}

// The longest document this build plans, 2^30 tokens, is accepted wherever a scenario names a document
// length; one token more is refused (bad_scenarios_test.cpp). The token budget is not a document length:
// it may be larger, its documents are cut to max_seq_len.
TEST(ScenarioLoader, DocumentsUpToTheLongestSupportedAreAccepted) {
  json j = base_json();
  j["workload"]["max_seq_len"] = kMaxDocumentLength;
  j["workload"]["tokens_per_iteration"] = 4 * kMaxDocumentLength;
  const Scenario s = parse_json(j);
  EXPECT_EQ(s.workload.max_seq_len, std::int64_t{1} << 30);
  EXPECT_EQ(s.workload.tokens_per_iteration, std::int64_t{1} << 32);
  j["workload"].erase("dataset");
  j["workload"]["distribution"] = {{"kind", "uniform"}, {"max", kMaxDocumentLength}};
  EXPECT_EQ(parse_json(j).workload.distribution.max, kMaxDocumentLength);
  j["workload"]["distribution"] = {{"kind", "fixed"}, {"value", kMaxDocumentLength}};
  EXPECT_EQ(parse_json(j).workload.distribution.value, kMaxDocumentLength);
}

// What DeepSpeed-Ulysses and USP allow passes validation: a degree dividing the query heads, with the K/V
// heads (GQA) split when there are at least as many, replicated when the degree is a multiple of them;
// "auto" picks among those degrees itself (the refused ones: bad_scenarios_test.cpp).
TEST(ScenarioLoader, UlyssesDegreesTheModelsHeadsAllowAreAccepted) {
  json j = base_json();
  j["model"] = {{"preset", "llama-7b"}, {"kv_heads", 2}};  // 32 query heads, 2 K/V heads
  for (const int degree : {1, 2, 4, 8}) {
    j["systems"][2] = {{"name", "ulysses"}, {"degree", degree}, {"ring", 2}};
    EXPECT_EQ(parse_json(j).systems[2].options["degree"], degree);
  }
  j["model"] = {{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 12}, {"kv_heads", 4}};
  j["systems"][2] = {{"name", "ulysses"}, {"degree", "auto"}};
  EXPECT_EQ(parse_json(j).systems[2].options["degree"], "auto");
  j["systems"][2] = {{"name", "ulysses"}, {"degree", 4}};
  EXPECT_EQ(parse_json(j).systems[2].options["degree"], 4);
}

TEST(ScenarioLoader, LengthsFileIsRelativeToTheScenarioFolder) {
  json j = base_json();
  j["workload"].erase("dataset");
  j["workload"]["lengths_file"] = "data/../lengths.txt";
  EXPECT_EQ(parse_json(j, "/srv/scenarios/s.json").workload.lengths_file,
            std::filesystem::path("/srv/scenarios/lengths.txt"));
  EXPECT_EQ(parse_json(j, "s.json").workload.lengths_file, std::filesystem::path("lengths.txt"));
  j["workload"]["lengths_file"] = "/abs/lengths.txt";
  EXPECT_EQ(parse_json(j, "/srv/s.json").workload.lengths_file, std::filesystem::path("/abs/lengths.txt"));
}

TEST(ScenarioLoader, ReportsEveryProblemAtOnce) {
  json j = base_json();
  j["seed"] = -3;
  j["cluster"]["nic"] = {{"bandwidth", 400}};
  j["model"]["dtype"] = "fp8";
  j["workload"]["iterations"] = 0;
  j["systems"][0] = "zepelin";
  j["backend"] = "gpu";
  try {
    (void)parse_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().size(), 6u) << e.what();
  }
}

TEST(ScenarioLoader, QuickstartScenarioValidates) {
  const Scenario s = load_scenario(std::filesystem::path(ZB_SOURCE_DIR) / "scenarios" / "quickstart.json");
  EXPECT_EQ(s.name, "quickstart");
  EXPECT_EQ(s.cluster.world_size(), 16);
  EXPECT_EQ(s.model.preset, "llama-7b");
  EXPECT_EQ(s.workload.dataset, "wikipedia");
  ASSERT_EQ(s.systems.size(), 4u);
  EXPECT_EQ(s.systems[3].options.at("degree"), "auto")
      << "the quickstart compares with uniform-cp at the degree a launch script would fix";
  ASSERT_EQ(s.gates.size(), 2u);
  EXPECT_EQ(s.gates[1].baseline, "best");
  EXPECT_FALSE(s.description.empty());
  EXPECT_EQ(s.output.dir, std::filesystem::path("out/quickstart"));
}

TEST(ScenarioLoader, MissingFileIsBadInput) {
  try {
    (void)load_scenario("/nonexistent/zeppelin/scenario.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
}

}  // namespace
}  // namespace zb
