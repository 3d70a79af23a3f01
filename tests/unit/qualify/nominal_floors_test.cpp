// Absolute floors from the cluster's nominal figures (core/qualify/nominal_floors): what `qualify
// --backend cuda` holds each GPU and link to, on the scenario gpu-check qualifies (one H200).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/qualify/floors.hpp"
#include "core/qualify/nominal_floors.hpp"

namespace zb::qualify {
namespace {

Scenario one_h200() {
  return load_scenario(std::filesystem::path(ZB_SOURCE_DIR) / "scenarios/one-h200.json");
}

Measurement gemm(std::int64_t size, double flops, bool reaches_nominal, int gpu = 0) {
  return {.probe = Probe::gemm,
          .subject = "node 0 GPU " + std::to_string(gpu),
          .shape = "m=n=k=" + std::to_string(size),
          .node = 0,
          .gpu = gpu,
          .value = flops,
          .reaches_nominal = reaches_nominal};
}

FloorSpec cuda_floors(const ClusterSpec& cluster, FloorSpec floors = {}) {
  apply_nominal_floors(floors, cluster, nominal_fractions(floors, /*cuda_backend=*/true));
  return floors;
}

TEST(NominalFloors, TheH200PresetGivesGemmAndAttentionFloorsAsFractionsOfItsPeak) {
  const Scenario s = one_h200();
  ASSERT_EQ(s.cluster.world_size(), 1);
  const FloorSpec floors = cuda_floors(s.cluster);
  EXPECT_DOUBLE_EQ(floors.nominal.at(Probe::gemm), 0.5 * 989e12);
  EXPECT_DOUBLE_EQ(floors.nominal.at(Probe::attention), 0.35 * 989e12);
  EXPECT_EQ(floors.nominal_source.at(Probe::gemm), "0.5 × nominal 989 TFLOP/s (dgx-h200, H200)");
  EXPECT_DOUBLE_EQ(floors.nominal.at(Probe::p2p_intra), 0.5 * s.cluster.nvlink.bandwidth);
  EXPECT_DOUBLE_EQ(floors.nominal.at(Probe::p2p_rail), 0.5 * s.cluster.nic.bandwidth);
}

TEST(NominalFloors, AGpuBelowHalfItsPeakFailsAtLargeShapesOnly) {
  const FloorSpec floors = cuda_floors(one_h200().cluster);
  // 300 TFLOP/s: fine for a 1024³ GEMM (too small to fill an H200), a fault at 8192³.
  const std::vector<Verdict> v = evaluate({gemm(1024, 300e12, false), gemm(8192, 300e12, true)}, floors);
  EXPECT_TRUE(v[0].passed);
  EXPECT_THAT(v[0].floor_source, testing::HasSubstr("median"));
  EXPECT_FALSE(v[1].passed);
  EXPECT_DOUBLE_EQ(v[1].floor, 494.5e12);
  EXPECT_EQ(v[1].floor_source, "0.5 × nominal 989 TFLOP/s (dgx-h200, H200)");
  EXPECT_TRUE(evaluate({gemm(8192, 700e12, true)}, floors)[0].passed);
}

TEST(NominalFloors, TheRelativeFloorStillNamesTheSlowGpuAboveTheNominalOne) {
  const FloorSpec floors = cuda_floors(one_h200().cluster);
  const std::vector<Verdict> v = evaluate(
      {gemm(8192, 800e12, true, 0), gemm(8192, 810e12, true, 1), gemm(8192, 380e12, true, 2)}, floors);
  EXPECT_TRUE(v[0].passed && v[1].passed);
  EXPECT_FALSE(v[2].passed);
  EXPECT_DOUBLE_EQ(v[2].floor, 494.5e12);  // the larger of 0.5 × 800 TFLOP/s and the nominal floor
}

TEST(NominalFloors, TheReferenceBackendChecksThemOnlyWhenTheFloorsFileAsks) {
  FloorSpec none;
  EXPECT_TRUE(nominal_fractions(none, false).empty());
  FloorSpec asked;
  asked.nominal_fraction[Probe::gemm] = 0.25;
  EXPECT_EQ(nominal_fractions(asked, false), (std::map<Probe, double>{{Probe::gemm, 0.25}}));
  // On cuda the file's fraction replaces that probe's default and keeps the others'.
  const std::map<Probe, double> cuda = nominal_fractions(asked, true);
  EXPECT_DOUBLE_EQ(cuda.at(Probe::gemm), 0.25);
  EXPECT_DOUBLE_EQ(cuda.at(Probe::attention), 0.35);
}

TEST(NominalFloors, AZeroFractionTurnsAProbesFloorOff) {
  FloorSpec floors;
  floors.nominal_fraction[Probe::gemm] = 0;
  floors = cuda_floors(one_h200().cluster, floors);
  EXPECT_EQ(floors.nominal.count(Probe::gemm), 0u);
  EXPECT_TRUE(evaluate({gemm(8192, 1e12, true)}, floors)[0].passed);
}

TEST(NominalFloors, AllRailsShareANicsNominalAmongItsGpus) {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nics_per_node = 4;
  c.gpu_to_nic = {0, 0, 1, 1, 2, 2, 3, 3};
  c.nic.bandwidth = 25e9;
  c.pcie_bandwidth = 20e9;
  EXPECT_DOUBLE_EQ(nominal_value(Probe::p2p_rail, c), 20e9);  // capped by the GPU's PCIe link
  EXPECT_DOUBLE_EQ(nominal_value(Probe::all_rails, c), 10e9);
  EXPECT_DOUBLE_EQ(nominal_value(Probe::routed, c), 20e9);
}

class NominalFractionFile : public testing::Test {
 protected:
  FloorSpec read(const std::string& text) {
    path_ = std::filesystem::temp_directory_path() / ("zb-nominal-" + std::to_string(getpid()) + ".json");
    std::ofstream(path_) << text;
    return read_floors_file(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(NominalFractionFile, ANumberSetsEveryProbeAndAnObjectSomeOfThem) {
  const FloorSpec all = read(R"({ "nominal_fraction": 0.6 })");
  EXPECT_EQ(all.nominal_fraction.size(), 6u);
  EXPECT_DOUBLE_EQ(all.nominal_fraction.at(Probe::routed), 0.6);
  const FloorSpec some = read(R"({ "nominal_fraction": { "gemm": 0.7, "p2p-rail": 0.4 } })");
  EXPECT_EQ(some.nominal_fraction, (std::map<Probe, double>{{Probe::gemm, 0.7}, {Probe::p2p_rail, 0.4}}));
}

TEST_F(NominalFractionFile, BadFractionsAndProbesAreNamed) {
  EXPECT_THAT([&] { static_cast<void>(read(R"({ "nominal_fraction": 1.5 })")); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("nominal_fraction")));
  EXPECT_THAT([&] { static_cast<void>(read(R"({ "nominal_fraction": { "gemmm": 0.5 } })")); },
              testing::ThrowsMessage<Error>(testing::AllOf(testing::HasSubstr("nominal_fraction.gemmm"),
                                                           testing::HasSubstr("unknown probe"))));
  EXPECT_THAT([&] { static_cast<void>(read(R"({ "nominal_fraction": { "gemm": -0.1 } })")); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("[0, 1]")));
}

}  // namespace
}  // namespace zb::qualify
