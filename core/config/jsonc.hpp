#pragma once
// JSON with comments ("JSONC"): scenario files may carry `//` and `/* */` comments. Comments are blanked
// out (replaced by spaces, newlines kept) so that every line and column nlohmann reports still points
// into the file as the user wrote it. Input that could exhaust memory or the stack is refused up front.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace zb {

inline constexpr std::size_t max_jsonc_bytes = 16u * 1024u * 1024u;  // 16 MiB: scenarios are a few KiB
inline constexpr int max_jsonc_depth = 64;  // nesting of objects and arrays; scenarios need about 4

// Returns `text` with comments replaced by spaces (newlines inside block comments are kept). Comment
// markers inside strings are left alone. Throws zb::Error (exit 2) for an unterminated block comment,
// naming its line and column in `file_for_messages`.
[[nodiscard]] std::string strip_jsonc_comments(std::string_view text,
                                               const std::filesystem::path& file_for_messages);

// Parses JSONC. Throws zb::Error (exit 2) naming the file, line and column for a syntax error, and for
// input over `max_bytes`, nesting deeper than max_jsonc_depth, or a key repeated in one object.
// `max_bytes` is larger only for machine-written files (a plan JSON of a big cluster is tens of MiB).
[[nodiscard]] nlohmann::json parse_jsonc(std::string_view text,
                                         const std::filesystem::path& file_for_messages,
                                         std::size_t max_bytes = max_jsonc_bytes);

// Reads a file (refusing files over `max_bytes` before reading them) and parses it as JSONC.
[[nodiscard]] nlohmann::json read_jsonc_file(const std::filesystem::path& file,
                                             std::size_t max_bytes = max_jsonc_bytes);

// Reads a whole text file, refusing one over `max_bytes`. Throws zb::Error (exit 2) when it cannot.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& file,
                                         std::size_t max_bytes = max_jsonc_bytes);

}  // namespace zb
