#pragma once
// The versions a cuda run reports in its provenance, as the libraries answer them at run time (the
// driver and the libraries this process loaded, not the headers the build saw), decoded from each
// library's integer into a dotted version. Pure functions on the integers, so they are tested on machines
// without a GPU; the asking is runtime_facts.cpp's. Each encoding is the one its header documents
// (/usr/local/cuda/include):
//   cudaDriverGetVersion, cudaRuntimeGetVersion  1000·major + 10·minor             13000  → "13.0"
//   ncclGetVersion                               NCCL_VERSION(X,Y,Z): X·10000 + Y·100 + Z, but
//                                                X·1000 + Y·100 + Z up to 2.8 (nccl.h)  22703 → "2.27.3"
//   cudnnGetVersion                              cuDNN ≥ 9: major·10000 + minor·100 + patch
//   (cudnn_version.h),
//                                                cuDNN ≤ 8: major·1000 + minor·100 + patch       91900 →
//                                                "9.19.0"
//   cublasLtGetVersion                           major·10000 + minor·100 + patch (CUBLAS_VERSION)
//                                                                                   130100 → "13.1.0"
//   cuptiGetVersion                              from CUDA 13: xxyyzz (toolkit major, minor, CUPTI's own
//                                                update); before: a plain API number (v28 = CUDA 12.9
//                                                Update 1) that names no toolkit version (cupti_version.h)
//                                                                                   130001 → "13.0.1",
//                                                                                   28 → "API 28"
#include <cstdint>
#include <string>

namespace zb::cuda {

[[nodiscard]] std::string cuda_version_text(int version);  // driver and runtime
[[nodiscard]] std::string nccl_version_text(int version);
[[nodiscard]] std::string cudnn_version_text(std::size_t version);
[[nodiscard]] std::string cublaslt_version_text(std::size_t version);
[[nodiscard]] std::string cupti_version_text(std::uint32_t version);

}  // namespace zb::cuda
