// The GPU → NIC map of a cuda run (core/exec/cuda/nic_topology.hpp) against a fake sysfs tree shaped
// like an HGX board: each PCIe switch holds one GPU and one InfiniBand NIC, and the NICs' names are not
// in the GPUs' order, so only the topology gives the right rails.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include <fstream>

#include "core/common/error.hpp"
#include "core/exec/cuda/nic_topology.hpp"

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

}  // namespace
}  // namespace zb::cuda
