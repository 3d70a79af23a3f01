// The versions a cuda run writes into its provenance are decoded from the integers the libraries return
// at run time, each by the encoding its header documents (core/exec/cuda/runtime_versions.hpp). The
// examples are the toolkit's own constants (CUDART_VERSION, NCCL_VERSION_CODE, CUDNN_VERSION,
// CUBLAS_VERSION, CUPTI_API_VERSION) and the older encodings' documented values.
#include <gtest/gtest.h>

#include "core/exec/cuda/runtime_versions.hpp"

namespace zb::cuda {
namespace {

TEST(RuntimeVersions, CudaDriverAndRuntimeAreThousandsMajorTensMinor) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda_version_text(12090), "12.9");
  EXPECT_EQ(cuda_version_text(11040), "11.4");
  // cudaDriverGetVersion answers 0 when no driver is installed.
  EXPECT_EQ(cuda_version_text(0), "unknown (0)");
}

TEST(RuntimeVersions, NcclUsesTenThousandsFromTwoNineAndThousandsBefore) {
  EXPECT_EQ(nccl_version_text(22703), "2.27.3");
  EXPECT_EQ(nccl_version_text(22809), "2.28.9");  // this toolkit's NCCL_VERSION_CODE
  EXPECT_EQ(nccl_version_text(21805), "2.18.5");
  EXPECT_EQ(nccl_version_text(20900), "2.9.0");
  EXPECT_EQ(nccl_version_text(2708), "2.7.8");  // NCCL_VERSION(2,7,8) under the old encoding
  EXPECT_EQ(nccl_version_text(2804), "2.8.4");
  EXPECT_EQ(nccl_version_text(-1), "unknown (-1)");
}

TEST(RuntimeVersions, CudnnUsesTenThousandsFromNineAndThousandsBefore) {
  EXPECT_EQ(cudnn_version_text(91900), "9.19.0");
  EXPECT_EQ(cudnn_version_text(90100), "9.1.0");
  EXPECT_EQ(cudnn_version_text(8907), "8.9.7");  // cuDNN 8: major·1000 + minor·100 + patch
  EXPECT_EQ(cudnn_version_text(7605), "7.6.5");
  EXPECT_EQ(cudnn_version_text(0), "unknown (0)");
}

TEST(RuntimeVersions, CublasLtIsTenThousandsMajorHundredsMinorPatch) {
  EXPECT_EQ(cublaslt_version_text(130100), "13.1.0");
  EXPECT_EQ(cublaslt_version_text(120803), "12.8.3");
  EXPECT_EQ(cublaslt_version_text(110902), "11.9.2");
  EXPECT_EQ(cublaslt_version_text(0), "unknown (0)");
}

TEST(RuntimeVersions, CuptiIsToolkitMajorMinorUpdateFromThirteenAndAnApiNumberBefore) {
  EXPECT_EQ(cupti_version_text(130001), "13.0.1");  // this toolkit's CUPTI_API_VERSION
  EXPECT_EQ(cupti_version_text(130000), "13.0.0");
  EXPECT_EQ(cupti_version_text(130100), "13.1.0");
  // Before CUDA 13 the number named an API revision, not a toolkit version (v28: CUDA 12.9 Update 1).
  EXPECT_EQ(cupti_version_text(28), "API 28");
  EXPECT_EQ(cupti_version_text(0), "unknown (0)");
}

}  // namespace
}  // namespace zb::cuda
