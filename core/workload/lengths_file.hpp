#pragma once
// Reading a lengths file: one positive integer (a document length in tokens) per line. Blank lines are
// skipped and '#' starts a comment, on its own line or after the number. Real length dumps are large
// (the Wikipedia file has a million lines), so the reader is a single pass without regular expressions.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace zb {

// 256 MiB: about 30 million lengths, far more than a batch draws from, and 8 bytes each in memory.
inline constexpr std::uintmax_t kMaxLengthsFileBytes = std::uintmax_t{256} << 20;

// Throws zb::Error (bad input) when the file is missing or unreadable (naming the file), when a line is
// not a positive integer or is longer than kMaxDocumentLength (naming the file and the 1-based line number
// in Location.file / Location.line),
// when the file holds no lengths at all, or when it is larger than kMaxLengthsFileBytes.
[[nodiscard]] std::vector<std::int64_t> read_lengths_file(const std::filesystem::path& path);

// The line-by-line part of read_lengths_file, on any stream (the fuzz target feeds it bytes in memory).
// `file_for_messages` names the source in Location.file; the size cap is the caller's to apply.
[[nodiscard]] std::vector<std::int64_t> parse_lengths(std::istream& in, const std::string& file_for_messages);

}  // namespace zb
