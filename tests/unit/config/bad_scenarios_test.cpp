// Table-driven: each case breaks the base scenario in one way and names the JSON path the error must
// point at. Every case must fail with exit code 2 and a message naming the file and that path.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/scenario_loader.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

using json = nlohmann::json;
using Mutation = std::function<void(json&)>;

struct BadCase {
  const char* id;
  Mutation mutate;                 // applied to the base scenario; ignored when `raw_text` is set
  const char* path;                // the JSON path a problem must name exactly ("" = the whole file)
  const char* message_part;        // a part of that problem's text (what + hint)
  const char* raw_text = nullptr;  // a whole file, for syntax errors
  int line = 0;                    // expected line:column for syntax errors
  int column = 0;
};

Mutation set(const char* pointer, json value) {
  return [pointer, value](json& j) { j[json::json_pointer(pointer)] = value; };
}
Mutation erase(const char* pointer) {
  return [pointer](json& j) {
    const json::json_pointer p(pointer);
    j[p.parent_pointer()].erase(p.back());
  };
}
Mutation both(Mutation a, Mutation b) {
  return [a, b](json& j) {
    a(j);
    b(j);
  };
}

const BadCase cases[] = {
    // top level
    {"missing_name", erase("/name"), "name", "missing required key"},
    {"name_with_space", set("/name", "quick start"), "name", "only letters, digits"},
    {"name_not_string", set("/name", 5), "name", "expected a string"},
    {"negative_seed", set("/seed", -1), "seed", "must be >= 0"},
    {"fractional_seed", set("/seed", 1.5), "seed", "expected an integer"},
    {"unknown_top_level_key", set("/sytems", json::array()), "sytems", "did you mean \"systems\"?"},
    {"root_not_object", [](json& j) { j = json::array(); }, "", "expected an object"},
    {"unknown_backend", set("/backend", "gpu"), "backend", "\"gpu\" is not one of"},
    {"unknown_passes", set("/passes", "bwd"), "passes", "\"fwd+bwd\""},
    // cluster
    {"missing_cluster", erase("/cluster"), "cluster", "missing required key"},
    {"unknown_cluster_preset", set("/cluster/preset", "dgx-h300"), "cluster.preset",
     "dgx-h100, dgx-h200, h800-8nic, a800-4nic"},
    {"zero_nodes", set("/cluster/nodes", 0), "cluster.nodes", "between 1 and"},
    {"nodes_as_string", set("/cluster/nodes", "2"), "cluster.nodes",
     "expected an integer, got a string (\"2\")"},
    {"nic_bandwidth_bare_number", set("/cluster/nic/bandwidth", 400), "cluster.nic.bandwidth",
     "expected a bandwidth such as \"400 Gbit/s\" or \"450 GB/s\""},
    {"nic_bandwidth_ambiguous_bits", set("/cluster/nic/bandwidth", "400 Gb/s"), "cluster.nic.bandwidth",
     "\"Gbit/s\" for bits"},
    {"zero_nic_bandwidth", set("/cluster/nic/bandwidth", "0 GB/s"), "cluster.nic.bandwidth",
     "greater than zero"},
    {"nvlink_latency_bad_unit", set("/cluster/nvlink/latency", "2 parsecs"), "cluster.nvlink.latency",
     "expected a latency"},
    {"memory_with_bandwidth_unit", set("/cluster/gpu/memory", "141 GB/s"), "cluster.gpu.memory",
     "expected a memory size"},
    {"peak_with_wrong_unit", set("/cluster/gpu/peak_bf16", "989 TFLOPS"), "cluster.gpu.peak_bf16",
     "989 TFLOP/s"},
    // quantities no run could finish with (issue 17, item 7): infinite, or rates too small, latencies too
    // long
    {"memory_overflows_to_infinity", set("/cluster/gpu/memory", "1e308 TiB"), "cluster.gpu.memory",
     "overflows to infinity"},
    {"bandwidth_overflows_to_infinity", set("/cluster/nic/bandwidth", "1e308 TB/s"), "cluster.nic.bandwidth",
     "overflows to infinity"},
    {"compute_overflows_to_infinity", set("/cluster/gpu/peak_bf16", "1e305 PFLOP/s"), "cluster.gpu.peak_bf16",
     "overflows to infinity"},
    {"bandwidth_too_small_to_finish", set("/cluster/nic/bandwidth", "1e-300 GB/s"), "cluster.nic.bandwidth",
     "below the smallest bandwidth a run can finish with, 1 MB/s"},
    {"compute_too_small_to_finish", set("/cluster/gpu/peak_bf16", "0.5 MFLOP/s"), "cluster.gpu.peak_bf16",
     "below the smallest compute rate"},
    {"latency_too_long_to_finish", set("/cluster/nvlink/latency", "1e300 s"), "cluster.nvlink.latency",
     "above the largest latency a run can finish with, 1 s"},
    {"misspelt_nic_key", set("/cluster/nic/bandwith", "1 GB/s"), "cluster.nic.bandwith",
     "did you mean \"bandwidth\"?"},
    {"gpu_to_nic_too_short", set("/cluster/gpu_to_nic", json{0, 1, 2, 3}), "cluster.gpu_to_nic",
     "gpus_per_node is 8"},
    {"gpu_to_nic_index_too_big", set("/cluster/gpu_to_nic", json{0, 1, 2, 8, 4, 5, 6, 7}),
     "cluster.gpu_to_nic[3]", "nics_per_node is 8"},
    {"gpu_to_nic_not_integer", set("/cluster/gpu_to_nic", json{0, 1, 2, "3", 4, 5, 6, 7}),
     "cluster.gpu_to_nic[3]", "expected a NIC index"},
    {"oversubscription_below_one", set("/cluster/oversubscription", 0.5), "cluster.oversubscription",
     "must be in [1"},
    {"custom_cluster_without_nic",
     [](json& j) {
       j["cluster"] = {{"nodes", 1},
                       {"gpu", {{"peak_bf16", "100 TFLOP/s"}, {"memory", "40 GiB"}}},
                       {"nvlink", {{"bandwidth", "100 GB/s"}}}};
     },
     "cluster.nic.bandwidth", "required when the cluster names no preset"},
    {"pcie_without_bandwidth", set("/cluster/pcie", json::object()), "cluster.pcie.bandwidth",
     "missing required key"},
    {"cluster_not_object", set("/cluster", "dgx-h200"), "cluster", "expected an object"},
    // model
    {"unknown_model_preset", set("/model/preset", "llama-70b"), "model.preset", "llama-3b, llama-7b"},
    {"heads_not_dividing_hidden", set("/model/heads", 30), "model.heads", "must divide hidden (4096)"},
    {"kv_heads_not_dividing_heads", set("/model/kv_heads", 5), "model.kv_heads", "must divide heads (32)"},
    {"unknown_dtype", set("/model/dtype", "fp8"), "model.dtype", "\"fp8\" is not one of"},
    {"zero_layers", set("/model/layers", 0), "model.layers", "between 1 and"},
    {"custom_model_missing_vocab",
     set("/model", json{{"layers", 2}, {"hidden", 256}, {"heads", 4}, {"ffn_hidden", 512}}), "model.vocab",
     "missing required key"},
    // workload
    {"no_workload_source", erase("/workload/dataset"), "workload", "exactly one of"},
    {"two_workload_sources", set("/workload/lengths_file", "lengths.txt"), "workload",
     "more than one source"},
    {"misspelt_dataset", set("/workload/dataset", "wikipeda"), "workload.dataset",
     "did you mean \"wikipedia\"?"},
    {"empty_lengths_file", both(erase("/workload/dataset"), set("/workload/lengths_file", "")),
     "workload.lengths_file", "must not be empty"},
    {"zero_max_seq_len", set("/workload/max_seq_len", 0), "workload.max_seq_len", "between 1 and"},
    {"negative_token_budget", set("/workload/tokens_per_iteration", -5), "workload.tokens_per_iteration",
     "between 1 and"},
    {"zero_iterations", set("/workload/iterations", 0), "workload.iterations", "between 1 and"},
    {"unknown_long_document_policy", set("/workload/long_documents", "drop"), "workload.long_documents",
     "\"truncate\""},
    {"negative_sigma", both(erase("/workload/dataset"), set("/workload/distribution", json{{"sigma", -1}})),
     "workload.distribution.sigma", "must be in (0"},
    {"unknown_distribution_kind",
     both(erase("/workload/dataset"), set("/workload/distribution", json{{"kind", "gamma"}})),
     "workload.distribution.kind", "\"lognormal\""},
    {"key_of_another_distribution_kind",
     both(erase("/workload/dataset"),
          set("/workload/distribution", json{{"kind", "uniform"}, {"max", 100}, {"sigma", 1}})),
     "workload.distribution.sigma", "unknown key"},
    {"uniform_min_above_max",
     both(erase("/workload/dataset"),
          set("/workload/distribution", json{{"kind", "uniform"}, {"min", 10}, {"max", 5}})),
     "workload.distribution.min", "greater than max"},
    // documents longer than the longest this build plans, 2^30 tokens (core/config/document_limit.hpp):
    // their causal pair counts would overflow std::int64_t past about 3e9 tokens
    {"max_seq_len_past_the_longest_document", set("/workload/max_seq_len", 4'000'000'000LL),
     "workload.max_seq_len", "longer than the longest document this build plans, 1073741824"},
    {"max_seq_len_one_past_the_longest_document", set("/workload/max_seq_len", (1LL << 30) + 1),
     "workload.max_seq_len", "set max_seq_len to at most 1073741824 tokens"},
    {"fixed_length_past_the_longest_document",
     both(erase("/workload/dataset"),
          set("/workload/distribution", json{{"kind", "fixed"}, {"value", 4'000'000'000LL}})),
     "workload.distribution.value", "longer than the longest document this build plans"},
    {"uniform_max_past_the_longest_document",
     both(erase("/workload/dataset"),
          set("/workload/distribution", json{{"kind", "uniform"}, {"max", 1LL << 40}})),
     "workload.distribution.max", "set max to at most 1073741824 tokens"},
    {"lognormal_median_past_the_longest_document",
     both(erase("/workload/dataset"), set("/workload/distribution", json{{"median", 5e9}})),
     "workload.distribution.median", "longer than the longest document this build plans"},
    // systems
    {"no_systems", set("/systems", json::array()), "systems", "at least one"},
    {"unknown_system", set("/systems/0", "zepelin"), "systems[0]", "did you mean \"zeppelin\"?"},
    {"degree_not_dividing_world", set("/systems/2/degree", 3), "systems[2].degree",
     "does not divide the world size 16"},
    {"zero_degree", set("/systems/2/degree", 0), "systems[2].degree", "expected an integer >= 1"},
    // a Ulysses (USP) degree the model's heads do not allow, refused by validate as run would refuse it:
    // DeepSpeed-Ulysses gives each member heads/u whole query heads; K/V heads are split (u ≤ kv_heads) or
    // replicated (u a multiple of kv_heads)
    {"ulysses_degree_not_dividing_heads",
     both(set("/model", json{{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 12}, {"kv_heads", 4}}),
          set("/systems/2", json{{"name", "ulysses"}, {"degree", 8}})),
     "systems[2].degree",
     "ulysses degree 8 does not divide the model's 12 query heads (K/V heads: 4): each member of a u-group "
     "computes heads/u whole heads"},
    {"ulysses_degree_names_the_degrees_that_would_do",
     both(set("/model", json{{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 12}, {"kv_heads", 4}}),
          set("/systems/2", json{{"name", "ulysses"}, {"degree", 8}, {"ring", 2}})),
     "systems[2].degree", "the degrees this model and node allow: 1, 2, 4"},
    {"ulysses_degree_splitting_kv_heads_unevenly",
     both(set("/model", json{{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 24}, {"kv_heads", 6}}),
          set("/systems/2", json{{"name", "ulysses"}, {"degree", 4}})),
     "systems[2].degree", "does not divide the model's 6 K/V heads (query heads: 24)"},
    {"ulysses_degree_replicating_kv_heads_unevenly",
     both(set("/model", json{{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 24}, {"kv_heads", 3}}),
          set("/systems/2", json{{"name", "ulysses"}, {"degree", 8}})),
     "systems[2].degree", "is no multiple of the model's 3 K/V heads (query heads: 24)"},
    {"ulysses_degree_not_dividing_heads_per_tensor_parallel_rank",
     both(both(set("/model", json{{"preset", "llama-7b"}, {"hidden", 3072}, {"heads", 12}, {"kv_heads", 12}}),
               set("/parallelism", json{{"tensor", 2}})),
          set("/systems/2", json{{"name", "ulysses"}, {"degree", 4}})),
     "systems[2].degree",
     "does not divide the 6 query heads per tensor-parallel rank (the model's 12 / TP 2; K/V heads: 12 / TP "
     "2)"},
    {"routing_not_bool", set("/systems/0", json{{"name", "zeppelin"}, {"routing", "no"}}),
     "systems[0].routing", "expected true or false"},
    {"misspelt_option", set("/systems/0", json{{"name", "zeppelin"}, {"routng", false}}), "systems[0].routng",
     "did you mean \"routing\"?"},
    {"duplicate_default_labels", set("/systems", json{"zeppelin", "ring-cp", "zeppelin"}), "systems[2]",
     "already used by systems[0]"},
    {"duplicate_explicit_label", set("/systems/2/label", "ring-cp"), "systems[2]",
     "already used by systems[1]"},
    {"system_object_without_name", set("/systems/0", json{{"routing", false}}), "systems[0].name",
     "missing required key"},
    // gates
    {"gate_names_unknown_system", set("/gates/0/system", "zeppelin[routing=false]"), "gates[0].system",
     "not the label of a system"},
    {"speedup_without_baseline", erase("/gates/0/baseline"), "gates[0].baseline", "missing required key"},
    {"unknown_gate_metric", set("/gates/0/metric", "throughput"), "gates[0].metric", "\"tokens_per_second\""},
    {"gate_without_bounds", erase("/gates/0/min"), "gates[0]", "needs \"min\", \"max\""},
    {"baseline_on_absolute_metric", set("/gates/0/metric", "mfu"), "gates[0].baseline", "absolute metric"},
    {"best_baseline_without_baselines",
     both(set("/gates/0/baseline", "best"), set("/systems", json{"zeppelin"})), "gates[0].baseline",
     "\"systems\" has no baseline"},
    {"best_baseline_and_a_system_labelled_best",
     both(set("/gates/0/baseline", "best"), set("/systems/1", json{{"name", "ring-cp"}, {"label", "best"}})),
     "gates[0].baseline", "labelled \"best\" too"},
    // output
    {"unknown_output_format", set("/output/formats/1", "pdf"), "output.formats[1]", "unknown output format"},
    {"empty_output_dir", set("/output/dir", ""), "output.dir", "must not be empty"},
    // syntax and structure (raw text)
    {"trailing_comma", nullptr, "", "syntax error", "{\n  \"name\": \"x\",\n}\n", 3, 1},
    {"unclosed_object", nullptr, "", "syntax error", "{\n  \"name\": \"x\"\n", 3, 1},
    {"unterminated_block_comment", nullptr, "", "never closed", "{ \"name\": \"x\" }\n  /* oops", 2, 3},
    {"repeated_key", nullptr, "cluster.nodes", "more than once", R"({"cluster": {"nodes": 1, "nodes": 2}})"},
};

class BadScenario : public testing::TestWithParam<BadCase> {};

TEST_P(BadScenario, FailsWithExitCode2NamingThePath) {
  const BadCase& c = GetParam();
  std::string text;
  if (c.raw_text != nullptr) {
    text = c.raw_text;
  } else {
    json j = parse_jsonc(test::base_scenario_text, "base.json");
    c.mutate(j);
    text = j.dump(2);
  }
  try {
    (void)parse_scenario(text, "bad/scenario.json");
    FAIL() << "the scenario was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string all = e.what();
    EXPECT_NE(all.find("bad/scenario.json"), std::string::npos) << all;
    bool found = false;
    for (const Problem& problem : e.problems()) {
      EXPECT_EQ(problem.where.file, "bad/scenario.json");
      if (problem.where.json_path != c.path) continue;
      if ((problem.what + " " + problem.hint).find(c.message_part) == std::string::npos) continue;
      found = true;
      if (c.line > 0) {
        EXPECT_EQ(problem.where.line, c.line) << all;
        EXPECT_EQ(problem.where.column, c.column) << all;
        EXPECT_NE(all.find(":" + std::to_string(c.line) + ":" + std::to_string(c.column)), std::string::npos)
            << all;
      }
    }
    EXPECT_TRUE(found) << "no problem at path \"" << c.path << "\" containing \"" << c.message_part
                       << "\"; got:\n"
                       << all;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, BadScenario, testing::ValuesIn(cases),
                         [](const testing::TestParamInfo<BadCase>& param_info) {
                           return std::string(param_info.param.id);
                         });

TEST(BadScenarioTable, HasAtLeastThirtyCases) {
  EXPECT_GE(std::size(cases), 30u);
}

}  // namespace
}  // namespace zb
