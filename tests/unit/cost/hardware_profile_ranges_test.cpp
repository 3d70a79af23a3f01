// The hardware profile's accepted values (docs/METRICS.md, "Allowed"), as a specification: every key takes
// the ends of its range and refuses what lies beyond them or is subnormal, with exit 2, the key and the
// range; and whatever the loader accepts, the cost model turns into finite times and a token capacity in
// [0, 2^48] (issue 38: activation_bytes_factor 1e-320 gave -2^63 tokens, gemm_efficiency 1e-310 an
// infinite GEMM, backward_linear_factor 1e308 a SimGrid crash).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/common/rng.hpp"
#include "core/cost/cost_model.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

using json = nlohmann::json;

// The message of loading {key: value}, or "" when it is accepted.
std::string refusal(std::string_view key, double value) {
  try {
    (void)HardwareProfile::from_json(json{{std::string(key), value}}, "p.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  return "";
}

std::string range_of(const HardwareProfileRange& r) {
  return fmt::format("{}[{:g}, {:g}]", r.zero_too ? "0 or " : "", r.min, r.max);
}

TEST(HardwareProfileRanges, EveryRangeIsClosedFiniteAndAboveTheSubnormals) {
  for (const HardwareProfileRange& r : hardware_profile_ranges()) {
    EXPECT_TRUE(std::isfinite(r.min) && std::isfinite(r.max) && r.min <= r.max) << r.key;
    EXPECT_TRUE(r.min == 0 || std::fpclassify(r.min) == FP_NORMAL) << r.key;
  }
  EXPECT_EQ(hardware_profile_ranges().size(), HardwareProfile{}.to_json().size());
}

TEST(HardwareProfileRanges, EveryKeyTakesTheEndsOfItsRange) {
  for (const HardwareProfileRange& r : hardware_profile_ranges()) {
    if (r.flag) continue;
    for (const double end : {r.min, r.max}) {
      EXPECT_EQ(refusal(r.key, end), "") << r.key << " = " << end;
      EXPECT_EQ(HardwareProfile::from_json(json{{std::string(r.key), end}}, "p.json")
                    .to_json()
                    .at(std::string(r.key)),
                end)
          << r.key;
    }
    if (r.zero_too) {
      EXPECT_EQ(refusal(r.key, 0.0), "") << r.key;
    }
  }
}

TEST(HardwareProfileRanges, EveryKeyRefusesWhatLiesBeyondItsRangeNamingKeyAndRange) {
  for (const HardwareProfileRange& r : hardware_profile_ranges()) {
    if (r.flag) continue;
    const double below = r.min > 0 ? r.min / 2 : -1.0;  // with zero_too, still not 0
    for (const double outside : {below, r.max * 2, r.max + 1}) {
      const std::string message = refusal(r.key, outside);
      EXPECT_NE(message.find(std::string("p.json: ") + std::string(r.key) + ": value "), std::string::npos)
          << r.key << " = " << outside << ": " << message;
      EXPECT_NE(message.find("out of range"), std::string::npos) << message;
      EXPECT_NE(message.find("use a value in " + range_of(r)), std::string::npos) << message;
    }
    if (r.whole) {
      EXPECT_NE(refusal(r.key, r.min + 0.5).find("not a whole number"), std::string::npos) << r.key;
    }
  }
}

TEST(HardwareProfileRanges, SubnormalValuesAreRefusedForEveryKey) {
  for (const HardwareProfileRange& r : hardware_profile_ranges()) {
    if (r.flag) continue;
    for (const double tiny : {1e-320, -1e-320, 4.9e-324}) {
      const std::string message = refusal(r.key, tiny);
      EXPECT_NE(message.find("is subnormal"), std::string::npos) << r.key << " = " << tiny << ": " << message;
      EXPECT_NE(message.find(range_of(r)), std::string::npos) << message;
    }
  }
}

// A value of `r` drawn from `rng`: an end of the range a quarter of the time each, else log-uniform
// across it (uniform where it starts at 0), or 0 where that is allowed.
double draw(const HardwareProfileRange& r, Rng& rng) {
  const double u = rng.uniform();
  if (u < 0.25) return r.min;
  if (u < 0.5) return r.max;
  if (r.zero_too && u < 0.6) return 0.0;
  double value =
      r.min > 0 ? r.min * std::pow(r.max / r.min, rng.uniform()) : r.max * std::pow(rng.uniform(), 8);
  if (std::fpclassify(value) == FP_SUBNORMAL) value = 0;
  if (r.whole) value = std::floor(value);
  return std::clamp(value, r.zero_too ? 0.0 : r.min, r.max);
}

// Whatever the loader accepts, the cost model's figures stay finite and in range: 200 random profiles,
// a quarter of each key's values at each end of its range, on a large and a small model.
TEST(HardwareProfileRanges, AcceptedProfilesGiveFiniteTimesAndABoundedCapacity) {
  ModelSpec tiny = test::llama_7b();
  tiny.layers = 1;
  tiny.hidden = 64;
  tiny.heads = tiny.kv_heads = 1;
  tiny.ffn_hidden = 64;
  tiny.vocab = 16;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed);
    json j = json::object();
    for (const HardwareProfileRange& r : hardware_profile_ranges())
      j[std::string(r.key)] = r.flag ? json(rng.uniform() < 0.5) : json(draw(r, rng));
    const HardwareProfile profile = HardwareProfile::from_json(j, "random.json");
    for (const ModelSpec& model : {test::llama_7b(), tiny}) {
      const CostModel cost(test::dgx_h200(2), model, profile);
      const std::int64_t capacity = cost.token_capacity_per_gpu();
      EXPECT_GE(capacity, 0) << j.dump();
      EXPECT_LE(capacity, std::int64_t{1} << 48) << j.dump();
      for (const double tokens : {1.0, 4096.0, 1048576.0}) {
        const double pairs = tokens * (tokens + 1) / 2;
        for (const double seconds : {cost.attention_time(cost.attention_fwd_flops(pairs), tokens),
                                     cost.attention_time(cost.attention_bwd_flops(pairs), tokens),
                                     cost.linear_fwd_time(tokens), cost.linear_bwd_time(tokens),
                                     cost.transfer_time(tokens * 8192, cost.nvlink(), LinkClass::nvlink),
                                     cost.transfer_time(tokens * 8192, cost.nic_per_gpu(), LinkClass::nic)}) {
          EXPECT_TRUE(std::isfinite(seconds) && seconds > 0)
              << seconds << " s for " << tokens << " tokens, " << j.dump();
        }
      }
    }
  }
}

// The capacity saturates at 2^48 tokens rather than wrap around: a GPU of 1e290 TB (the scenario loader
// takes any memory that stays finite in bytes) once gave -2^63 tokens.
TEST(HardwareProfileRanges, AnyMemorySaturatesTheCapacityInsteadOfWrapping) {
  ClusterSpec cluster = test::dgx_h200(2);
  for (const double bytes : {1e22, 1e100, 1e302}) {
    cluster.gpu.memory_bytes = bytes;
    EXPECT_EQ(CostModel(cluster, test::llama_7b()).token_capacity_per_gpu(), std::int64_t{1} << 48) << bytes;
  }
}

}  // namespace
}  // namespace zb
