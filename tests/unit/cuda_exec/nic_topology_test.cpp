// The GPU → NIC map of a cuda run (core/exec/cuda/nic_topology.hpp) against a fake sysfs tree shaped
// like an HGX board: each PCIe switch holds one GPU and one InfiniBand NIC, and the NICs' names are not
// in the GPUs' order, so only the topology gives the right rails. Then what a node's first rank samples
// (node_nics.hpp): the rails' port counters, or nothing and a note where the node has no usable
// InfiniBand devices, and the sampled loads moved onto the trace axis.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include <fstream>

#include "core/common/error.hpp"
#include "core/exec/cuda/nic_topology.hpp"
#include "core/exec/cuda/node_nics.hpp"

namespace zb::cuda {
namespace {

namespace fs = std::filesystem;

class FakeSysfs {
 public:
  FakeSysfs()
      : root_(fs::temp_directory_path() / ("zb-nic-topology-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus/pci/devices");
    fs::create_directories(root_ / "class/infiniband");
  }
  ~FakeSysfs() { fs::remove_all(root_); }
  // A device at /sys/devices/<tree>, its bus id the last component.
  void gpu(const std::string& tree) {
    fs::create_directories(root_ / "devices" / tree);
    fs::create_directory_symlink(fs::path("../../../devices") / tree,
                                 root_ / "bus/pci/devices" / fs::path(tree).filename());
  }
  void nic(const std::string& name, const std::string& tree) {
    fs::create_directories(root_ / "devices" / tree / "infiniband" / name);
    fs::create_directories(root_ / "class/infiniband" / name);
    fs::create_directory_symlink(fs::path("../../../devices") / tree,
                                 root_ / "class/infiniband" / name / "device");
    const fs::path counters = root_ / "class/infiniband" / name / "ports/1/counters";
    fs::create_directories(counters);
    std::ofstream(counters / "port_xmit_data") << "1000\n";
    std::ofstream(counters / "port_rcv_data") << "2000\n";
  }
  [[nodiscard]] const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

// Switch A (0000:01) holds GPU 0000:1b:00.0 and mlx5_3; switch B (0000:02) holds GPU 0000:2c:00.0 and mlx5_0.
void hgx_pair(FakeSysfs& sys) {
  sys.gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:1b:00.0");
  sys.nic("mlx5_3", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:1c:00.0");
  sys.gpu("pci0000:00/0000:00:02.0/0000:02:00.0/0000:2c:00.0");
  sys.nic("mlx5_0", "pci0000:00/0000:00:02.0/0000:02:00.0/0000:2d:00.0");
}

TEST(NicTopology, EachRailIsTheNicUnderItsGpusPcieSwitch) {
  FakeSysfs sys;
  hgx_pair(sys);
  // CUDA's spelling: upper-case hex, 8-digit domain.
  EXPECT_EQ(rail_nics({"00000000:1B:00.0", "00000000:2C:00.0"}, 2, sys.root()),
            (std::vector<std::string>{"mlx5_3", "mlx5_0"}));
  // One NIC per node: the first GPU's.
  EXPECT_EQ(rail_nics({"0000:1b:00.0", "0000:2c:00.0"}, 1, sys.root()), (std::vector<std::string>{"mlx5_3"}));
}

TEST(NicTopology, DistanceCountsHopsThroughTheDeepestCommonAncestor) {
  EXPECT_EQ(pci_distance("/s/devices/pci0/a/b/gpu", "/s/devices/pci0/a/b/nic"), 2);
  EXPECT_EQ(pci_distance("/s/devices/pci0/a/b/gpu", "/s/devices/pci0/c/d/nic"), 6);
  EXPECT_EQ(pci_distance("/s/devices/pci0/a", "/s/devices/pci0/a"), 0);
}

TEST(NicTopology, AMachineWithoutTheClustersNicsIsRefusedNamingWhatToDo) {
  FakeSysfs sys;
  hgx_pair(sys);
  try {
    (void)rail_nics({"0000:1b:00.0", "0000:2c:00.0"}, 4, sys.root());
    ADD_FAILURE() << "4 NICs per node accepted on a node with 2";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("lists 2 InfiniBand devices"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ZB_NICS"), std::string::npos) << e.what();
  }
}

TEST(NicTopology, TwoRailsClosestToOneNicAreRefused) {
  FakeSysfs sys;
  sys.gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:1b:00.0");
  sys.gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:1e:00.0");
  sys.nic("mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:1c:00.0");
  sys.nic("mlx5_1", "pci0000:80/0000:80:01.0/0000:81:00.0");
  try {
    (void)rail_nics({"0000:1b:00.0", "0000:1e:00.0"}, 2, sys.root());
    ADD_FAILURE() << "two rails on one NIC accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is mlx5_0, which an earlier rail already has"), std::string::npos)
        << e.what();
  }
}

TEST(NicTopology, AGpuMissingFromSysfsIsNamed) {
  FakeSysfs sys;
  hgx_pair(sys);
  try {
    (void)gpu_pci_path("0000:99:00.0", sys.root());
    ADD_FAILURE() << "a missing GPU resolved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 0000:99:00.0"), std::string::npos) << e.what();
  }
}

TEST(NodeNics, EachRailIsSampledFromItsNicsPortCountersInWordsOfFourBytes) {
  FakeSysfs sys;
  hgx_pair(sys);
  const NodeNics nics = node_nics({}, {"00000000:1B:00.0", "00000000:2C:00.0"}, 2, sys.root());
  EXPECT_EQ(nics.note, "");
  ASSERT_EQ(nics.counters.size(), 2u);
  EXPECT_EQ(nics.counters[0].name, "mlx5_3");
  EXPECT_EQ(nics.counters[1].name, "mlx5_0");
  EXPECT_EQ(nics.counters[0].scale, 4u);
  EXPECT_EQ(nic::read_counters(nics.counters[0]).tx, 4000u);
}

TEST(NodeNics, ANodeWithoutInfinibandSamplesNothingAndSaysWhyWithoutFailing) {
  FakeSysfs sys;
  sys.gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:1b:00.0");
  const NodeNics nics = node_nics({}, {"0000:1b:00.0"}, 1, sys.root());
  EXPECT_TRUE(nics.counters.empty());
  EXPECT_NE(nics.note.find("no measured NIC loads: no InfiniBand device under"), std::string::npos)
      << nics.note;
  EXPECT_NE(nics.note.find("ZB_NICS"), std::string::npos) << nics.note;
}

TEST(NodeNics, ANodeWhoseNicsDoNotFitTheClusterSamplesNothingAndSaysWhy) {
  FakeSysfs sys;
  hgx_pair(sys);
  const NodeNics nics = node_nics({}, {"0000:1b:00.0", "0000:2c:00.0"}, 4, sys.root());
  EXPECT_TRUE(nics.counters.empty());
  EXPECT_NE(nics.note.find("lists 2 InfiniBand devices"), std::string::npos) << nics.note;
}

TEST(NodeNics, NamedNicsAreSampledAsGivenAndATypoIsBadInput) {
  FakeSysfs sys;
  hgx_pair(sys);
  const NodeNics nics = node_nics({"mlx5_0", "mlx5_3"}, {}, 2, sys.root());
  ASSERT_EQ(nics.counters.size(), 2u);
  EXPECT_EQ(nics.counters[0].name, "mlx5_0");
  try {
    (void)node_nics({"mlx5_9"}, {}, 1, sys.root());
    ADD_FAILURE() << "a NIC this host lacks was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("mlx5_9"), std::string::npos) << e.what();
  }
}

TEST(NodeNics, SampledLoadsStartAtTheSampledForwardPassOnTheTraceAxis) {
  LinkLoad load;
  load.series = {{0.10, 0.0}, {0.20, 5e9}, {0.30, 7e9}, {0.40, 0.0}};
  load.bytes = 1.2e9;
  const std::vector<LinkLoad> shifted = shifted_loads({load}, 0.25);
  ASSERT_EQ(shifted.size(), 1u);
  const std::vector<LoadPoint>& s = shifted[0].series;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].t, 0.0);  // the rate in force when the pass started
  EXPECT_EQ(s[0].bytes_per_second, 5e9);
  EXPECT_NEAR(s[1].t, 0.05, 1e-12);
  EXPECT_EQ(s[1].bytes_per_second, 7e9);
  EXPECT_NEAR(s[2].t, 0.15, 1e-12);
  EXPECT_EQ(s[2].bytes_per_second, 0.0);
  EXPECT_EQ(shifted[0].bytes, 1.2e9);
}

}  // namespace
}  // namespace zb::cuda
