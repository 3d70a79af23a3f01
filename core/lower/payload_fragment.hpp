#pragma once
// Which bytes of a message's real payload one transfer leg carries. A Program prices a message at its
// modelled size (the cost model's bytes) and splits it into legs by offset and size within that; an
// executor that moves real rows (the reference backend's fp32 rows, the cuda backend's bf16 payload in its
// correctness pass) moves the same fraction of its own payload. One rule for every backend, so the sender
// and the receiver of a leg always agree on its size.
#include <cstdint>

#include "core/lower/program.hpp"

namespace zb::lower {

// Bytes [begin, end) of a payload.
struct ByteRange {
  std::int64_t begin = 0, end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
};

// The bytes of a payload of `payload_bytes` that a leg moving [offset, offset + bytes) of the message's
// modelled size carries: the same fraction, floored at both ends (so consecutive legs tile the payload
// exactly), with offsets clamped to [0, message.bytes]. A message of modelled size 0 has one leg: the whole
// payload.
[[nodiscard]] ByteRange payload_fragment(const Message& message, std::int64_t payload_bytes,
                                         std::int64_t offset, std::int64_t bytes);

}  // namespace zb::lower
