// HardwareProfile JSON: defaults, partial overrides, round trips, and strict errors (exit code 2) that
// name the file and the key.
#include <string>

#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/cost/cost_model.hpp"

namespace zb {
namespace {

// Parses `text` and returns the error message, failing the test when no zb::Error with exit code 2 comes.
std::string profile_error(const std::string& text) {
  try {
    (void)HardwareProfile::from_json(nlohmann::json::parse(text), "h200.profile.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text;
  return {};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(HardwareProfileJson, EmptyObjectGivesDefaults) {
  const HardwareProfile profile = HardwareProfile::from_json(nlohmann::json::object(), "empty.json");
  EXPECT_EQ(profile.to_json(), HardwareProfile{}.to_json());
}

TEST(HardwareProfileJson, ToJsonHasEveryField) {
  const nlohmann::json j = HardwareProfile{}.to_json();
  EXPECT_EQ(j.size(), 23U);
  EXPECT_EQ(j.at("interference"), true);  // a flag is written as JSON true/false
  EXPECT_DOUBLE_EQ(j.at("comm_compute_slowdown").get<double>(), 0.189);
  EXPECT_DOUBLE_EQ(j.at("nic_transfer_overhead").get<double>(), 4.5e-6);
  EXPECT_DOUBLE_EQ(j.at("attention_efficiency").get<double>(), 0.60);
  EXPECT_DOUBLE_EQ(j.at("backward_attention_factor").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j.at("activation_bytes_factor").get<double>(), 34.0);
  EXPECT_DOUBLE_EQ(j.at("model_state_shards").get<double>(), 0.0);
}

TEST(HardwareProfileJson, PartialOverrideKeepsOtherDefaults) {
  const HardwareProfile profile = HardwareProfile::from_json(
      nlohmann::json::parse(R"({"attention_efficiency": 0.5, "model_state_shards": 8})"), "p.json");
  EXPECT_DOUBLE_EQ(profile.attention_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(profile.model_state_shards, 8.0);
  EXPECT_DOUBLE_EQ(profile.gemm_efficiency, HardwareProfile{}.gemm_efficiency);
}

TEST(HardwareProfileJson, RoundTripOfEveryFieldChanged) {
  HardwareProfile changed;
  changed.attention_efficiency = 0.55;
  changed.attention_half_tokens = 300;
  changed.attention_call_overhead = 9e-6;
  changed.gemm_efficiency = 0.7;
  changed.gemm_half_rows = 64;
  changed.gemm_call_overhead = 4e-6;
  changed.sustained_compute_fraction = 0.9;
  changed.backward_attention_factor = 2.6;
  changed.backward_linear_factor = 2.1;
  changed.p2p_bandwidth_efficiency = 0.85;
  changed.nvlink_bandwidth_efficiency = 0.8;
  changed.nic_bandwidth_efficiency = 0.02;
  changed.nvlink_transfer_overhead = 2e-6;
  changed.nic_transfer_overhead = 3e-5;
  changed.comm_compute_slowdown = 0.05;
  changed.interference = 0;
  changed.compute_jitter = 0.03;
  changed.straggler_probability = 0.01;
  changed.straggler_slowdown = 2;
  changed.activation_bytes_factor = 30;
  changed.memory_reserve_fraction = 0.12;
  changed.optimizer_bytes_per_param = 18;
  changed.model_state_shards = 4;
  const nlohmann::json written = changed.to_json();
  const HardwareProfile read = HardwareProfile::from_json(nlohmann::json::parse(written.dump()), "rt.json");
  EXPECT_EQ(read.to_json(), written);
  EXPECT_NE(written, HardwareProfile{}.to_json());
  for (const auto& [key, value] : written.items()) {
    EXPECT_NE(value, HardwareProfile{}.to_json().at(key)) << key << " was not changed by the test";
  }
}

TEST(HardwareProfileJson, InterferenceIsAFlag) {
  EXPECT_EQ(
      HardwareProfile::from_json(nlohmann::json::parse(R"({"interference": false})"), "f.json").interference,
      0.0);
  EXPECT_FALSE(HardwareProfile::from_json(nlohmann::json::parse(R"({"interference": false})"), "f.json")
                   .interference_on());
  EXPECT_EQ(HardwareProfile::from_json(nlohmann::json::parse(R"({"interference": true})"), "f.json")
                .overlap_slowdown(),
            HardwareProfile{}.comm_compute_slowdown);
  EXPECT_THROW((void)HardwareProfile::from_json(nlohmann::json::parse(R"({"interference": 0})"), "f.json"),
               Error);
}

// A link class without its own efficiency runs at the shared p2p one; with one, at its own.
TEST(HardwareProfileJson, LinkClassEfficienciesFallBackToTheSharedOne) {
  const HardwareProfile shared =
      HardwareProfile::from_json(nlohmann::json::parse(R"({"p2p_bandwidth_efficiency": 0.7})"), "p.json");
  EXPECT_DOUBLE_EQ(shared.nvlink_efficiency(), 0.7);
  EXPECT_DOUBLE_EQ(shared.nic_efficiency(), 0.7);
  const HardwareProfile own = HardwareProfile::from_json(
      nlohmann::json::parse(R"({"p2p_bandwidth_efficiency": 0.7, "nic_bandwidth_efficiency": 0.05})"),
      "p.json");
  EXPECT_DOUBLE_EQ(own.nvlink_efficiency(), 0.7);
  EXPECT_DOUBLE_EQ(own.nic_efficiency(), 0.05);
  EXPECT_TRUE(contains(profile_error(R"({"nic_bandwidth_efficiency": 1.5})"), "nic_bandwidth_efficiency"));
  EXPECT_TRUE(contains(profile_error(R"({"nvlink_transfer_overhead": -1e-6})"), "nvlink_transfer_overhead"));
}

TEST(HardwareProfileJson, UnknownKeyNamesFileKeyAndSuggestion) {
  const std::string message = profile_error(R"({"attention_eficiency": 0.5})");
  EXPECT_TRUE(contains(message, "h200.profile.json")) << message;
  EXPECT_TRUE(contains(message, "attention_eficiency")) << message;
  EXPECT_TRUE(contains(message, "did you mean \"attention_efficiency\"")) << message;
}

TEST(HardwareProfileJson, UnrelatedUnknownKeyListsKnownKeys) {
  const std::string message = profile_error(R"({"colour": "blue"})");
  EXPECT_TRUE(contains(message, "colour")) << message;
  // Same wording as the scenario loader: every known key is listed.
  EXPECT_TRUE(contains(message, "expected one of:")) << message;
  EXPECT_TRUE(contains(message, "\"model_state_shards\"")) << message;
}

TEST(HardwareProfileJson, WrongTypesAreBadInput) {
  EXPECT_TRUE(contains(profile_error(R"({"gemm_efficiency": "0.7"})"), "gemm_efficiency"));
  EXPECT_TRUE(contains(profile_error(R"({"gemm_efficiency": true})"), "expected a number"));
  EXPECT_TRUE(contains(profile_error(R"({"gemm_efficiency": null})"), "expected a number"));
  EXPECT_TRUE(contains(profile_error(R"({"gemm_efficiency": [0.7]})"), "expected a number"));
  EXPECT_TRUE(contains(profile_error(R"([1, 2])"), "must be a JSON object"));
}

TEST(HardwareProfileJson, OutOfRangeValuesAreBadInput) {
  EXPECT_TRUE(contains(profile_error(R"({"attention_efficiency": 1.5})"), "attention_efficiency"));
  EXPECT_TRUE(contains(profile_error(R"({"attention_efficiency": 0})"), "out of range"));
  EXPECT_TRUE(contains(profile_error(R"({"gemm_call_overhead": -1e-6})"), "out of range"));
  EXPECT_TRUE(contains(profile_error(R"({"memory_reserve_fraction": 1.0})"), "out of range"));
  EXPECT_TRUE(contains(profile_error(R"({"model_state_shards": 2.5})"), "whole number"));
}

TEST(HardwareProfileJson, AllProblemsReportedAtOnce) {
  try {
    (void)HardwareProfile::from_json(
        nlohmann::json::parse(R"({"a": 1, "gemm_efficiency": "x", "gemm_half_rows": -3})"), "f.json");
    FAIL() << "expected zb::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.problems().size(), 3U) << e.what();
  }
}

TEST(HardwareProfileJson, ProfileChangesCosts) {
  ClusterSpec cluster;
  cluster.gpu.peak_flops = 1e15;
  ModelSpec model;
  model.layers = 1;
  model.hidden = 128;
  model.heads = 1;
  model.kv_heads = 1;
  const HardwareProfile slow =
      HardwareProfile::from_json(nlohmann::json::parse(R"({"attention_efficiency": 0.3})"), "slow.json");
  const CostModel fast_model(cluster, model);
  const CostModel slow_model(cluster, model, slow);
  const double flops = 1e12;
  EXPECT_NEAR(slow_model.attention_time(flops, 1e9) - 8e-6,
              2 * (fast_model.attention_time(flops, 1e9) - 8e-6), 1e-9);
}

}  // namespace
}  // namespace zb
