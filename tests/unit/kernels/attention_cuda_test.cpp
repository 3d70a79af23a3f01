// GPU kernel tests: every standard case of kernels/gpucheck against the float64 CPU oracle, the GPU
// LSE merge, pack/unpack bit for bit, and launcher argument errors. Inputs are fresh random values each
// run (the seed is printed so a failure can be replayed with ZB_KERNEL_TEST_SEED). Without a usable GPU
// the device tests skip and say why; the argument checks run everywhere.
#include <gtest/gtest.h>
#include <ostream>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>

#include "kernels/cuda_attention.hpp"
#include "kernels/gpucheck/attention_check.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels {
namespace {

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    if (const char* fixed = std::getenv("ZB_KERNEL_TEST_SEED"))
      return static_cast<std::uint64_t>(std::strtoull(fixed, nullptr, 10));
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return seed;
}

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status available = cuda::device_available();
    if (!available) GTEST_SKIP() << "GPU tests skipped: " << available.message();
    RecordProperty("seed", std::to_string(test_seed()));
  }
};

class CudaAttentionCases : public CudaKernels,
                           public ::testing::WithParamInterface<gpucheck::AttentionCase> {};

TEST_P(CudaAttentionCases, MatchesFloat64Oracle) {
  const gpucheck::CheckResult result = gpucheck::check_attention(GetParam(), test_seed());
  EXPECT_TRUE(result.passed) << GetParam().name << ": " << result.detail << " (seed " << test_seed()
                             << ", replay with ZB_KERNEL_TEST_SEED)";
  // Worst element's error as a fraction of its per-element bound (attention_check.hpp).
  EXPECT_LE(result.output_error, 1.0);
  EXPECT_LE(result.lse_error, 1.0);
}

}  // namespace
}  // namespace zb::kernels

// Printed in test listings instead of a byte dump, so ctest names stay readable.
namespace zb::kernels::gpucheck {
inline void PrintTo(const AttentionCase& c, std::ostream* os) {
  *os << c.name;
}
}  // namespace zb::kernels::gpucheck

namespace zb::kernels {
namespace {

std::string case_name(const ::testing::TestParamInfo<gpucheck::AttentionCase>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Standard, CudaAttentionCases, ::testing::ValuesIn(gpucheck::standard_cases()),
                         case_name);

TEST_F(CudaKernels, MergeOfSplitKeysMatchesUnsplit) {
  for (int head_dim : {64, 128}) {
    const gpucheck::CheckResult result = gpucheck::check_merge(head_dim, test_seed() + 1);
    EXPECT_TRUE(result.passed) << "d" << head_dim << ": " << result.detail << " (seed " << test_seed() << ")";
  }
}

TEST_F(CudaKernels, MergeWithEmptySidesMatchesCpu) {
  const gpucheck::CheckResult result = gpucheck::check_merge_empty_sides(test_seed() + 3);
  EXPECT_TRUE(result.passed) << result.detail << " (seed " << test_seed() << ")";
}

TEST_F(CudaKernels, PackUnpackRoundTripIsBitExact) {
  const gpucheck::CheckResult result = gpucheck::check_pack_round_trip(test_seed() + 2);
  EXPECT_TRUE(result.passed) << result.detail << " (seed " << test_seed() << ")";
}

// Argument checks happen before any CUDA call, so they run with or without a GPU.
TEST(CudaLaunchers, RejectBadArgumentsByName) {
  cuda::AttentionSchedule schedule;
  const AttentionShape d32{4, 4, 32, 10, 10, 10};
  const std::vector<AttentionBlockDesc> blocks{{0, 10, 0, 10, 0, 0, AttentionMask::causal, 0}};
  EXPECT_NE(schedule.build(d32, blocks).message().find("head_dim = 32"), std::string::npos);
  const AttentionShape bad_gqa{6, 4, 64, 10, 10, 10};
  EXPECT_NE(schedule.build(bad_gqa, blocks).message().find("kv_heads"), std::string::npos);
  const std::vector<AttentionBlockDesc> outside{{5, 10, 0, 10, 0, 0, AttentionMask::causal, 0}};
  EXPECT_NE(schedule.build({4, 4, 64, 10, 10, 10}, outside).message().find("blocks[0].q rows"),
            std::string::npos);
  // An empty schedule launches nothing and succeeds whatever the tensors are.
  EXPECT_TRUE(cuda::attention_forward(schedule, {}, nullptr).ok());
  EXPECT_NE(cuda::merge_partials(-1, 4, 64, nullptr, nullptr, nullptr, nullptr, nullptr)
                .message()
                .find("rows = -1"),
            std::string::npos);
  cuda::RowCopySchedule copies;
  const std::vector<RowRange> overlapping{{0, 4}, {2, 4}};
  EXPECT_NE(copies.build(overlapping, 16, 10, true).message().find("overlap"), std::string::npos);
}

}  // namespace
}  // namespace zb::kernels
