#include "reports/terminal_text.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace zb::reports {
namespace {

// The length of the UTF-8 sequence starting at text[i] and its code point, or 0 when the bytes there
// are not well-formed UTF-8 (a stray continuation byte, a truncated, overlong or surrogate sequence).
// A lone byte 0x9B is CSI on terminals that read 8-bit controls, so malformed bytes must not pass either.
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& code_point) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  std::uint32_t minimum = 0;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    minimum = 0x80;
    code_point = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    minimum = 0x800;
    code_point = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    minimum = 0x10000;
    code_point = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte & 0xC0u) != 0x80u) return 0;
    code_point = (code_point << 6) | (byte & 0x3Fu);
  }
  if (code_point < minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
    return 0;
  return length;
}

// C1 controls act like ESC sequences; the bidirectional overrides and isolates reorder what a line
// shows ("Trojan source"), so a label could display as something it is not.
bool is_unsafe_code_point(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string escaped(std::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      if (keep_layout && (c == '\n' || c == '\t')) {
        out += c;
      } else {
        out += fmt::format("\\x{:02x}", byte);
      }
      ++i;
      continue;
    }
    std::uint32_t code_point = 0;
    const std::size_t length = utf8_sequence(text, i, code_point);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", byte);
      ++i;
    } else if (is_unsafe_code_point(code_point)) {
      out += fmt::format("\\u{:04x}", code_point);
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string terminal_field(std::string_view text) {
  return escaped(text, false);
}

std::string terminal_text(std::string_view text) {
  return escaped(text, true);
}

}  // namespace zb::reports
