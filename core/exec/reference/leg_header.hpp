#pragma once
// The header every transfer leg carries (its message and fragment), so that a receiver can tell a leg
// that reached the wrong recv, and name it in errors.
#include <cstdint>
#include <span>
#include <string>

#include "core/exec/reference/transport.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {

// The header every leg carries, so that the receiver can tell a leg that reached the wrong recv.
struct LegHeader {
  std::int64_t message = -1;
  std::int64_t offset = 0, bytes = 0;  // the fragment of the message's modelled size
};

inline Bytes encode_leg(const LegHeader& header, std::span<const std::byte> data) {
  ByteWriter w;
  w.put(header);
  w.put_span<std::byte>(data);
  return w.take();
}

inline std::string fragment_text(const LegHeader& h) {
  return "message " + std::to_string(h.message) + " fragment [" + std::to_string(h.offset) + ", " +
         std::to_string(h.offset + h.bytes) + ")";
}

inline std::string leg_text(const Bytes& payload) {
  try {
    ByteReader r(payload);
    return fragment_text(r.get<LegHeader>());
  } catch (const std::exception&) {
    return "a malformed leg";
  }
}

}  // namespace zb::reference
