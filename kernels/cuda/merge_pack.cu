// CUDA LSE merge and pack/unpack. Both are memory-bound: one warp per (row, head) for the merge (its
// lanes share the two LSE values, and lane 0 writes the new LSE after the warp has read the old one),
// one warp per row for pack/unpack with the widest vector the alignment allows.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda_attention.hpp"

namespace zb::kernels::cuda {

using detail::check_cuda;

namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void merge_partials_kernel(std::int64_t row_heads, int head_dim, float* o_a, float* lse_a,
                                      const float* o_b, const float* lse_b) {
  const std::int64_t rh = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (rh >= row_heads) return;
  const float la = lse_a[rh];
  const float lb = lse_b[rh];
  if (lb == -INFINITY) return;  // b is empty: a stays
  float* oa = o_a + rh * head_dim;
  const float* ob = o_b + rh * head_dim;
  if (la == -INFINITY) {
    // a is empty: b is the result, copied, not weighted (0·O_a would be NaN if O_a held NaN or inf,
    // which the CPU reference never reads either).
    for (int c = lane; c < head_dim; c += 32) oa[c] = ob[c];
    __syncwarp();
    if (lane == 0) lse_a[rh] = lb;
    return;
  }
  const float m = fmaxf(la, lb);
  const float ea = expf(la - m);
  const float eb = expf(lb - m);
  const float sum = ea + eb;
  const float merged = m + logf(sum);
  const float wa = ea / sum;
  const float wb = eb / sum;
  for (int c = lane; c < head_dim; c += 32) oa[c] = wa * oa[c] + wb * ob[c];
  __syncwarp();
  if (lane == 0) lse_a[rh] = merged;
}

// Copies rows between the packed buffer and the contiguous one; Word is the copy unit (16, 8, 4 or 1
// bytes). Contiguous row r belongs to range i with starts[i] ≤ r < starts[i+1] (binary search).
template <typename Word>
__global__ void copy_rows_kernel(const std::int64_t* packed_rows, const std::int64_t* starts, int range_count,
                                 std::int64_t total_rows, std::int64_t row_words, const Word* source,
                                 Word* dest, bool to_contiguous) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       row < total_rows; row += warps) {
    int low = 0, high = range_count - 1;  // last range whose start ≤ row
    while (low < high) {
      const int mid = (low + high + 1) / 2;
      if (starts[mid] <= row)
        low = mid;
      else
        high = mid - 1;
    }
    const std::int64_t packed_row = packed_rows[low] + (row - starts[low]);
    const std::int64_t src_row = to_contiguous ? packed_row : row;
    const std::int64_t dst_row = to_contiguous ? row : packed_row;
    for (std::int64_t w = lane; w < row_words; w += 32)
      dest[dst_row * row_words + w] = source[src_row * row_words + w];
  }
}

}  // namespace

Status merge_partials(std::int64_t rows, int heads, int head_dim, float* o_a, float* lse_a, const float* o_b,
                      const float* lse_b, Stream stream) {
  constexpr std::string_view entry = "merge_partials";
  if (rows < 0 || heads <= 0 || head_dim <= 0)
    return Status::failure(std::string(entry) + ": rows = " + std::to_string(rows) +
                           ", heads = " + std::to_string(heads) + ", head_dim = " + std::to_string(head_dim) +
                           " are not valid");
  if (rows == 0) return Status::success();
  for (Status s :
       {detail::check_aligned(entry, "o_a", o_a, 4), detail::check_aligned(entry, "lse_a", lse_a, 4),
        detail::check_aligned(entry, "o_b", o_b, 4), detail::check_aligned(entry, "lse_b", lse_b, 4)}) {
    if (!s) return s;
  }
  const std::int64_t row_heads = rows * heads;
  const dim3 grid(static_cast<unsigned>((row_heads + kWarpsPerBlock - 1) / kWarpsPerBlock));
  const dim3 block(kWarpsPerBlock * 32);
  merge_partials_kernel<<<grid, block, 0, stream>>>(row_heads, head_dim, o_a, lse_a, o_b, lse_b);
  return check_cuda(cudaGetLastError(), entry,
                    "cudaGetLastError after " + detail::launch_text("merge_partials_kernel", grid, block, 0));
}

struct RowCopySchedule::Impl {
  std::size_t row_bytes = 0;
  std::int64_t total_rows = 0;
  int range_count = 0;
  std::int64_t* packed_rows = nullptr;  // device: first packed row of each non-empty range
  std::int64_t* starts = nullptr;       // device: first contiguous row of each non-empty range
  ~Impl() {
    static_cast<void>(cudaFree(packed_rows));
    static_cast<void>(cudaFree(starts));
  }
};

