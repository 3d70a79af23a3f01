#include "core/exec/cuda/runtime_versions.hpp"

#include <fmt/format.h>

namespace zb::cuda {
namespace {

// major·scale + minor·100 + patch, the shape NCCL (new), cuDNN and cuBLAS share.
std::string three_part(std::uint64_t version, std::uint64_t scale) {
  return fmt::format("{}.{}.{}", version / scale, version % scale / 100, version % 100);
}

}  // namespace

std::string cuda_version_text(int version) {
  if (version <= 0) return fmt::format("unknown ({})", version);  // 0: no driver is installed
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string nccl_version_text(int version) {
  if (version <= 0) return fmt::format("unknown ({})", version);
  // NCCL_VERSION(X,Y,Z) is X·1000 + Y·100 + Z while X ≤ 2 and Y ≤ 8 (at most 2899), X·10000 + Y·100 + Z
  // from 2.9 on (at least 20900): the two ranges do not overlap.
  return three_part(static_cast<std::uint64_t>(version), version >= 10000 ? 10000 : 1000);
}

std::string cudnn_version_text(std::size_t version) {
  if (version == 0) return "unknown (0)";
  // cuDNN 9 moved from major·1000 to major·10000; every cuDNN ≤ 8 is below 9000, every 9.x at least 90000.
  return three_part(version, version >= 10000 ? 10000 : 1000);
}

std::string cublaslt_version_text(std::size_t version) {
  if (version == 0) return "unknown (0)";
  return three_part(version, 10000);
}

std::string cupti_version_text(std::uint32_t version) {
  if (version == 0) return "unknown (0)";
  // Before CUDA 13 the API version was a small counter (up to 28); from 13.0 it is xxyyzz.
  if (version < 10000) return fmt::format("API {}", version);
  return three_part(version, 10000);
}

}  // namespace zb::cuda
