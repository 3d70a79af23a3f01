// cuDNN SDPA (kernels/cuda_sdpa.hpp): every case of kernels/gpucheck/sdpa_cases.cpp forward and backward
// against the float64 oracle with per-element tolerances; they skip, with cudnn_sdpa_available's reason,
// where no GPU or cuDNN works. Argument errors are reported before any cuDNN or CUDA call, so those tests
// run everywhere.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>

#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels::gpucheck {
inline void PrintTo(const SdpaCase& c, std::ostream* os) {
  *os << c.name;
}
}  // namespace zb::kernels::gpucheck

namespace zb::kernels {
namespace {

constexpr std::uint64_t kSeed = 2024;

class CudnnSdpaCases : public ::testing::TestWithParam<gpucheck::SdpaCase> {
 protected:
  void SetUp() override {
    const Status available = cuda::cudnn_sdpa_available();
    if (!available) GTEST_SKIP() << "cuDNN SDPA tests skipped: " << available.message();
  }
};

TEST_P(CudnnSdpaCases, ForwardMatchesFloat64Oracle) {
  const gpucheck::CheckResult r = gpucheck::check_sdpa_forward(GetParam(), kSeed);
  EXPECT_TRUE(r.passed) << GetParam().name << ": " << r.detail;
}

TEST_P(CudnnSdpaCases, BackwardAccumulatesLikeFloat64Oracle) {
  const gpucheck::CheckResult r = gpucheck::check_sdpa_backward(GetParam(), kSeed + 1);
  EXPECT_TRUE(r.passed) << GetParam().name << ": " << r.detail;
}

std::string case_name(const ::testing::TestParamInfo<gpucheck::SdpaCase>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Standard, CudnnSdpaCases, ::testing::ValuesIn(gpucheck::sdpa_standard_cases()),
                         case_name);

TEST(CudnnSdpa, LongCausalOnSampledRows) {
  const Status available = cuda::cudnn_sdpa_available();
  if (!available) GTEST_SKIP() << "cuDNN SDPA tests skipped: " << available.message();
  const gpucheck::CheckResult r = gpucheck::check_sdpa_long_causal(8192, 4, 1, 128, 16, kSeed);
  EXPECT_TRUE(r.passed) << r.detail;
}

TEST(CudnnSdpa, RejectsBadArgumentsByName) {
  cuda::SdpaPlan plan;
  const AttentionShape shape{4, 4, 64, 10, 10, 10};
  const std::vector<AttentionBlockDesc> blocks{{0, 10, 0, 10, 0, 0, AttentionMask::causal, 0}};
  EXPECT_NE(plan.build(shape, blocks, cuda::ElementType::f32, false).message().find("bf16 or f16"),
            std::string::npos);
  const std::vector<AttentionBlockDesc> outside{{5, 10, 0, 10, 0, 0, AttentionMask::causal, 0}};
  const Status bad = plan.build(shape, outside, cuda::ElementType::bf16, false);
  EXPECT_NE(bad.message().find("SdpaPlan::build: blocks[0].q rows"), std::string::npos) << bad.message();
  EXPECT_NE(
      plan.build({4, 3, 64, 10, 10, 10}, blocks, cuda::ElementType::bf16, true).message().find("kv_heads"),
      std::string::npos);
  EXPECT_NE(plan.build({4, 4, 60, 10, 10, 10}, blocks, cuda::ElementType::bf16, false)
                .message()
                .find("head_dim = 60"),
            std::string::npos);
  // An unbuilt plan is refused by name, forward and backward, before any cuDNN call.
  EXPECT_NE(cuda::sdpa_forward(plan, {}, nullptr).message().find("sdpa_forward: the plan was not built"),
            std::string::npos);
  EXPECT_NE(cuda::sdpa_backward(plan, {}, nullptr).message().find("sdpa_backward: the plan was not built"),
            std::string::npos);
  EXPECT_EQ(plan.workspace_bytes(), 0u);
}

TEST(CudnnSdpa, AvailabilityExplainsItself) {
  const Status available = cuda::cudnn_sdpa_available();
  if (available) GTEST_SKIP() << "cuDNN SDPA is available here: nothing to explain";
  EXPECT_FALSE(available.message().empty());
}

}  // namespace
}  // namespace zb::kernels
