#pragma once
// CUDA launchers for the attention kernels: host functions that check their arguments, launch, check the
// launch, and return a Status naming the failed argument or CUDA call. Nothing outside kernels/ writes
// `<<<…>>>`; this header needs no CUDA headers (the stream is forward-declared), but its users link
// zb_kernels_cuda. Shapes, descriptors and semantics are those of kernels/attention.hpp and
// kernels/pack.hpp; pointers are device pointers.
//
// Descriptor lists are uploaded once into a schedule (a plan's blocks are the same for every layer), and
// each launch covers the whole list in ONE kernel: the schedule holds a tile → descriptor map, so no
// launch waits on the host. A schedule may be used on any stream; launches that share one schedule only
// read it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "kernels/attention.hpp"
#include "kernels/pack.hpp"
#include "kernels/status.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace zb::kernels::cuda {

using Stream = CUstream_st*;  // nullptr is the legacy default stream

enum class ElementType { f32, bf16, f16 };

// Success when at least one CUDA device is usable; otherwise the reason (no driver, cudaGetDeviceCount's
// error, zero devices). Tests skip with this message.
Status device_available();

// The attention descriptors and their tile map, on the device. Built once, launched many times.
class AttentionSchedule {
 public:
  AttentionSchedule();
  ~AttentionSchedule();
  AttentionSchedule(AttentionSchedule&&) noexcept;
  AttentionSchedule& operator=(AttentionSchedule&&) noexcept;
  AttentionSchedule(const AttentionSchedule&) = delete;
  AttentionSchedule& operator=(const AttentionSchedule&) = delete;

  // Validates and uploads (a synchronous copy: this is plan-time work). Head dims 64 and 128 only.
  Status build(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks);

  [[nodiscard]] const AttentionShape& shape() const noexcept;
  [[nodiscard]] std::int64_t tile_count() const noexcept;  // CTAs per head of one launch

  struct Impl;
  [[nodiscard]] const Impl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

struct AttentionTensors {
  ElementType input_type = ElementType::bf16;  // q, k, v: bf16 or f16
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  ElementType output_type = ElementType::f32;  // o: f32, or the input type
  void* o = nullptr;
  float* lse = nullptr;  // always f32
};

// Attention forward over every block of the schedule: bf16/f16 in, fp32 accumulation on tensor cores
// (mma.sync m16n8k16), online softmax, O and LSE out. Asynchronous on `stream`.
Status attention_forward(const AttentionSchedule& schedule, const AttentionTensors& tensors, Stream stream);

// In-place LSE merge of two fp32 partial results (semantics of kernels::merge_partials).
Status merge_partials(std::int64_t rows, int heads, int head_dim, float* o_a, float* lse_a, const float* o_b,
                      const float* lse_b, Stream stream);

// The row ranges of a pack or unpack, on the device. Built once, launched many times.
class RowCopySchedule {
 public:
  RowCopySchedule();
  ~RowCopySchedule();
  RowCopySchedule(RowCopySchedule&&) noexcept;
  RowCopySchedule& operator=(RowCopySchedule&&) noexcept;
  RowCopySchedule(const RowCopySchedule&) = delete;
  RowCopySchedule& operator=(const RowCopySchedule&) = delete;

  // `packed_rows`: rows of the packed buffer, for the bounds check. `for_unpack` also rejects overlaps.
  Status build(std::span<const RowRange> ranges, std::size_t row_bytes, std::int64_t packed_rows,
               bool for_unpack);

  [[nodiscard]] std::int64_t total_rows() const noexcept;

  struct Impl;
  [[nodiscard]] const Impl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// Gather packed → contiguous and scatter contiguous → packed. Asynchronous on `stream`.
Status pack_rows(const RowCopySchedule& schedule, const void* packed, void* contiguous, Stream stream);
Status unpack_rows(const RowCopySchedule& schedule, const void* contiguous, void* packed, Stream stream);

// Host helper for the gpu check and tests: wait for `stream` and report any asynchronous error.
Status synchronize(Stream stream, std::string_view what);

}  // namespace zb::kernels::cuda
