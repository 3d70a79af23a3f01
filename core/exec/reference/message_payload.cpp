#include "core/exec/reference/message_payload.hpp"

#include <algorithm>
#include <cstring>

#include "core/common/error.hpp"

namespace zb::reference {
namespace {

__extension__ using Wide = unsigned __int128;

std::size_t store_index(lower::Tensor tensor) {
  switch (tensor) {
    case lower::Tensor::Q:
      return 0;
    case lower::Tensor::K:
      return 1;
    case lower::Tensor::V:
      return 2;
    case lower::Tensor::O:
      return 3;
    case lower::Tensor::dQ:
      return 4;
    case lower::Tensor::dK:
      return 5;
    case lower::Tensor::dV:
      return 6;
    case lower::Tensor::dO:
      return 7;
    default:
      break;
  }
  throw Error(ExitCode::runtime, Location{},
              std::string("the reference backend holds no rows of tensor ") + lower::to_string(tensor) +
                  " (it runs the attention layer only: Q, K, V, O and their gradients)");
}

bool kv_wide(lower::Tensor tensor) {
  const std::size_t i = store_index(tensor);
  return i == 1 || i == 2 || i == 5 || i == 6;
}

}  // namespace

int row_width(const AttentionDims& dims, lower::Tensor tensor) {
  return kv_wide(tensor) ? dims.kv_width() : dims.q_width();
}

TensorRows::TensorRows(const AttentionDims& dims)
    : stores_{RowStore(dims.q_width()),  RowStore(dims.kv_width()), RowStore(dims.kv_width()),
              RowStore(dims.q_width()),  RowStore(dims.q_width()),  RowStore(dims.kv_width()),
              RowStore(dims.kv_width()), RowStore(dims.q_width())} {}

RowStore& TensorRows::of(lower::Tensor tensor) {
  return stores_[store_index(tensor)];
}
const RowStore& TensorRows::of(lower::Tensor tensor) const {
  return stores_[store_index(tensor)];
}

std::uint64_t payload_bytes(const lower::Message& message, const AttentionDims& dims) {
  std::uint64_t bytes = 0;
  for (const lower::Slice& s : message.slices) {
    if (s.rows() > 0)
      bytes += static_cast<std::uint64_t>(s.rows()) * static_cast<std::uint64_t>(row_width(dims, s.tensor)) *
               sizeof(float);
  }
  return bytes;
}

std::optional<std::int64_t> gather_rows(std::span<const TensorRows* const> sources, lower::Tensor tensor,
                                        int seq, std::int64_t begin, std::int64_t end, std::span<float> out) {
  if (sources.empty()) return begin < end ? std::optional<std::int64_t>(begin) : std::nullopt;
  const auto width = static_cast<std::size_t>(sources.front()->of(tensor).width());
  std::int64_t t = begin;
  while (t < end) {
    std::int64_t run = 0;
    const RowStore* from = nullptr;
    for (const TensorRows* source : sources) {
      run = source->of(tensor).present_run(seq, t, end);
      if (run > 0) {
        from = &source->of(tensor);
        break;
      }
    }
    if (from == nullptr) return t;
    const auto rows = from->rows(seq, t, t + run);
    std::copy(rows.begin(), rows.end(),
              out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(t - begin) * width));
    t += run;
  }
  return std::nullopt;
}

std::optional<MissingRow> pack_payload(const lower::Message& message, const AttentionDims& dims,
                                       std::span<const TensorRows* const> sources, Bytes& out) {
  std::vector<float> rows;
  for (std::size_t i = 0; i < message.slices.size(); ++i) {
    const lower::Slice& s = message.slices[i];
    if (s.rows() <= 0) continue;
    rows.resize(static_cast<std::size_t>(s.rows()) * static_cast<std::size_t>(row_width(dims, s.tensor)));
    if (const auto missing = gather_rows(sources, s.tensor, s.seq, s.begin, s.end, rows))
      return MissingRow{i, *missing};
    const auto at = out.size();
    out.resize(at + rows.size() * sizeof(float));
    std::memcpy(out.data() + at, rows.data(), rows.size() * sizeof(float));
  }
  return std::nullopt;
}

std::string unpack_payload(const lower::Message& message, const AttentionDims& dims,
                           std::span<const std::byte> payload, const std::vector<layout::Sequence>& sequences,
                           TensorRows& into) {
  const std::uint64_t expected = payload_bytes(message, dims);
  if (payload.size() != expected) {
    return "its payload holds " + std::to_string(payload.size()) + " bytes, its slices " +
           std::to_string(expected);
  }
  std::size_t at = 0;
  std::vector<float> rows;
  for (const lower::Slice& s : message.slices) {
    if (s.rows() <= 0) continue;
    if (s.seq < 0 || static_cast<std::size_t>(s.seq) >= sequences.size() || s.begin < 0 ||
        s.end > sequences[static_cast<std::size_t>(s.seq)].length) {
      return "its slice " + slice_text(s) + " is outside the plan's sequences";
    }
    rows.resize(static_cast<std::size_t>(s.rows()) * static_cast<std::size_t>(row_width(dims, s.tensor)));
    std::memcpy(rows.data(), payload.data() + at, rows.size() * sizeof(float));
    at += rows.size() * sizeof(float);
    into.of(s.tensor).put(s.seq, s.begin, s.end, rows);
  }
  return {};
}

std::string slice_text(const lower::Slice& slice) {
  return "sequence " + std::to_string(slice.seq) + " tokens [" + std::to_string(slice.begin) + ", " +
         std::to_string(slice.end) + ") of " + lower::to_string(slice.tensor);
}

}  // namespace zb::reference
