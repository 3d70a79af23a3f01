// Host side of the CUDA attention: device discovery, the schedule (validation, tile map, upload) and
// the attention_forward launcher's argument checks.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cuda/attention_schedule.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace zb::kernels::cuda {

using detail::check_cuda;

Status device_available() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return Status::failure(std::string("no usable CUDA device: cudaGetDeviceCount failed: ") +
                           cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ")");
  if (count == 0) return Status::failure("no usable CUDA device: cudaGetDeviceCount reported 0 devices");
  int device = 0;
  int major = 0;
  if (Status s = check_cuda(cudaGetDevice(&device), "device_available", "cudaGetDevice"); !s) return s;
  if (Status s = check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                            "device_available", "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
      !s)
    return s;
  // The kernels are built for sm_90 with PTX for newer GPUs; older GPUs cannot run them.
  if (major < 9)
    return Status::failure("no usable CUDA device: device " + std::to_string(device) +
                           " has compute capability " + std::to_string(major) +
                           ".x, the kernels need 9.0 or newer");
  return Status::success();
}

Status synchronize(Stream stream, std::string_view what) {
  return check_cuda(cudaStreamSynchronize(stream), what, "cudaStreamSynchronize");
}

AttentionSchedule::Impl::~Impl() {
  // Errors cannot be reported from a destructor; a failed free after a sticky error changes nothing.
  static_cast<void>(cudaFree(blocks));
  static_cast<void>(cudaFree(tiles));
}

AttentionSchedule::AttentionSchedule() : impl_(std::make_unique<Impl>()) {}
AttentionSchedule::~AttentionSchedule() = default;
AttentionSchedule::AttentionSchedule(AttentionSchedule&&) noexcept = default;
AttentionSchedule& AttentionSchedule::operator=(AttentionSchedule&&) noexcept = default;

const AttentionShape& AttentionSchedule::shape() const noexcept {
  return impl_->shape;
}
std::int64_t AttentionSchedule::tile_count() const noexcept {
  return impl_->tile_count;
}

Status AttentionSchedule::build(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks) {
  constexpr std::string_view entry = "AttentionSchedule::build";
  if (Status s = validate_attention(entry, shape, blocks); !s) return s;
  if (shape.head_dim != 64 && shape.head_dim != 128)
    return Status::failure(std::string(entry) + ": head_dim = " + std::to_string(shape.head_dim) +
                           " is not supported by the CUDA kernel (64 or 128)");
  if (shape.heads > 65535)
    return Status::failure(std::string(entry) + ": heads = " + std::to_string(shape.heads) +
                           " exceeds 65535");

  std::vector<detail::DeviceBlock> device_blocks;
  device_blocks.reserve(blocks.size());
  for (const AttentionBlockDesc& b : blocks)
    device_blocks.push_back({b.q_row, b.q_count, b.kv_row, b.kv_count, b.q_position, b.kv_position, b.out_row,
                             b.mask == AttentionMask::causal ? 1 : 0});
  struct TileWork {
    std::int64_t key_tiles;
    detail::DeviceTile tile;
  };
  std::vector<TileWork> work;
  for (std::size_t i = 0; i < device_blocks.size(); ++i) {
    const detail::DeviceBlock& b = device_blocks[i];
    for (std::int64_t q_start = 0; q_start < b.q_count; q_start += detail::kBlockM) {
      const std::int64_t rows = std::min<std::int64_t>(detail::kBlockM, b.q_count - q_start);
      const std::int64_t keys = detail::tile_key_end(b, q_start, rows);
      if (q_start > INT32_MAX || i > INT32_MAX)
        return Status::failure(std::string(entry) + ": blocks[" + std::to_string(i) +
                               "] is too large for the tile map");
      work.push_back({(keys + detail::kBlockN - 1) / detail::kBlockN,
                      {static_cast<std::int32_t>(i), static_cast<std::int32_t>(q_start)}});
    }
  }
  if (work.size() > INT32_MAX)
    return Status::failure(std::string(entry) + ": " + std::to_string(work.size()) +
                           " tiles exceed the grid limit");
  // Longest tiles first, so the launch's tail is made of short tiles (the ties keep descriptor order).
  std::ranges::stable_sort(work,
                           [](const TileWork& a, const TileWork& b) { return a.key_tiles > b.key_tiles; });
  std::vector<detail::DeviceTile> tiles;
  tiles.reserve(work.size());
  for (const TileWork& w : work) tiles.push_back(w.tile);

  auto fresh = std::make_unique<Impl>();
  fresh->shape = shape;
  fresh->tile_count = static_cast<std::int64_t>(tiles.size());
  if (!tiles.empty()) {
    const std::size_t block_bytes = device_blocks.size() * sizeof(detail::DeviceBlock);
    const std::size_t tile_bytes = tiles.size() * sizeof(detail::DeviceTile);
    if (Status s = check_cuda(cudaMalloc(&fresh->blocks, block_bytes), entry, "cudaMalloc(blocks)"); !s)
      return s;
    if (Status s = check_cuda(cudaMalloc(&fresh->tiles, tile_bytes), entry, "cudaMalloc(tiles)"); !s)
      return s;
    if (Status s =
            check_cuda(cudaMemcpy(fresh->blocks, device_blocks.data(), block_bytes, cudaMemcpyHostToDevice),
                       entry, "cudaMemcpy(blocks)");
        !s)
      return s;
    if (Status s = check_cuda(cudaMemcpy(fresh->tiles, tiles.data(), tile_bytes, cudaMemcpyHostToDevice),
                              entry, "cudaMemcpy(tiles)");
        !s)
      return s;
  }
  impl_ = std::move(fresh);
  return Status::success();
}

Status attention_forward(const AttentionSchedule& schedule, const AttentionTensors& tensors, Stream stream) {
  constexpr std::string_view entry = "attention_forward";
  const AttentionSchedule::Impl* impl = schedule.impl();
  if (impl == nullptr) return Status::failure(std::string(entry) + ": the schedule was moved from");
  if (impl->tile_count == 0) return Status::success();  // nothing to compute (also: never built)
  if (tensors.input_type != ElementType::bf16 && tensors.input_type != ElementType::f16)
    return Status::failure(std::string(entry) + ": input_type must be bf16 or f16");
  if (tensors.output_type != ElementType::f32 && tensors.output_type != tensors.input_type)
    return Status::failure(std::string(entry) + ": output_type must be f32 or the input type");
  for (Status s :
       {detail::check_aligned(entry, "q", tensors.q, 16), detail::check_aligned(entry, "k", tensors.k, 16),
        detail::check_aligned(entry, "v", tensors.v, 16), detail::check_aligned(entry, "o", tensors.o, 16),
        detail::check_aligned(entry, "lse", tensors.lse, 4)}) {
    if (!s) return s;
  }
  return tensors.input_type == ElementType::bf16 ? detail::launch_attention_bf16(*impl, tensors, stream)
                                                 : detail::launch_attention_f16(*impl, tensors, stream);
}

}  // namespace zb::kernels::cuda
