// The reports of `qualify --backend cuda` from synthetic measurements: the same JSON, HTML and console
// as the reference backend's, with the nominal floors and the figure below one named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/scenario_loader.hpp"
#include "core/qualify/nominal_floors.hpp"
#include "core/qualify/qualify_run.hpp"
#include "reports/qualify_report.hpp"

namespace zb::qualify {
namespace {

struct Synthetic {
  FloorSpec floors;
  QualifyResult result;
};

// One H200: a healthy 8192³ GEMM, a 16k attention figure below 0.35 × 989 TFLOP/s, and a small GEMM that
// is held to no nominal floor.
Synthetic one_slow_attention() {
  const Scenario s = load_scenario(std::filesystem::path(ZB_SOURCE_DIR) / "scenarios/one-h200.json");
  Synthetic out;
  apply_nominal_floors(out.floors, s.cluster, nominal_fractions(out.floors, true));
  const std::vector<Measurement> figures{{.probe = Probe::gemm,
                                          .subject = "node 0 GPU 0",
                                          .shape = "m=n=k=1024",
                                          .node = 0,
                                          .gpu = 0,
                                          .value = 250e12,
                                          .reaches_nominal = false},
                                         {.probe = Probe::gemm,
                                          .subject = "node 0 GPU 0",
                                          .shape = "m=n=k=8192",
                                          .node = 0,
                                          .gpu = 0,
                                          .value = 760e12},
                                         {.probe = Probe::attention,
                                          .subject = "node 0 GPU 0",
                                          .shape = "causal 16384 tokens, 32×128",
                                          .node = 0,
                                          .gpu = 0,
                                          .value = 200e12}};
  out.result.scenario = s.name;
  out.result.backend = "cuda";
  out.result.launch = "a single process (no launcher)";
  out.result.verdicts = evaluate(figures, out.floors);
  out.result.notes.push_back("measured on NVIDIA H200 (GPU 0 of this machine)");
  return out;
}

TEST(GpuQualifyReport, TheJsonNamesTheBackendTheNominalFloorsAndTheFailure) {
  const Synthetic x = one_slow_attention();
  const nlohmann::ordered_json json = reports::qualify_json(x.result, x.floors);
  EXPECT_EQ(json["schema"], "zeppelin-bench/qualify/1");
  EXPECT_EQ(json["backend"], "cuda");
  EXPECT_EQ(json["passed"], false);
  EXPECT_EQ(json["failures"], 1);
  EXPECT_DOUBLE_EQ(json["floors"]["nominal"]["gemm"]["floor"].get<double>(), 494.5e12);
  EXPECT_EQ(json["floors"]["nominal"]["attention"]["source"], "0.35 × nominal 989 TFLOP/s (dgx-h200, H200)");
  const auto& figures = json["figures"];
  ASSERT_EQ(figures.size(), 3u);
  EXPECT_EQ(figures[0]["reaches_nominal"], false);
  EXPECT_EQ(figures[0]["passed"], true);
  EXPECT_EQ(figures[1]["passed"], true);
  EXPECT_EQ(figures[2]["passed"], false);
  EXPECT_EQ(figures[2]["node"], 0);
  EXPECT_EQ(figures[2]["gpu"], 0);
  EXPECT_DOUBLE_EQ(figures[2]["floor"].get<double>(), 0.35 * 989e12);
  EXPECT_EQ(figures[2]["floor_source"], "0.35 × nominal 989 TFLOP/s (dgx-h200, H200)");
}

TEST(GpuQualifyReport, TheConsoleSaysNotQualifiedAndNamesTheGpu) {
  const std::string text = reports::qualify_console(one_slow_attention().result);
  EXPECT_THAT(text, testing::HasSubstr("backend cuda"));
  EXPECT_THAT(text, testing::HasSubstr("NOT QUALIFIED: 1 of 3 figures below their floors"));
  EXPECT_THAT(text, testing::HasSubstr("attention node 0 GPU 0: 200 TFLOP/s"));
  EXPECT_THAT(text, testing::HasSubstr("measured on NVIDIA H200"));
}

TEST(GpuQualifyReport, TheHtmlMarksTheFailingRow) {
  const std::string html = reports::qualify_html(one_slow_attention().result);
  EXPECT_THAT(html, testing::HasSubstr("Not qualified: 1 of 3 figures below their floors"));
  EXPECT_THAT(html, testing::HasSubstr("<tr class=\"fail\"><td>attention</td>"));
}

}  // namespace
}  // namespace zb::qualify
