#include "core/lower/payload_fragment.hpp"

#include <algorithm>

namespace zb::lower {

ByteRange payload_fragment(const Message& message, std::int64_t payload_bytes, std::int64_t offset,
                           std::int64_t bytes) {
  if (message.bytes <= 0) return {0, payload_bytes};
  // floor(payload · modelled / total) in 128 bits: a payload of gigabytes times an offset of gigabytes
  // overflows 64 bits. Monotone, 0 at 0 and the whole payload at the message's end.
  __extension__ using Wide = __int128;
  const auto at = [&](std::int64_t modelled) {
    const auto part = static_cast<Wide>(std::clamp<std::int64_t>(modelled, 0, message.bytes));
    return static_cast<std::int64_t>(static_cast<Wide>(payload_bytes) * part / message.bytes);
  };
  return {at(offset), at(offset + bytes)};
}

}  // namespace zb::lower
