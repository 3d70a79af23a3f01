// NIC byte counters and their sampler, on this machine's real loopback interface and on a copy of the
// sysfs layout of an InfiniBand host.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/nic/nic_counters.hpp"
#include "core/exec/nic/nic_sampler.hpp"

namespace zb::nic {
namespace {

namespace fs = std::filesystem;

// Sends `count` UDP datagrams of `size` bytes to a socket bound on 127.0.0.1 (and drains it).
void loopback_traffic(int count, std::size_t size) {
  const int rx = socket(AF_INET, SOCK_DGRAM, 0);
  const int tx = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(rx, 0);
  ASSERT_GE(tx, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::vector<char> buffer(size, 'z');
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(sendto(tx, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
              static_cast<ssize_t>(size));
    (void)recv(rx, buffer.data(), buffer.size(), 0);
  }
  close(tx);
  close(rx);
}

bool has_loopback_counters() {
  return fs::exists("/sys/class/net/lo/statistics/tx_bytes");
}

TEST(NicCounters, LoopbackCountersSeeTheBytesSentThroughIt) {
  if (!has_loopback_counters()) GTEST_SKIP() << "/sys/class/net/lo/statistics is not readable here";
  const std::vector<NicCounters> nics = resolve_nics({"lo"});
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0].scale, 1u);
  const ByteCounts before = read_counters(nics[0]);
  loopback_traffic(200, 8000);  // 1.6 MB of payload
  const ByteCounts after = read_counters(nics[0]);
  // Every datagram passes lo once each way (its headers on top); other processes may add traffic.
  EXPECT_GE(after.tx - before.tx, 200u * 8000u);
  EXPECT_GE(after.rx - before.rx, 200u * 8000u);
}

TEST(NicSampler, SeriesAndTotalsFollowTheCounters) {
  if (!has_loopback_counters()) GTEST_SKIP() << "/sys/class/net/lo/statistics is not readable here";
  const auto origin = NicSampler::Clock::now();
  NicSampler sampler(resolve_nics({"lo"}), std::chrono::microseconds(500), origin);
  sampler.start();
  loopback_traffic(300, 8000);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::vector<Sample> samples = sampler.stop();
  ASSERT_GE(samples.size(), 2u);
  const std::vector<LinkLoad> loads = link_loads(samples, 1, 25e9);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].name, "n1-nic0-tx");
  EXPECT_EQ(loads[1].name, "n1-nic0-rx");
  for (const LinkLoad& l : loads) {
    EXPECT_TRUE(l.measured);
    EXPECT_EQ(l.node, 1);
    EXPECT_EQ(l.bandwidth, 25e9);
    EXPECT_GE(l.bytes, 300.0 * 8000.0);
    EXPECT_GT(l.busy_seconds, 0);
    // The series integrates to the counters' difference, times strictly increase, the last rate is 0.
    double integral = 0;
    for (std::size_t i = 0; i + 1 < l.series.size(); ++i) {
      EXPECT_LT(l.series[i].t, l.series[i + 1].t);
      integral += l.series[i].bytes_per_second * (l.series[i + 1].t - l.series[i].t);
    }
    EXPECT_NEAR(integral, l.bytes, 1e-6 * l.bytes);
    EXPECT_EQ(l.series.back().bytes_per_second, 0);
    EXPECT_GE(l.series.front().t, 0);
  }
}

class FakeSysfs : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("zb-sysfs-" + std::to_string(getpid()));
    write("class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", "250\n");
    write("class/infiniband/mlx5_1/ports/1/counters/port_rcv_data", "1000\n");
    write("class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "7\n");
    write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "8\n");
    write("class/net/ib0/statistics/tx_bytes", "5\n");
    write("class/net/ib0/statistics/rx_bytes", "6\n");
    write("class/net/lo/statistics/tx_bytes", "1\n");
    write("class/net/lo/statistics/rx_bytes", "1\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  fs::path root_;
};

TEST_F(FakeSysfs, InfinibandPortCountersAreFourByteWords) {
  const std::vector<NicCounters> nics = resolve_nics({"mlx5_1:1", "mlx5_0"}, root_);
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[0].scale, 4u);
  const ByteCounts c = read_counters(nics[0]);
  EXPECT_EQ(c.tx, 1000u);
  EXPECT_EQ(c.rx, 4000u);
  EXPECT_EQ(read_counters(nics[1]).tx, 28u);  // "mlx5_0" is port 1
}

TEST_F(FakeSysfs, DefaultNamesAreTheInfinibandPortsInOrder) {
  EXPECT_THAT(default_nic_names(root_), testing::ElementsAre("mlx5_0:1", "mlx5_1:1"));
  fs::remove_all(root_ / "class/infiniband");
  EXPECT_THAT(default_nic_names(root_), testing::ElementsAre("ib0"));  // no IB: netdevs but lo
}

TEST_F(FakeSysfs, AnUnknownNicIsBadInputNamingThePathsTried) {
  try {
    (void)resolve_nics({"mlx5_9"}, root_);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_THAT(e.what(), testing::HasSubstr("mlx5_9"));
    EXPECT_THAT(e.what(), testing::HasSubstr("port_xmit_data"));
    EXPECT_THAT(e.what(), testing::HasSubstr("tx_bytes"));
  }
}

TEST_F(FakeSysfs, ACounterThatStopsBeingANumberIsARuntimeError) {
  const std::vector<NicCounters> nics = resolve_nics({"ib0"}, root_);
  write("class/net/ib0/statistics/tx_bytes", "gone\n");
  try {
    (void)read_counters(nics[0]);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    EXPECT_THAT(e.what(), testing::HasSubstr("ib0"));
  }
}

TEST(NicList, SplitsOnCommasAndDropsEmptyItems) {
  EXPECT_THAT(split_nic_list("rail0,,rail1,"), testing::ElementsAre("rail0", "rail1"));
  EXPECT_TRUE(split_nic_list("").empty());
}

}  // namespace
}  // namespace zb::nic
