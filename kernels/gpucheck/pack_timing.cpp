// The GPU pack/unpack round trip and the forward timing (see attention_check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "core/common/rng.hpp"
#include "kernels/gpucheck/attention_check.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/timing.hpp"

namespace zb::kernels::gpucheck {

CheckResult check_pack_round_trip(std::uint64_t seed) {
  Rng rng(seed, 1);
  const std::int64_t packed_rows = 1000;
  // Row sizes that select each copy width: 16-byte words, 8, 4 and single bytes.
  for (std::size_t row_bytes : {std::size_t{512}, std::size_t{24}, std::size_t{12}, std::size_t{7}}) {
    std::vector<RowRange> ranges;
    for (std::int64_t row = 0; row < packed_rows;) {
      const auto rows = static_cast<std::int64_t>(
          rng.below(static_cast<std::uint64_t>(std::min<std::int64_t>(90, packed_rows - row)) + 1));
      if (rng.below(3) != 0) ranges.push_back({row, rows});
      row += rows == 0 ? 1 : rows;
    }
    for (std::size_t i = ranges.size(); i > 1; --i) std::swap(ranges[i - 1], ranges[rng.below(i)]);
    std::vector<unsigned char> packed(static_cast<std::size_t>(packed_rows) * row_bytes);
    for (auto& b : packed) b = static_cast<unsigned char>(rng.next_u64());
    const std::int64_t rows = total_rows(ranges);

    DeviceBuffer source, contiguous, restored;
    cuda::RowCopySchedule pack_schedule, unpack_schedule;
    for (Status st : {source.allocate(packed.size(), "packed"),
                      contiguous.allocate(static_cast<std::size_t>(rows) * row_bytes, "contiguous"),
                      restored.allocate(packed.size(), "restored"), source.upload(packed.data(), "packed"),
                      restored.poison("restored"), pack_schedule.build(ranges, row_bytes, packed_rows, false),
                      unpack_schedule.build(ranges, row_bytes, packed_rows, true),
                      cuda::pack_rows(pack_schedule, source.get(), contiguous.get(), nullptr),
                      cuda::unpack_rows(unpack_schedule, contiguous.get(), restored.get(), nullptr),
                      cuda::synchronize(nullptr, "check_pack_round_trip")}) {
      if (!st) return {false, 0, 0, st.message()};
    }
    std::vector<unsigned char> back(packed.size()), gathered(static_cast<std::size_t>(rows) * row_bytes);
    if (Status st = restored.download(back.data(), "restored"); !st) return {false, 0, 0, st.message()};
    if (Status st = contiguous.download(gathered.data(), "contiguous"); !st)
      return {false, 0, 0, st.message()};
    std::size_t offset = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const std::size_t begin = static_cast<std::size_t>(ranges[i].packed_row) * row_bytes;
      const std::size_t bytes = static_cast<std::size_t>(ranges[i].rows) * row_bytes;
      if (std::memcmp(back.data() + begin, packed.data() + begin, bytes) != 0 ||
          std::memcmp(gathered.data() + offset, packed.data() + begin, bytes) != 0)
        return {false, 0, 0,
                "row_bytes " + std::to_string(row_bytes) + ": range " + std::to_string(i) +
                    " did not round-trip bit for bit"};
      offset += bytes;
    }
  }
  return {true, 0, 0, ""};
}

Timing time_causal_forward(std::int64_t sequence_length, int heads, int head_dim) {
  Timing timing;
  const AttentionShape shape{heads, heads, head_dim, sequence_length, sequence_length, sequence_length};
  const std::vector<AttentionBlockDesc> blocks{
      {0, sequence_length, 0, sequence_length, 0, 0, AttentionMask::causal, 0}};
  const std::size_t elements =
      static_cast<std::size_t>(sequence_length) * static_cast<std::size_t>(heads * head_dim);
  DeviceBuffer q, k, v, o, lse;
  for (Status st :
       {q.allocate(elements * 2, "q"), k.allocate(elements * 2, "k"), v.allocate(elements * 2, "v"),
        o.allocate(elements * 2, "o"),
        lse.allocate(static_cast<std::size_t>(sequence_length) * heads * 4, "lse"),
        fill_uniform_bf16(q, 42, "q"), fill_uniform_bf16(k, 43, "k"), fill_uniform_bf16(v, 44, "v")}) {
    if (!st) return {0, 0, st.message()};
  }
  cuda::AttentionSchedule schedule;
  if (Status st = schedule.build(shape, blocks); !st) return {0, 0, st.message()};
  const cuda::AttentionTensors tensors{
      cuda::ElementType::bf16,       q.get(), k.get(), v.get(), cuda::ElementType::bf16, o.get(),
      static_cast<float*>(lse.get())};
  const double flops = 4.0 * static_cast<double>(sequence_length) * static_cast<double>(sequence_length) *
                       heads * head_dim / 2.0;
  // Warm-up, then the median of kTimedRuns CUDA-event runs (kernels/gpucheck/timing.hpp). Q, K, V of 8k
  // tokens and more exceed the L2, so one operand set.
  MedianTiming t;
  if (Status st = median_ms([&](int) { return cuda::attention_forward(schedule, tensors, nullptr); },
                            "time_causal_forward", t);
      !st)
    return {0, 0, st.message()};
  timing.milliseconds = t.median_ms;
  timing.tflops = flops / (timing.milliseconds * 1e-3) / 1e12;
  timing.timed_runs = t.timed_runs;
  return timing;
}

}  // namespace zb::kernels::gpucheck
