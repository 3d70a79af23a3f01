// CUPTI's activity buffers walked into plain records (core/exec/cuda/cupti_buffer.hpp). The buffers are
// built here from the toolkit's own record structs, laid end to end as CUPTI lays them (each struct's
// size is a multiple of its 8-byte alignment), and walked by libcupti itself, which needs no GPU. A
// build without CUPTI has no walk to test: each test then skips, saying so.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#ifdef ZEPPELIN_HAVE_CUPTI
#include <cupti.h>

#include "core/exec/cuda/cupti_buffer.hpp"
#endif

namespace zb::cuda {
namespace {

#ifdef ZEPPELIN_HAVE_CUPTI

// Records one after the other in an 8-byte aligned buffer, as CUPTI hands them over.
class ActivityBuffer {
 public:
  template <typename Record>
  void append(const Record& record) {
    static_assert(sizeof(Record) % 8 == 0, "CUPTI records keep 8-byte alignment");
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof(Record) / sizeof(std::uint64_t));
    std::memcpy(reinterpret_cast<std::uint8_t*>(bytes_.data()) + at * sizeof(std::uint64_t), &record,
                sizeof(Record));
  }
  ParsedActivity walk() {
    return parse_activity_buffer(reinterpret_cast<std::uint8_t*>(bytes_.data()),
                                 bytes_.size() * sizeof(std::uint64_t));
  }

 private:
  std::vector<std::uint64_t> bytes_;  // 8-byte words: the buffer's alignment
};

// Every field of a record, to compare it with the one expected as a whole.
auto fields(const CuptiRecord& r) {
  return std::tie(r.kind, r.name, r.start_ns, r.end_ns, r.device, r.stream, r.correlation, r.bytes,
                  r.copy_kind);
}

// A record of `Kind` on device 3 with the fields every kind has.
template <typename Record>
Record timed(CUpti_ActivityKind kind, std::uint64_t start, std::uint64_t end, std::uint32_t stream,
             std::uint32_t correlation) {
  Record r{};
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.deviceId = 3;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

CUpti_ActivityKernel10 kernel(const char* name, std::uint64_t start, std::uint32_t stream,
                              std::uint32_t correlation) {
  auto k = timed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, start, start + 500, stream,
                                         correlation);
  k.name = name;
  return k;
}

TEST(CuptiBuffer, KernelsCopiesAndMemsetsBecomePlainRecordsAndOtherKindsAreSkipped) {
  ActivityBuffer buffer;
  buffer.append(kernel("_Z10attn_blockPKfPf", 1000, 7, 41));
  CUpti_ActivityOverhead3 overhead{};  // CUPTI's own bookkeeping: a kind the trace does not draw
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  buffer.append(overhead);
  auto copy = timed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, 2000, 2100, 8, 42);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  copy.bytes = 4096;
  buffer.append(copy);
  auto set = timed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, 2200, 2210, 8, 43);
  set.bytes = 256;
  buffer.append(set);
  buffer.append(kernel("_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", 3000, 9, 44));
  auto peer = timed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2, 4000, 4800, 9, 0);
  peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  peer.bytes = 1 << 20;
  buffer.append(peer);

  const ParsedActivity parsed = buffer.walk();
  EXPECT_EQ(parsed.stopped, "");
  EXPECT_EQ(parsed.other_kinds, 1);
  ASSERT_EQ(parsed.records.size(), 5u);

  // kind, name, start, end, device, stream, correlation, bytes, copy kind
  EXPECT_EQ(fields(parsed.records[0]), fields({DeviceActivityKind::kernel, "attn_block(float const*, float*)",
                                               1000, 1500, 3, 7, 41, 0, ""}));
  EXPECT_EQ(fields(parsed.records[1]),
            fields({DeviceActivityKind::memcpy, "memcpy DtoD", 2000, 2100, 3, 8, 42, 4096, "DtoD"}));
  EXPECT_EQ(fields(parsed.records[2]),
            fields({DeviceActivityKind::memset, "memset", 2200, 2210, 3, 8, 43, 256, ""}));
  EXPECT_EQ(fields(parsed.records[3]), fields({DeviceActivityKind::nccl_kernel,
                                               "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
                                               3000, 3500, 3, 9, 44, 0, ""}));
  EXPECT_EQ(fields(parsed.records[4]),
            fields({DeviceActivityKind::memcpy, "memcpy PtoP", 4000, 4800, 3, 9, 0, 1 << 20, "PtoP"}));
}

TEST(CuptiBuffer, ARecordCuptiCannotReadEndsTheWalkAndKeepsWhatCameBefore) {
  ActivityBuffer buffer;
  buffer.append(kernel("gemm_bf16", 1000, 7, 1));
  std::uint64_t unknown[4] = {};
  const std::uint32_t no_such_kind = 0x7fff0000;
  std::memcpy(unknown, &no_such_kind, sizeof no_such_kind);
  buffer.append(unknown);
  buffer.append(kernel("gemm_bf16", 2000, 7, 2));  // after the unreadable record: out of reach
  const ParsedActivity parsed = buffer.walk();
  ASSERT_EQ(parsed.records.size(), 1u);
  EXPECT_EQ(parsed.records[0].name, "gemm_bf16");  // a C name stays as it is
  EXPECT_NE(parsed.stopped.find("cuptiActivityGetNextRecord"), std::string::npos) << parsed.stopped;
  EXPECT_NE(parsed.stopped.find("after 1 records"), std::string::npos) << parsed.stopped;
}

#else

TEST(CuptiBuffer, NeedsCupti) {
  GTEST_SKIP() << "this build found no CUPTI (CUDA::cupti): the activity buffer walk is not built";
}

#endif

}  // namespace
}  // namespace zb::cuda
