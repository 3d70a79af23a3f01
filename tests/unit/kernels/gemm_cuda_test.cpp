// cuBLASLt GEMM (kernels/cuda_gemm.hpp) against a float64 loop, every transpose and accumulate
// combination; skips without a GPU. Argument errors are checked before any CUDA call, so they run
// everywhere.
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda_attention.hpp"
#include "kernels/cuda_gemm.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels {
namespace {

TEST(CublasLtGemm, MatchesFloat64ForEveryLayout) {
  const Status available = cuda::device_available();
  if (!available) GTEST_SKIP() << "GPU tests skipped: " << available.message();
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool accumulate : {false, true}) {
        const auto r = gpucheck::check_gemm(129, 77, 200, cuda::ElementType::bf16, ta, tb, accumulate, 11);
        EXPECT_TRUE(r.passed) << "ta " << ta << " tb " << tb << " accumulate " << accumulate << ": "
                              << r.detail;
      }
  const auto f16 = gpucheck::check_gemm(64, 256, 512, cuda::ElementType::f16, false, false, false, 12);
  EXPECT_TRUE(f16.passed) << f16.detail;
}

TEST(CublasLtGemm, RejectsBadArgumentsByName) {
  cuda::GemmPlan plan;
  EXPECT_NE(plan.build(0, 4, 4, cuda::ElementType::bf16, false, false, 0).message().find("m = 0"),
            std::string::npos);
  EXPECT_NE(plan.build(4, 4, 4, cuda::ElementType::f32, false, false, 0).message().find("bf16 or f16"),
            std::string::npos);
  EXPECT_NE(cuda::gemm(plan, nullptr, nullptr, nullptr, nullptr, false, nullptr).message().find("not built"),
            std::string::npos);
  EXPECT_EQ(plan.flops(), 0.0);
}

}  // namespace
}  // namespace zb::kernels
