// CUPTI's records on the cuda backend's trace axis (core/exec/cuda/cupti_records.hpp), without a GPU:
// kernel names made readable and NCCL's recognised, CUPTI's clock mapped onto the host clock through two
// readings, and a pass's records chosen by its host window and placed relative to its start.
#include <gtest/gtest.h>

#include "core/exec/cuda/cupti_records.hpp"

namespace zb::cuda {
namespace {

TEST(CuptiRecords, KernelNamesAreDemangledAndNcclsAreRecognised) {
  EXPECT_EQ(readable_kernel_name("_Z10attn_blockPKfPf"), "attn_block(float const*, float*)");
  EXPECT_EQ(readable_kernel_name("sm90_xmma_gemm_bf16bf16"), "sm90_xmma_gemm_bf16bf16");
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_FALSE(is_nccl_kernel("attn_block(float const*, float*)"));
  EXPECT_FALSE(is_nccl_kernel("my_ncclDevKernel_copy"));  // a prefix, not a substring
}

TEST(CuptiRecords, TheClockMapFollowsOffsetAndDriftBetweenItsTwoReadings) {
  // The host clock 4 ms ahead of CUPTI's and running 2 ns per µs faster.
  const ClockMap clock({1'000'000, 5'000'000}, {2'000'000, 6'002'000});
  EXPECT_DOUBLE_EQ(clock.host_ns(1'000'000), 5'000'000);
  EXPECT_DOUBLE_EQ(clock.host_ns(1'500'000), 5'501'000);
  EXPECT_DOUBLE_EQ(clock.host_ns(2'000'000), 6'002'000);
  const ClockMap offset_only({1'000, 9'000}, {1'000, 9'000});
  EXPECT_DOUBLE_EQ(offset_only.host_ns(1'250), 9'250);
}

CuptiRecord record(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t stream) {
  CuptiRecord r;
  r.name = name;
  r.start_ns = start;
  r.end_ns = end;
  r.stream = stream;
  r.device = 2;
  r.correlation = 77;
  return r;
}

TEST(CuptiRecords, APassTakesTheRecordsThatStartedInItsHostWindowOnTheTraceAxis) {
  const ClockMap clock({10'000, 1'000'000}, {20'000, 1'010'000});  // CUPTI = host − 990000 ns
  PassTimes times;
  times.host_start_ns = 1'002'000;  // CUPTI 12000
  times.host_end_ns = 1'005'000;    // CUPTI 15000
  std::vector<CuptiRecord> records = {
      record("barrier allreduce", 11'000, 11'900, 5),  // before the pass: the barrier's
      record("attn", 12'500, 13'500, 7),
      record("untimed", 0, 0, 7),  // CUPTI could not time it
      record("send", 14'000, 15'400, 8),
      record("next barrier", 15'100, 15'200, 5),  // after the pass ended on the host
  };
  records[3].kind = DeviceActivityKind::nccl_kernel;
  records[3].bytes = 0;
  RankRecord into;
  add_pass_activity(records, clock, 4, Pass::bwd, times, 0.25, into);
  ASSERT_EQ(into.activity.size(), 2u);
  const DeviceActivity& attn = into.activity[0];
  EXPECT_EQ(attn.name, "attn");
  EXPECT_EQ(attn.rank, 4);
  EXPECT_EQ(attn.pass, Pass::bwd);
  EXPECT_EQ(attn.cuda_stream, 7u);
  EXPECT_EQ(attn.device, 2);
  EXPECT_EQ(attn.correlation, 77u);
  EXPECT_NEAR(attn.start, 0.25 + 500e-9, 1e-15);  // 500 ns after the pass start, offset by 0.25 s
  EXPECT_NEAR(attn.end, 0.25 + 1500e-9, 1e-15);
  const DeviceActivity& send = into.activity[1];
  EXPECT_EQ(send.kind, DeviceActivityKind::nccl_kernel);
  EXPECT_NEAR(send.end, 0.25 + 3400e-9, 1e-15);  // it may end after the host's end reading
}

}  // namespace
}  // namespace zb::cuda
