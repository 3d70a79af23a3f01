#include "core/workload/lengths_file.hpp"

#include <charconv>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "core/common/error.hpp"
#include "core/config/document_limit.hpp"

namespace zb {
namespace {

constexpr const char* kFormatHint =
    "each line holds one document length in tokens, e.g. 2048; blank lines and '#' comments are allowed";

// Location of a problem in the file; line 0 = the file as a whole.
Location in_file(const std::string& file, int line = 0) {
  Location where;
  where.file = file;
  where.line = line;
  return where;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Shortens what a bad line is quoted as (a binary file's "line" can be megabytes) and shows control
// bytes such as NUL as '?', so that a message never carries them to the terminal.
std::string quote(std::string_view text) {
  constexpr std::size_t kMaxQuoted = 40;
  std::string shown(text.substr(0, kMaxQuoted));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return "'" + shown + (text.size() > kMaxQuoted ? "…'" : "'");
}

}  // namespace

std::vector<std::int64_t> read_lengths_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_input_error(in_file(file), "lengths file not found",
                      "lengths_file is resolved against the folder of the scenario file");
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw_input_error(in_file(file), "lengths file is not a regular file");
  }
  // Each length costs 8 bytes in memory, and a line holds at least two bytes: the cap bounds what the
  // read may allocate before the first line is parsed (the Wikipedia dump is 7 MB).
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxLengthsFileBytes) {
    throw_input_error(in_file(file),
                      "lengths file is " + std::to_string(size >> 20) + " MiB, over the limit of " +
                          std::to_string(kMaxLengthsFileBytes >> 20) + " MiB",
                      "sample it down (e.g. shuf -n 10000000) or use a \"distribution\" fitted to it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error(in_file(file), "cannot open lengths file for reading", "check its permissions");

  return parse_lengths(in, file);
}

std::vector<std::int64_t> parse_lengths(std::istream& in, const std::string& file) {
  std::vector<std::int64_t> lengths;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view content = line;
    if (const auto hash = content.find('#'); hash != std::string_view::npos)
      content = content.substr(0, hash);
    content = trim(content);
    if (content.empty()) continue;

    // from_chars accepts no '+', no spaces and no decimals, which is exactly the format we promise.
    std::int64_t value = 0;
    const char* end = content.data() + content.size();
    const auto [stop, parse_error] = std::from_chars(content.data(), end, value);
    const Location where = in_file(file, line_number);
    if (parse_error == std::errc::result_out_of_range) {
      throw_input_error(where, quote(content) + " is too large", kFormatHint);
    }
    if (parse_error != std::errc{} || stop != end) {
      throw_input_error(where, quote(content) + " is not an integer", kFormatHint);
    }
    if (value < 1) {
      throw_input_error(where, "length " + std::to_string(value) + " is not positive", kFormatHint);
    }
    if (value > kMaxDocumentLength) {
      throw_input_error(
          where,
          "length " + std::to_string(value) + " is longer than the longest document this build plans, " +
              std::to_string(kMaxDocumentLength) + " (2^30) tokens",
          "drop that document or split it into lines of at most " + std::to_string(kMaxDocumentLength) +
              " tokens; longer documents would overflow the causal pair counts "
              "(docs/SCENARIOS.md, \"Document lengths\")");
    }
    lengths.push_back(value);
  }
  if (in.bad()) throw_input_error(in_file(file), "read error in lengths file");
  if (lengths.empty()) throw_input_error(in_file(file), "lengths file holds no lengths", kFormatHint);
  return lengths;
}

}  // namespace zb