RowCopySchedule::RowCopySchedule() : impl_(std::make_unique<Impl>()) {}
RowCopySchedule::~RowCopySchedule() = default;
RowCopySchedule::RowCopySchedule(RowCopySchedule&&) noexcept = default;
RowCopySchedule& RowCopySchedule::operator=(RowCopySchedule&&) noexcept = default;
std::int64_t RowCopySchedule::total_rows() const noexcept {
  return impl_ ? impl_->total_rows : 0;
}

Status RowCopySchedule::build(std::span<const RowRange> ranges, std::size_t row_bytes,
                              std::int64_t packed_rows, bool for_unpack) {
  constexpr std::string_view entry = "RowCopySchedule::build";
  const std::int64_t rows = kernels::total_rows(ranges);
  if (Status s = validate_row_ranges(entry, ranges, row_bytes, packed_rows, rows, for_unpack); !s) return s;
  std::vector<std::int64_t> firsts, starts;
  std::int64_t start = 0;
  for (const RowRange& r : ranges) {
    if (r.rows > 0) {  // empty ranges would break the binary search's "last start ≤ row"
      firsts.push_back(r.packed_row);
      starts.push_back(start);
    }
    start += r.rows;
  }
  auto fresh = std::make_unique<Impl>();
  fresh->row_bytes = row_bytes;
  fresh->total_rows = rows;
  fresh->range_count = static_cast<int>(firsts.size());
  if (!firsts.empty()) {
    const std::size_t bytes = firsts.size() * sizeof(std::int64_t);
    if (Status s = check_cuda(cudaMalloc(&fresh->packed_rows, bytes), entry, "cudaMalloc(packed_rows)"); !s)
      return s;
    if (Status s = check_cuda(cudaMalloc(&fresh->starts, bytes), entry, "cudaMalloc(starts)"); !s) return s;
    if (Status s = check_cuda(cudaMemcpy(fresh->packed_rows, firsts.data(), bytes, cudaMemcpyHostToDevice),
                              entry, "cudaMemcpy(packed_rows)");
        !s)
      return s;
    if (Status s = check_cuda(cudaMemcpy(fresh->starts, starts.data(), bytes, cudaMemcpyHostToDevice), entry,
                              "cudaMemcpy(starts)");
        !s)
      return s;
  }
  impl_ = std::move(fresh);
  return Status::success();
}

namespace {

template <typename Word>
Status launch_copy(const RowCopySchedule::Impl& s, const void* source, void* dest, bool to_contiguous,
                   std::string_view entry, cudaStream_t stream) {
  const std::int64_t row_words = static_cast<std::int64_t>(s.row_bytes / sizeof(Word));
  const std::int64_t blocks_needed = (s.total_rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(blocks_needed, 65535)));
  const dim3 block(kWarpsPerBlock * 32);
  copy_rows_kernel<Word><<<grid, block, 0, stream>>>(s.packed_rows, s.starts, s.range_count, s.total_rows,
                                                     row_words, static_cast<const Word*>(source),
                                                     static_cast<Word*>(dest), to_contiguous);
  return check_cuda(
      cudaGetLastError(), entry,
      "cudaGetLastError after " +
          detail::launch_text("copy_rows_kernel<" + std::to_string(sizeof(Word)) + "-byte words>", grid,
                              block, 0));
}

Status copy_rows(const RowCopySchedule& schedule, const void* source, void* dest, bool to_contiguous,
                 std::string_view entry, cudaStream_t stream) {
  const RowCopySchedule::Impl* s = schedule.impl();
  if (s == nullptr) return Status::failure(std::string(entry) + ": the schedule was moved from");
  if (s->total_rows == 0) return Status::success();
  if (source == nullptr || dest == nullptr) return Status::failure(std::string(entry) + ": a buffer is null");
  // The widest word that divides the row size and both buffer addresses.
  const auto fits = [&](std::size_t word) {
    return s->row_bytes % word == 0 && reinterpret_cast<std::uintptr_t>(source) % word == 0 &&
           reinterpret_cast<std::uintptr_t>(dest) % word == 0;
  };
  if (fits(16)) return launch_copy<uint4>(*s, source, dest, to_contiguous, entry, stream);
  if (fits(8)) return launch_copy<std::uint64_t>(*s, source, dest, to_contiguous, entry, stream);
  if (fits(4)) return launch_copy<std::uint32_t>(*s, source, dest, to_contiguous, entry, stream);
  return launch_copy<unsigned char>(*s, source, dest, to_contiguous, entry, stream);
}

}  // namespace

Status pack_rows(const RowCopySchedule& schedule, const void* packed, void* contiguous, Stream stream) {
  return copy_rows(schedule, packed, contiguous, true, "pack_rows", stream);
}

Status unpack_rows(const RowCopySchedule& schedule, const void* contiguous, void* packed, Stream stream) {
  return copy_rows(schedule, contiguous, packed, false, "unpack_rows", stream);
}

}  // namespace zb::kernels::cuda
