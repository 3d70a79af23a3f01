// How qualify decides that a GPU or a link is too slow: relative to its peers, or to a floors file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.hpp"
#include "core/qualify/floors.hpp"

namespace zb::qualify {
namespace {

Measurement rail(int nic, double bytes_per_second, const std::string& shape = "16 MiB") {
  return {.probe = Probe::p2p_rail,
          .subject = "node 0 GPU " + std::to_string(nic) + " (NIC " + std::to_string(nic) + ")",
          .shape = shape,
          .node = 0,
          .gpu = nic,
          .peer_node = 1,
          .peer_gpu = nic,
          .nic = nic,
          .value = bytes_per_second,
          .latency = 20e-6};
}

TEST(Floors, TheOneSlowRailAmongItsPeersFails) {
  const std::vector<Verdict> v =
      evaluate({rail(0, 1e9), rail(1, 1.1e9), rail(2, 0.1e9), rail(3, 0.9e9)}, FloorSpec{});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(v[0].passed);
  EXPECT_TRUE(v[1].passed);
  EXPECT_FALSE(v[2].passed);
  EXPECT_TRUE(v[3].passed);
  EXPECT_DOUBLE_EQ(v[2].floor, 0.5 * 0.95e9);  // half the median of the four
  EXPECT_THAT(v[2].floor_source, testing::HasSubstr("median of p2p-rail (16 MiB, 4 figures)"));
}

TEST(Floors, EqualPeersAllPassWhateverTheirSpeed) {
  for (const double speed : {1e6, 1e9, 1e11}) {
    const std::vector<Verdict> v = evaluate({rail(0, speed), rail(1, speed), rail(2, speed)}, FloorSpec{});
    for (const Verdict& one : v) EXPECT_TRUE(one.passed) << speed;
  }
}

TEST(Floors, ClassesAreOneProbeAtOneShape) {
  // A small transfer is slower than a large one on every link: it must not fail against the large ones.
  const std::vector<Verdict> v =
      evaluate({rail(0, 1e9), rail(1, 1e9), rail(0, 1e8, "1 MiB"), rail(1, 1e8, "1 MiB")}, FloorSpec{});
  for (const Verdict& one : v) EXPECT_TRUE(one.passed);
}

TEST(Floors, RoutedIsHeldToTheDirectRails) {
  Measurement routed{.probe = Probe::routed,
                     .subject = "node 0 GPU 0 → node 1 GPU 0 over 4 NICs",
                     .shape = "16 MiB",
                     .value = 0.3e9};
  std::vector<Verdict> v = evaluate({rail(0, 1e9), rail(1, 1e9), routed}, FloorSpec{});
  EXPECT_FALSE(v[2].passed);
  routed.value = 2e9;
  v = evaluate({rail(0, 1e9), rail(1, 1e9), routed}, FloorSpec{});
  EXPECT_TRUE(v[2].passed);
  EXPECT_DOUBLE_EQ(v[2].floor, 0.5e9);
}

class FloorsFile : public testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    path_ = std::filesystem::temp_directory_path() / ("zb-floors-" + std::to_string(getpid()) + ".json");
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(FloorsFile, AbsoluteFloorsAndLatencyApply) {
  const FloorSpec spec = read_floors_file(write(R"({ // a qualified cluster
    "relative_to_median": 0.8, "p2p-rail": "2 GB/s", "max_latency": "10 us" })"));
  EXPECT_DOUBLE_EQ(spec.relative, 0.8);
  EXPECT_DOUBLE_EQ(spec.absolute.at(Probe::p2p_rail), 2e9);
  const std::vector<Verdict> v = evaluate({rail(0, 3e9), rail(1, 1.5e9)}, spec);
  EXPECT_FALSE(v[0].passed);  // latency 20 µs above 10 µs
  EXPECT_THAT(v[0].floor_source, testing::HasSubstr("latency"));
  EXPECT_FALSE(v[1].passed);  // below 2 GB/s
  EXPECT_DOUBLE_EQ(v[1].floor, 2e9);
  EXPECT_THAT(v[1].floor_source, testing::HasSubstr("floors file"));
}

TEST_F(FloorsFile, BadKeysAndUnitsAreBadInputNamingTheKey) {
  try {
    (void)read_floors_file(write(R"({"p2p-rial": "2 GB/s", "gemm": "2 GB/s", "relative_to_median": 1.5})"));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string what = e.what();
    EXPECT_THAT(what, testing::HasSubstr("p2p-rial"));
    EXPECT_THAT(what, testing::HasSubstr("gemm"));
    EXPECT_THAT(what, testing::HasSubstr("relative_to_median"));
  }
}

TEST(Measurements, SurviveTheirJsonRoundTrip) {
  const Measurement m = rail(2, 1.25e9);
  const Measurement back = measurement_from_json(nlohmann::json::parse(to_json(m).dump()));
  EXPECT_EQ(back.probe, m.probe);
  EXPECT_EQ(back.subject, m.subject);
  EXPECT_EQ(back.nic, 2);
  EXPECT_DOUBLE_EQ(back.value, m.value);
  EXPECT_DOUBLE_EQ(back.latency, m.latency);
}

}  // namespace
}  // namespace zb::qualify
